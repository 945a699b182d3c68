#include "recon/io/bart_cfl.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"

namespace recon::io {

static_assert(std::endian::native == std::endian::little,
              "BART's .cfl files hold native floats; this reader assumes a little-endian host like BART's");

namespace {
// BART headers are a few hundred bytes; anything far larger is not a header.
constexpr std::size_t kMaxHeaderBytes = 1 << 16;
// 2^33 complex floats = 64 GiB: beyond any data set this program can reconstruct.
constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 33;
}  // namespace

std::string CflArray::describe() const {
    std::size_t last = dims.size();
    while (last > 1 && dims[last - 1] == 1) --last;
    std::string s;
    for (std::size_t i = 0; i < last; ++i) {
        if (i) s += 'x';
        s += std::to_string(dims[i]);
    }
    return s.empty() ? "1" : s;
}

std::string cflBase(const std::string& name) {
    for (const char* ext : {".cfl", ".hdr"}) {
        const std::size_t n = std::strlen(ext);
        if (name.size() > n && name.compare(name.size() - n, n, ext) == 0) return name.substr(0, name.size() - n);
    }
    return name;
}

std::vector<long> parseCflHeader(const std::string& text, const std::string& origin) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line != "# Dimensions") continue;
        if (!std::getline(in, line)) break;
        std::istringstream values(line);
        std::vector<long> dims;
        std::string token;
        while (values >> token) {
            if (token.find_first_not_of("0123456789") != std::string::npos || token.size() > 12)
                throw InputError(origin + ": dimension '" + token + "' is not a non-negative integer");
            const long v = std::stol(token);
            if (v < 1) throw InputError(origin + ": dimension " + std::to_string(dims.size()) + " is 0");
            dims.push_back(v);
            if (dims.size() > std::size_t(kBartMaxDims))
                throw InputError(origin + ": more than " + std::to_string(kBartMaxDims) + " dimensions");
        }
        if (dims.empty()) throw InputError(origin + ": '# Dimensions' is followed by no sizes");
        return dims;
    }
    throw InputError(origin + ": not a BART header (no '# Dimensions' line)");
}

CflArray readCflHeader(const std::string& name, const std::string& what) {
    const std::string base = cflBase(name);
    const std::string hdr = base + ".hdr", cfl = base + ".cfl";
    CflArray a;
    a.dims = parseCflHeader(readSmallFile(hdr, what + " header", kMaxHeaderBytes), what + " header '" + hdr + "'");
    std::uint64_t n = 1;
    for (long d : a.dims)
        if (!multiplyChecked(n, std::uint64_t(d), &n) || n > kMaxElements)
            throw InputError(what + " header '" + hdr + "': declared size " + a.describe() +
                             " is absurdly large (more than 2^33 values)");
    const std::uint64_t bytes = regularFileSize(cfl, what + " data");
    if (bytes != n * sizeof(cfloat))
        throw InputError(what + " data '" + cfl + "': " + std::to_string(bytes) + " bytes, but its header declares " +
                         a.describe() + " = " + std::to_string(n) + " complex float values (" +
                         std::to_string(n * sizeof(cfloat)) + " bytes): truncated or mismatched files");
    return a;
}

CflArray readCfl(const std::string& name, const std::string& what) {
    CflArray a = readCflHeader(name, what);
    std::uint64_t n = 1;
    for (long d : a.dims) n *= std::uint64_t(d);
    a.data.resize(std::size_t(n));
    const std::string cfl = cflBase(name) + ".cfl";
    std::ifstream in(cfl, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(a.data.data()), std::streamsize(n * sizeof(cfloat))))
        throw InputError(what + " data '" + cfl + "': read failed");
    return a;
}

void CflGroupWriter::add(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data) {
    if (dims.empty() || dims.size() > std::size_t(kBartMaxDims))
        throw Error("writeCfl: BART arrays have 1 to 16 dimensions");
    std::size_t n = 1;
    for (long d : dims) {
        if (d < 1) throw Error("writeCfl: dimension sizes must be positive");
        n *= std::size_t(d);
    }
    if (n != data.size())
        throw Error("writeCfl: " + std::to_string(data.size()) + " values for dimensions of " + std::to_string(n));
    const std::string base = cflBase(name);
    std::ostringstream header;
    header << "# Dimensions\n";
    for (int i = 0; i < kBartMaxDims; ++i) header << (i < int(dims.size()) ? dims[std::size_t(i)] : 1L) << ' ';
    header << "\n# Creator\nReconStudio\n";
    auto cfl = std::make_unique<AtomicOutput>(base + ".cfl");
    auto hdr = std::make_unique<AtomicOutput>(base + ".hdr");
    cfl->write(data.data(), data.size() * sizeof(cfloat));
    const std::string text = header.str();
    hdr->write(text.data(), text.size());
    outputs_.push_back(std::move(cfl));  // data before header: the order of the renames
    outputs_.push_back(std::move(hdr));
}

void CflGroupWriter::commit() {
    std::vector<AtomicOutput*> all;
    for (auto& o : outputs_) all.push_back(o.get());
    commitAll(all);
}

void writeCfl(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data) {
    CflGroupWriter writer;
    writer.add(name, dims, data);
    writer.commit();
}

void writeCflImage(const std::string& name, const Grid& grid, const ComplexArray& image) {
    if (image.size() != grid.voxels())
        throw Error("writeCflImage: image has " + std::to_string(image.size()) + " voxels, grid " + grid.describe() +
                    " has " + std::to_string(grid.voxels()));
    std::vector<cfloat> data(image.size());
    for (std::size_t i = 0; i < image.size(); ++i) data[i] = cfloat(image[i]);
    writeCfl(name, {grid.n[0], grid.n[1], grid.n[2]}, data);
}

ComplexArray readCflImage(const std::string& name, Grid* grid, const std::string& what) {
    const CflArray a = readCfl(name, what);
    for (std::size_t i = 3; i < a.dims.size(); ++i)
        if (a.dims[i] != 1)
            throw InputError(what + " '" + cflBase(name) + "': dimensions " + a.describe() +
                             " are not an image (only the first three may exceed 1)");
    for (int i = 0; i < 3; ++i)
        if (a.dim(i) > 4096)
            throw InputError(what + " '" + cflBase(name) + "': axis of " + std::to_string(a.dim(i)) +
                             " voxels is absurdly large (limit 4096)");
    if (grid) {
        const int nz = int(a.dim(2));
        *grid = nz == 1 ? Grid::make2D(int(a.dim(0)), int(a.dim(1)))
                        : Grid::make3D(int(a.dim(0)), int(a.dim(1)), nz);
    }
    return ComplexArray(a.data.begin(), a.data.end());
}

}  // namespace recon::io
