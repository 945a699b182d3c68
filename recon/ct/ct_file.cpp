#include "recon/ct/ct_file.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "recon/core/errors.hpp"
#include "recon/core/version.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"

#ifdef RECONSTUDIO_IO_HAVE_HDF5
#include "recon/io/hdf5_util.hpp"
#include "recon/io/isolated_read.hpp"
#endif

namespace recon::ct {

#ifdef RECONSTUDIO_IO_HAVE_HDF5
namespace {

namespace h5 = io::h5;
using h5::Handle;
using h5::Place;

constexpr const char* kGroup = "ct";

// The child's result crosses the pipe as bytes: numbers as they are, strings and arrays
// with their length first (both ends are this program).
class Packer {
public:
    void number(double v) { raw(&v, sizeof v); }
    void text(const std::string& s) {
        number(double(s.size()));
        raw(s.data(), s.size());
    }
    void array(const std::vector<double>& v) {
        number(double(v.size()));
        raw(v.data(), v.size() * sizeof(double));
    }
    std::string bytes;

private:
    void raw(const void* p, std::size_t n) {
        if (n > 0) bytes.append(static_cast<const char*>(p), n);  // an empty array's data() may be null
    }
};

class Unpacker {
public:
    explicit Unpacker(const std::string& b) : b_(b) {}
    double number() {
        double v;
        raw(&v, sizeof v);
        return v;
    }
    std::string text() {
        std::string s(length(1), '\0');
        raw(s.data(), s.size());
        return s;
    }
    std::vector<double> array() {
        std::vector<double> v(length(sizeof(double)));
        raw(v.data(), v.size() * sizeof(double));
        return v;
    }

private:
    // A length that the rest of the message can hold (a cut message must not allocate).
    std::size_t length(std::size_t bytes_each) {
        const double n = number();
        if (!(n >= 0) || n * bytes_each > double(b_.size() - at_)) throw Error("CT file: the reader's message is damaged");
        return static_cast<std::size_t>(n);
    }
    void raw(void* p, std::size_t n) {
        if (at_ + n > b_.size()) throw Error("CT file: the reader's message is cut short");
        if (n == 0) return;  // an empty array's data() may be null, which memcpy must not see
        std::memcpy(p, b_.data() + at_, n);
        at_ += n;
    }
    const std::string& b_;
    std::size_t at_ = 0;
};

std::string pack(const CtData& d) {
    Packer p;
    p.text(d.name);
    p.text(d.source);
    const ConeBeamGeometry& b = d.geometry.beam;
    const VolumeGeometry& v = d.geometry.volume;
    for (double x : {b.source_to_isocentre_mm, b.source_to_detector_mm, double(b.detector_columns),
                     double(b.detector_rows), b.pixel_u_mm, b.pixel_v_mm, b.offset_u_mm, b.offset_v_mm, d.photons})
        p.number(x);
    for (int a = 0; a < 3; ++a) p.number(v.size[a]), p.number(v.voxel_mm[a]), p.number(v.offset_mm[a]);
    p.array(b.angles_rad);
    p.array(d.projections);
    p.array(d.counts);
    p.array(d.truth);
    return std::move(p.bytes);
}

CtData unpack(const std::string& bytes) {
    Unpacker u(bytes);
    CtData d;
    d.name = u.text();
    d.source = u.text();
    ConeBeamGeometry& b = d.geometry.beam;
    VolumeGeometry& v = d.geometry.volume;
    b.source_to_isocentre_mm = u.number();
    b.source_to_detector_mm = u.number();
    b.detector_columns = int(u.number());
    b.detector_rows = int(u.number());
    b.pixel_u_mm = u.number();
    b.pixel_v_mm = u.number();
    b.offset_u_mm = u.number();
    b.offset_v_mm = u.number();
    d.photons = u.number();
    for (int a = 0; a < 3; ++a) v.size[a] = int(u.number()), v.voxel_mm[a] = u.number(), v.offset_mm[a] = u.number();
    b.angles_rad = u.array();
    d.projections = u.array();
    d.counts = u.array();
    d.truth = u.array();
    return d;
}

// A count attribute (detector size, volume size) as the int it must be.
int countOf(double value, const Place& where, const char* name, int limit) {
    if (!(value >= 1 && value <= limit) || value != std::floor(value))
        throw InputError(where.str() + ", attribute '" + name + "': " + formatNumber(value) + " is not a size (1 to " +
                         std::to_string(limit) + ")");
    return int(value);
}

std::vector<double> readArray(hid_t group, const std::string& name, const Place& group_place,
                              const std::vector<hsize_t>& expected) {
    const Place where{group_place.file, "dataset /" + std::string(kGroup) + "/" + name};
    Handle d = h5::openDataset(group, name, where);
    const h5::Shape shape = h5::shapeOf(d.get(), where);
    if (shape.dims != expected)
        throw InputError(where.str() + ": shape " + shape.str() + ", expected " + h5::Shape{expected}.str() +
                         " (slowest axis first)");
    return h5::readReal(d.get(), where, shape.elements());
}

// The reader proper: runs in the child, takes no lock, does not validate beyond shapes.
CtData readInChild(const std::string& path) {
    Handle file = h5::openReadOnly(path, "CT input");
    const Place root{path, "root group"};
    if (h5::readStringAttribute(file.get(), "format", root, "") != io::kLayoutName)
        throw InputError(root.str() + ": not a ReconStudio file (no root attribute format=\"ReconStudio\")");
    if (!h5::isGroup(file.get(), kGroup)) throw InputError(root.str() + ": no group /ct (not a CT scan)");
    Handle g(H5Gopen2(file.get(), kGroup, H5P_DEFAULT), H5Gclose);
    const Place where{path, "group /ct"};
    auto number = [&](const char* name) { return h5::readNumericAttribute(g.get(), name, where, 1)[0]; };
    auto triple = [&](const char* name) { return h5::readNumericAttribute(g.get(), name, where, 3); };
    CtData d;
    d.name = h5::readStringAttribute(g.get(), "name", where, "CT scan");
    d.source = h5::readStringAttribute(g.get(), "source", where, "");
    ConeBeamGeometry& b = d.geometry.beam;
    VolumeGeometry& v = d.geometry.volume;
    b.source_to_isocentre_mm = number("source_to_isocentre_mm");
    b.source_to_detector_mm = number("source_to_detector_mm");
    b.detector_columns = countOf(number("detector_columns"), where, "detector_columns", 1 << 14);
    b.detector_rows = countOf(number("detector_rows"), where, "detector_rows", 1 << 14);
    b.pixel_u_mm = number("pixel_u_mm");
    b.pixel_v_mm = number("pixel_v_mm");
    b.offset_u_mm = h5::hasAttribute(g.get(), "offset_u_mm") ? number("offset_u_mm") : 0.0;
    b.offset_v_mm = h5::hasAttribute(g.get(), "offset_v_mm") ? number("offset_v_mm") : 0.0;
    d.photons = h5::hasAttribute(g.get(), "photons") ? number("photons") : 0.0;
    const std::vector<double> size = triple("volume_size"), voxel = triple("voxel_mm");
    const std::vector<double> offset = h5::hasAttribute(g.get(), "volume_offset_mm") ? triple("volume_offset_mm")
                                                                                      : std::vector<double>{0, 0, 0};
    for (int a = 0; a < 3; ++a) {
        v.size[a] = countOf(size[a], where, "volume_size", 1 << 13);
        v.voxel_mm[a] = voxel[a];
        v.offset_mm[a] = offset[a];
    }
    {
        const Place angles_at{path, "dataset /ct/angles_rad"};
        Handle a = h5::openDataset(g.get(), "angles_rad", angles_at);
        const h5::Shape shape = h5::shapeOf(a.get(), angles_at);
        if (shape.dims.size() != 1 || shape.dims[0] < 1 || shape.dims[0] > (1u << 16))
            throw InputError(angles_at.str() + ": shape " + shape.str() + ", expected [views] with 1 to 65536 views");
        b.angles_rad = h5::readReal(a.get(), angles_at, shape.elements());
    }
    const std::vector<hsize_t> projection_shape{b.views(), hsize_t(b.detector_rows), hsize_t(b.detector_columns)};
    if (double(b.views()) * b.detector_rows * b.detector_columns > double(io::kMaxSamples))
        throw InputError(where.str() + ": " + std::to_string(b.views()) + " views of " + std::to_string(b.detector_rows) +
                         " x " + std::to_string(b.detector_columns) + " pixels is more than this program reads");
    d.projections = readArray(g.get(), "projections", where, projection_shape);
    if (h5::isDataset(g.get(), "counts")) d.counts = readArray(g.get(), "counts", where, projection_shape);
    if (h5::isDataset(g.get(), "truth"))
        d.truth = readArray(g.get(), "truth", where, {hsize_t(v.size[2]), hsize_t(v.size[1]), hsize_t(v.size[0])});
    return d;
}

}  // namespace

void writeCtFile(const std::string& path, const CtData& data) {
    data.validate("CT data to write");
    h5::Hdf5Session session;
    try {
        io::AtomicOutput out(path);
        {
            Handle file = h5::createInMemory(path);
            h5::writeAttribute(file.get(), "format", std::string(io::kLayoutName));
            h5::writeAttribute(file.get(), "format_version", std::vector<std::int64_t>{io::kLayoutVersion});
            h5::writeAttribute(file.get(), "software", std::string(RECONSTUDIO_NAME " " RECONSTUDIO_VERSION));
            h5::writeAttribute(file.get(), "created", h5::utcTimestamp());
            Handle g = h5::createGroup(file.get(), kGroup);
            const ConeBeamGeometry& b = data.geometry.beam;
            const VolumeGeometry& v = data.geometry.volume;
            h5::writeAttribute(g.get(), "name", data.name);
            h5::writeAttribute(g.get(), "source", data.source);
            h5::writeAttribute(g.get(), "source_to_isocentre_mm", std::vector<double>{b.source_to_isocentre_mm});
            h5::writeAttribute(g.get(), "source_to_detector_mm", std::vector<double>{b.source_to_detector_mm});
            h5::writeAttribute(g.get(), "detector_columns", std::vector<std::int64_t>{b.detector_columns});
            h5::writeAttribute(g.get(), "detector_rows", std::vector<std::int64_t>{b.detector_rows});
            h5::writeAttribute(g.get(), "pixel_u_mm", std::vector<double>{b.pixel_u_mm});
            h5::writeAttribute(g.get(), "pixel_v_mm", std::vector<double>{b.pixel_v_mm});
            h5::writeAttribute(g.get(), "offset_u_mm", std::vector<double>{b.offset_u_mm});
            h5::writeAttribute(g.get(), "offset_v_mm", std::vector<double>{b.offset_v_mm});
            h5::writeAttribute(g.get(), "photons", std::vector<double>{data.photons});
            h5::writeAttribute(g.get(), "volume_size", std::vector<std::int64_t>{v.size[0], v.size[1], v.size[2]});
            h5::writeAttribute(g.get(), "voxel_mm", std::vector<double>{v.voxel_mm[0], v.voxel_mm[1], v.voxel_mm[2]});
            h5::writeAttribute(g.get(), "volume_offset_mm",
                               std::vector<double>{v.offset_mm[0], v.offset_mm[1], v.offset_mm[2]});
            h5::writeReal(g.get(), "angles_rad", {b.views()}, b.angles_rad.data());
            const std::vector<hsize_t> shape{b.views(), hsize_t(b.detector_rows), hsize_t(b.detector_columns)};
            h5::writeReal(g.get(), "projections", shape, data.projections.data());
            if (!data.counts.empty()) h5::writeReal(g.get(), "counts", shape, data.counts.data());
            if (!data.truth.empty())
                h5::writeReal(g.get(), "truth", {hsize_t(v.size[2]), hsize_t(v.size[1]), hsize_t(v.size[0])},
                              data.truth.data());
            g.reset();
            const std::string bytes = h5::fileImage(file.get());
            if (!file.close()) throw Error(io::cannotWrite(path, h5::withCause("closing the HDF5 file failed")));
            out.write(bytes.data(), bytes.size());
        }
        out.commit();
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.rfind("cannot write '" + path + "'", 0) == 0) throw;
        throw Error(io::cannotWrite(path, what));
    }
}

