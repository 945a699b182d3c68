#include "recon/io/hdf5_util.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"

namespace recon::io::h5 {
namespace {
std::recursive_mutex& hdf5Mutex() {
    static std::recursive_mutex m;
    return m;
}

struct ErrorCause {
    std::string top;     // the API call's own description
    std::string system;  // the operating system's reason, where a file driver gave one
};

herr_t collectCause(unsigned n, const H5E_error2_t* e, void* out) {
    auto* cause = static_cast<ErrorCause*>(out);
    if (!e->desc) return 0;
    const std::string desc = e->desc;
    if (n == 0) cause->top = desc;
    // The POSIX driver writes "..., errno = 28, error message = 'No space left on device', ...".
    const std::string marker = "error message = '";
    const auto at = desc.find(marker);
    if (at != std::string::npos && cause->system.empty()) {
        const auto end = desc.find('\'', at + marker.size());
        cause->system = desc.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
    }
    return 0;
}


// Member names HDF5 writers use for complex numbers: h5py/ours, ISMRMRD, others.
constexpr const char* kComplexNames[][2] = {{"r", "i"}, {"real", "imag"}, {"re", "im"}};

std::string memberName(hid_t type, unsigned i) {
    char* name = H5Tget_member_name(type, i);
    if (!name) return "";
    std::string s(name);
    H5free_memory(name);
    return s;
}
}  // namespace

Hdf5Session::Hdf5Session() : lock_(hdf5Mutex()) {
    H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Hdf5Session::~Hdf5Session() { H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }

std::string lastError() {
    ErrorCause cause;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collectCause, &cause);
    H5Eclear2(H5E_DEFAULT);
    return cause.system.empty() ? cause.top : cause.system;
}

std::string withCause(const std::string& what) {
    const std::string cause = lastError();
    return cause.empty() ? what : what + " (HDF5: " + cause + ")";
}

void check(herr_t status, const std::string& what) {
    if (status < 0) throw Error(withCause(what));
}

hid_t checkId(hid_t id, const std::string& what) {
    if (id < 0) throw Error(withCause(what));
    return id;
}

namespace {
std::uint64_t littleEndian(const unsigned char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// libhdf5 1.10 trusts the object sizes in a global heap collection: a free-space
// object (index 0) of size 0 makes it loop forever (the next object starts where
// this one did), and an object larger than its collection makes H5HG_read copy
// past the collection's buffer. Global heaps hold every variable-length string
// and array (ISMRMRD's acquisitions, strings written by h5py), so any file can
// carry one. Walk each collection as the library will and refuse such files
// first. Returns the offset of a bad collection, or -1.
long long findBadGlobalHeap(const unsigned char* f, std::size_t size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    std::size_t base = 0;
    while (base + 16 <= size && std::memcmp(f + base, sig, 8) != 0) base = base ? base * 2 : 512;
    if (base + 16 > size) return -1;
    const unsigned version = f[base + 8];
    const unsigned lengths = version <= 1 ? f[base + 14] : f[base + 10];
    if (lengths != 2 && lengths != 4 && lengths != 8) return -1;  // the library refuses these itself
    const std::size_t header = 8 + lengths, object_header = 8 + lengths;
    for (const unsigned char* at = f; (at = static_cast<const unsigned char*>(
                                           memmem(at, std::size_t(f + size - at), "GCOL", 4))) != nullptr;
         at += 4) {
        const std::size_t start = std::size_t(at - f);
        if (start + header > size || at[4] != 1) continue;  // the library checks the version itself
        const std::uint64_t declared = littleEndian(at + 8, int(lengths));
        const std::size_t end = std::size_t(std::min<std::uint64_t>(declared, size - start)) + start;
        std::size_t p = start + header;
        while (p < end) {
            if (p + object_header > end) break;  // trailing free space
            const unsigned index = unsigned(littleEndian(f + p, 2));
            const std::uint64_t object = littleEndian(f + p + 8, int(lengths));
            const std::uint64_t need = index > 0 ? object_header + ((object + 7) & ~std::uint64_t(7)) : object;
            // No progress (the library loops), wrapped, or running past its collection
            // (the library copies that many bytes out of the collection's buffer).
            if (need == 0 || need < object || need > end - p) return (long long)start;
            p += std::size_t(need);
        }
    }
    return -1;
}

void refuseBadGlobalHeaps(const std::string& path, const std::string& what, std::uint64_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw InputError(what + " '" + path + "': cannot be opened");
    void* map = ::mmap(nullptr, std::size_t(size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) throw InputError(what + " '" + path + "': cannot be mapped for checking");
    const long long bad = findBadGlobalHeap(static_cast<const unsigned char*>(map), std::size_t(size));
    ::munmap(map, std::size_t(size));
    if (bad >= 0)
        throw InputError(what + " '" + path + "': corrupt HDF5 global heap at byte " + std::to_string(bad) +
                         " (object sizes that would hang or overrun the HDF5 library)");
}
}  // namespace

Handle openReadOnly(const std::string& path, const std::string& what) {
    const std::uint64_t size = regularFileSize(path, what);
    if (size < 8) throw InputError(what + " '" + path + "': " + std::to_string(size) + " bytes is too short for HDF5");
    const htri_t is = H5Fis_hdf5(path.c_str());
    if (is <= 0) throw InputError(what + " '" + path + "': not an HDF5 file (no HDF5 signature)");
    refuseBadGlobalHeaps(path, what, size);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw InputError(withCause(what + " '" + path + "': cannot be opened as HDF5 (truncated or corrupt?)"));
    return Handle(f, H5Fclose);
}

Handle createFile(const std::string& path) {
    return Handle(checkId(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create HDF5 file '" + path + "'"),
                  H5Fclose);
}

Handle openReadWrite(const std::string& path) {
    return Handle(checkId(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "cannot open HDF5 file '" + path + "'"),
                  H5Fclose);
}

namespace {
// Never the name of a file on disk, which HDF5 may hold open (reading it).
std::string inMemoryName(const std::string& name) { return name + " (in memory)"; }

Handle inMemoryAccess() {
    Handle fapl(checkId(H5Pcreate(H5P_FILE_ACCESS), "file access list"), H5Pclose);
    check(H5Pset_fapl_core(fapl.get(), 1 << 20, 0), "in-memory file driver");
    return fapl;
}
}  // namespace

Handle createInMemory(const std::string& name) {
    Handle fapl = inMemoryAccess();
    return Handle(checkId(H5Fcreate(inMemoryName(name).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                          "cannot create HDF5 file '" + name + "' in memory"),
                  H5Fclose);
}

Handle openInMemory(const std::string& name, const std::string& bytes) {
    Handle fapl = inMemoryAccess();
    check(H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()), "file image");
    return Handle(checkId(H5Fopen(inMemoryName(name).c_str(), H5F_ACC_RDWR, fapl.get()),
                          "cannot open HDF5 file '" + name + "' in memory"),
                  H5Fclose);
}

std::string fileImage(hid_t file) {
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flushing the file");
    const ssize_t size = H5Fget_file_image(file, nullptr, 0);
    if (size < 0) throw Error(withCause("file image"));
    std::string bytes(std::size_t(size), '\0');
    if (H5Fget_file_image(file, bytes.data(), bytes.size()) != size) throw Error(withCause("file image"));
    return bytes;
}

bool exists(hid_t loc, const std::string& path) {
    // H5Lexists needs every intermediate link to exist, so walk the components.
    std::string prefix = path.rfind('/', 0) == 0 ? "/" : "";
    std::size_t start = prefix.size();
    while (start < path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        prefix += path.substr(start, end - start);
        if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        if (H5Oexists_by_name(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        prefix += "/";
        start = end + 1;
    }
    return true;
}

namespace {
bool objectIs(hid_t loc, const std::string& path, H5O_type_t type) {
    if (!exists(loc, path)) return false;
    H5O_info_t info;
    if (H5Oget_info_by_name(loc, path.c_str(), &info, H5P_DEFAULT) < 0) return false;
    return info.type == type;
}
}  // namespace

bool isGroup(hid_t loc, const std::string& path) { return objectIs(loc, path, H5O_TYPE_GROUP); }
bool isDataset(hid_t loc, const std::string& path) { return objectIs(loc, path, H5O_TYPE_DATASET); }

std::uint64_t Shape::elements() const {
    std::uint64_t n = 1;
    for (hsize_t d : dims)
        if (!multiplyChecked(n, d, &n)) return UINT64_MAX;
    return n;
}

std::string Shape::str() const {
    if (dims.empty()) return "a scalar";
    std::string s;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i) s += " x ";
        s += std::to_string(dims[i]);
    }
    return s;
}

Shape shapeOf(hid_t dataset, const Place& where) {
    Handle space(H5Dget_space(dataset), H5Sclose);
    if (!space.valid()) throw InputError(withCause(where.str() + ": unreadable dataspace"));
    const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
    if (cls == H5S_NULL) throw InputError(where.str() + ": dataset is empty (null dataspace)");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) throw InputError(where.str() + ": unsupported rank " + std::to_string(rank));
    Shape s;
    s.dims.resize(std::size_t(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), s.dims.data(), nullptr) < 0)
        throw InputError(withCause(where.str() + ": unreadable dimensions"));
    return s;
}

Handle openDataset(hid_t loc, const std::string& path, const Place& where) {
    if (!isDataset(loc, path)) throw InputError(where.str() + ": missing (no dataset at " + path + ")");
    const hid_t d = H5Dopen2(loc, path.c_str(), H5P_DEFAULT);
    if (d < 0) throw InputError(withCause(where.str() + ": cannot be opened"));
    return Handle(d, H5Dclose);
}

namespace {
void requireCount(hid_t dataset, const Place& where, std::uint64_t elements) {
    const Shape s = shapeOf(dataset, where);
    if (s.elements() != elements)
        throw InputError(where.str() + ": has " + s.str() + " values, expected " + std::to_string(elements));
}

// Declared sizes against what the file holds, before anything is allocated:
// contiguous data must be stored in full; compressed chunks may expand, but not
// beyond any plausible ratio (an absurd declared size in a small file).
void requirePlausibleStorage(hid_t dataset, hid_t type, const Place& where, std::uint64_t elements) {
    std::uint64_t need = 0;
    if (!multiplyChecked(elements, H5Tget_size(type), &need))
        throw InputError(where.str() + ": declared size overflows");
    Handle file(H5Iget_file_id(dataset), H5Fclose);
    hsize_t file_size = 0;
    if (!file.valid() || H5Fget_filesize(file.get(), &file_size) < 0)
        throw InputError(where.str() + ": file size unknown");
    Handle dcpl(H5Dget_create_plist(dataset), H5Pclose);
    const H5D_layout_t layout = dcpl.valid() ? H5Pget_layout(dcpl.get()) : H5D_LAYOUT_ERROR;
    const std::uint64_t stored = H5Dget_storage_size(dataset);
    if (layout == H5D_COMPACT) return;  // held in the object header: small by construction
    if (layout == H5D_CONTIGUOUS && (stored < need || stored > file_size))
        throw InputError(where.str() + ": its shape needs " + std::to_string(need) + " bytes but " +
                         std::to_string(stored) + " are stored (file of " + std::to_string(file_size) +
                         " bytes): truncated or inconsistent");
    if (layout == H5D_CHUNKED && (stored > file_size || need > 1024 * stored + (std::uint64_t(1) << 20)))
        throw InputError(where.str() + ": declares " + std::to_string(need) + " bytes of data but stores only " +
                         std::to_string(stored) + " (absurd size)");
    if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED)
        throw InputError(where.str() + ": unsupported storage layout");
}

bool isNumeric(H5T_class_t c) { return c == H5T_INTEGER || c == H5T_FLOAT; }

// The pair of member names if `type` is a two-member numeric compound we read as complex.
const char* const* complexNames(hid_t type) {
    if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return nullptr;
    if (H5Tget_size(type) > 32) return nullptr;  // two numbers; HDF5 sizes conversion buffers by it
    for (const auto& pair : kComplexNames) {
        bool found[2] = {false, false};
        for (unsigned i = 0; i < 2; ++i) {
            const std::string name = memberName(type, i);
            const H5T_class_t c = H5Tget_member_class(type, i);
            for (int j = 0; j < 2; ++j)
                if (name == pair[j] && isNumeric(c)) found[j] = true;
        }
        if (found[0] && found[1]) return pair;
    }
    return nullptr;
}
}  // namespace

bool membersInsideAndApart(hid_t compound) {
    const int n = H5Tget_nmembers(compound);
    const std::size_t size = H5Tget_size(compound);
    if (n < 0) return false;
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    for (int i = 0; i < n; ++i) {
        Handle member(H5Tget_member_type(compound, unsigned(i)), H5Tclose);
        if (!member.valid()) return false;
        const std::size_t offset = H5Tget_member_offset(compound, unsigned(i)), bytes = H5Tget_size(member.get());
        if (bytes == 0 || offset > size || bytes > size - offset) return false;
        spans.emplace_back(offset, bytes);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].first + spans[i - 1].second) return false;
    return true;
}

bool isComplexType(hid_t dataset) {
    Handle type(H5Dget_type(dataset), H5Tclose);
    return type.valid() && complexNames(type.get()) != nullptr;
}

std::vector<double> readReal(hid_t dataset, const Place& where, std::uint64_t elements) {
    Handle type(H5Dget_type(dataset), H5Tclose);
    if (!type.valid() || !isNumeric(H5Tget_class(type.get())) || H5Tget_size(type.get()) > 16)
        throw InputError(where.str() + ": has a non-numeric type (expected real numbers)");
    requireCount(dataset, where, elements);
    requirePlausibleStorage(dataset, type.get(), where, elements);
    std::vector<double> out(static_cast<std::size_t>(elements));
    if (H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
        throw InputError(withCause(where.str() + ": read failed (truncated or corrupt file?)"));
    return out;
}

ComplexArray readComplex(hid_t dataset, const Place& where, std::uint64_t elements) {
    Handle type(H5Dget_type(dataset), H5Tclose);
    if (!type.valid()) throw InputError(withCause(where.str() + ": unreadable type"));
    const H5T_class_t cls = H5Tget_class(type.get());
    if (isNumeric(cls)) {  // a real array: imaginary part zero
        const std::vector<double> re = readReal(dataset, where, elements);
        return ComplexArray(re.begin(), re.end());
    }
    const char* const* names = complexNames(type.get());
    if (!names)
        throw InputError(where.str() +
                         ": is not complex (expected a compound of two numbers named r/i, real/imag or re/im)");
    if (!membersInsideAndApart(type.get()))
        throw InputError(where.str() + ": damaged complex type (its members lie outside it or overlap)");
    requireCount(dataset, where, elements);
    requirePlausibleStorage(dataset, type.get(), where, elements);
    Handle mem(H5Tcreate(H5T_COMPOUND, sizeof(cdouble)), H5Tclose);
    check(H5Tinsert(mem.get(), names[0], 0, H5T_NATIVE_DOUBLE), "complex type");
    check(H5Tinsert(mem.get(), names[1], sizeof(double), H5T_NATIVE_DOUBLE), "complex type");
    ComplexArray out(static_cast<std::size_t>(elements));
    if (H5Dread(dataset, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
        throw InputError(withCause(where.str() + ": read failed (truncated or corrupt file?)"));
    return out;
}

bool hasAttribute(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string readStringAttribute(hid_t obj, const std::string& name, const Place& where, const std::string& fallback) {
    if (!hasAttribute(obj, name)) return fallback;
    const Place at{where.file, where.object + ", attribute '" + name + "'"};
    Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
    Handle type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID, H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) throw InputError(at.str() + ": is not a string");
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1)
        throw InputError(at.str() + ": is not a single string");
    if (H5Tis_variable_str(type.get()) > 0) {
        Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(mem.get(), H5T_VARIABLE);
        H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // HDF5 converts no character sets
        char* value = nullptr;
        if (H5Aread(attr.get(), mem.get(), &value) < 0) throw InputError(withCause(at.str() + ": unreadable"));
        std::string s = value ? value : "";
        H5free_memory(value);
        return s;
    }
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > (1u << 20)) throw InputError(at.str() + ": absurd string length");
    // Read the stored bytes as they are and remove the padding here: converting
    // to a null-terminated string of the same size drops the last character of a
    // null- or space-padded one (h5py's fixed-length np.bytes_).
    Handle mem(H5Tcopy(type.get()), H5Tclose);
    std::string s(size, '\0');
    if (!mem.valid() || H5Aread(attr.get(), mem.get(), s.data()) < 0)
        throw InputError(withCause(at.str() + ": unreadable"));
    switch (H5Tget_strpad(type.get())) {
        case H5T_STR_SPACEPAD: s.erase(s.find_last_not_of(' ') + 1); break;
        default: s.resize(std::strlen(s.c_str())); break;  // NULLTERM, NULLPAD: up to the first NUL
    }
    return s;
}

std::vector<double> readNumericAttribute(hid_t obj, const std::string& name, const Place& where,
                                         std::size_t expected_count) {
    const Place at{where.file, where.object + ", attribute '" + name + "'"};
    if (!hasAttribute(obj, name)) throw InputError(at.str() + ": missing");
    Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
    Handle type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID, H5Tclose);
    if (!type.valid() || !isNumeric(H5Tget_class(type.get()))) throw InputError(at.str() + ": is not numeric");
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (n != hssize_t(expected_count))
        throw InputError(at.str() + ": has " + std::to_string(n) + " values, expected " + std::to_string(expected_count));
    std::vector<double> v(expected_count);
    if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, v.data()) < 0) throw InputError(withCause(at.str() + ": unreadable"));
    return v;
}