CtData readCtFile(const std::string& path) {
    io::regularFileSize(path, "CT input");
    CtData d = unpack(io::readBytesIsolated(path, [&] { return pack(readInChild(path)); }));
    d.validate("CT input '" + path + "'");
    if (d.source.empty()) d.source = "read from " + path;
    return d;
}

bool isCtFile(const std::string& path) {
    if (!io::hasExtension(path, {".h5", ".hdf5"})) return false;
    try {
        io::regularFileSize(path, "CT input");
        const std::string answer = io::readBytesIsolated(path, [&]() -> std::string {
            Handle file = h5::openReadOnly(path, "CT input");
            const Place root{path, "root group"};
            const bool ct = h5::hasAttribute(file.get(), "format") &&
                            h5::readStringAttribute(file.get(), "format", root, "") == io::kLayoutName &&
                            h5::isGroup(file.get(), kGroup);
            return ct ? "ct" : "";
        });
        return answer == "ct";
    } catch (const Error&) {
        return false;
    }
}

#else

void writeCtFile(const std::string&, const CtData&) { throw Error("this build has no HDF5: CT files cannot be written"); }
CtData readCtFile(const std::string&) { throw Error("this build has no HDF5: CT files cannot be read"); }
bool isCtFile(const std::string&) { return false; }

#endif

}  // namespace recon::ct