void writeAttribute(hid_t obj, const std::string& name, const std::string& value) {
    if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
    // Fixed-length (null-terminated) strings: unlike variable-length ones they
    // need no global heap, the part of HDF5 1.10 least robust to damaged files.
    Handle type(checkId(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check(H5Tset_size(type.get(), value.size() + 1), "string type");
    check(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "string type");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
    Handle space(checkId(H5Screate(H5S_SCALAR), "scalar space"), H5Sclose);
    Handle attr(checkId(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        "attribute " + name),
                H5Aclose);
    check(H5Awrite(attr.get(), type.get(), value.c_str()), "attribute " + name);
}

namespace {
template <class T>
void writeNumericAttribute(hid_t obj, const std::string& name, const std::vector<T>& values, hid_t mem, hid_t file) {
    if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
    const hsize_t n = values.size();
    Handle space(checkId(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "attribute space"),
                 H5Sclose);
    Handle attr(checkId(H5Acreate2(obj, name.c_str(), file, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        "attribute " + name),
                H5Aclose);
    check(H5Awrite(attr.get(), mem, values.data()), "attribute " + name);
}
}  // namespace

void writeAttribute(hid_t obj, const std::string& name, const std::vector<double>& values) {
    writeNumericAttribute(obj, name, values, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
}

void writeAttribute(hid_t obj, const std::string& name, const std::vector<std::int64_t>& values) {
    writeNumericAttribute(obj, name, values, H5T_NATIVE_INT64, H5T_STD_I64LE);
}

Handle createGroup(hid_t loc, const std::string& name) {
    return Handle(checkId(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "group " + name),
                  H5Gclose);
}

namespace {
void writeDataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t mem, hid_t file,
                  const void* data) {
    Handle space(checkId(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "dataspace for " + name), H5Sclose);
    Handle d(checkId(H5Dcreate2(loc, name.c_str(), file, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     "dataset " + name),
             H5Dclose);
    check(H5Dwrite(d.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing dataset " + name);
}

Handle complexType(hid_t member) {
    Handle t(checkId(H5Tcreate(H5T_COMPOUND, 2 * H5Tget_size(member)), "complex type"), H5Tclose);
    check(H5Tinsert(t.get(), "r", 0, member), "complex type");
    check(H5Tinsert(t.get(), "i", H5Tget_size(member), member), "complex type");
    return t;
}
}  // namespace

void writeReal(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const double* data) {
    writeDataset(loc, name, dims, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, data);
}

void writeComplex(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const cdouble* data) {
    Handle mem = complexType(H5T_NATIVE_DOUBLE), file = complexType(H5T_IEEE_F64LE);
    writeDataset(loc, name, dims, mem.get(), file.get(), data);
}

std::string utcTimestamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace recon::io::h5
