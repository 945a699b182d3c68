// ISMRMRD (MRD) raw data in, ISMRMRD images out.
//
// Reading goes through HDF5 directly rather than ismrmrd_read_acquisition:
// that function sizes its copies from the acquisition header and trusts the
// variable-length arrays to match, so a damaged file makes it read out of
// bounds. Here the header fields we need and both arrays are read by name
// (so any ISMRMRD version's extra fields are ignored) and every length is
// checked before it is used. The XML header is parsed by ISMRMRD itself.
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/meta.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstring>
#include <array>
#include <sstream>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"
#include "recon/io/hdf5_util.hpp"
#include "recon/io/isolated_read.hpp"

namespace recon::io {
namespace {
using h5::Handle;
using h5::Place;

struct Counters {
    std::uint16_t kspace_encode_step_2, slice, contrast, phase, repetition, set;
};
struct Head {
    std::uint64_t flags;
    std::uint16_t number_of_samples, active_channels, discard_pre, discard_post, encoding_space_ref,
        trajectory_dimensions;
    Counters idx;
};
struct Row {
    Head head;
    hvl_t traj;
    hvl_t data;
};

Handle rowType() {
    Handle idx(h5::checkId(H5Tcreate(H5T_COMPOUND, sizeof(Counters)), "type"), H5Tclose);
    const std::pair<const char*, std::size_t> counters[] = {
        {"kspace_encode_step_2", HOFFSET(Counters, kspace_encode_step_2)}, {"slice", HOFFSET(Counters, slice)}, {"contrast", HOFFSET(Counters, contrast)},
        {"phase", HOFFSET(Counters, phase)}, {"repetition", HOFFSET(Counters, repetition)},
        {"set", HOFFSET(Counters, set)}};
    for (const auto& [name, off] : counters) h5::check(H5Tinsert(idx.get(), name, off, H5T_NATIVE_UINT16), "type");
    Handle head(h5::checkId(H5Tcreate(H5T_COMPOUND, sizeof(Head)), "type"), H5Tclose);
    h5::check(H5Tinsert(head.get(), "flags", HOFFSET(Head, flags), H5T_NATIVE_UINT64), "type");
    const std::pair<const char*, std::size_t> fields[] = {
        {"number_of_samples", HOFFSET(Head, number_of_samples)},
        {"active_channels", HOFFSET(Head, active_channels)},
        {"discard_pre", HOFFSET(Head, discard_pre)},
        {"discard_post", HOFFSET(Head, discard_post)},
        {"encoding_space_ref", HOFFSET(Head, encoding_space_ref)},
        {"trajectory_dimensions", HOFFSET(Head, trajectory_dimensions)}};
    for (const auto& [name, off] : fields) h5::check(H5Tinsert(head.get(), name, off, H5T_NATIVE_UINT16), "type");
    h5::check(H5Tinsert(head.get(), "idx", HOFFSET(Head, idx), idx.get()), "type");
    Handle vlen(h5::checkId(H5Tvlen_create(H5T_NATIVE_FLOAT), "type"), H5Tclose);
    Handle row(h5::checkId(H5Tcreate(H5T_COMPOUND, sizeof(Row)), "type"), H5Tclose);
    h5::check(H5Tinsert(row.get(), "head", HOFFSET(Row, head), head.get()), "type");
    h5::check(H5Tinsert(row.get(), "traj", HOFFSET(Row, traj), vlen.get()), "type");
    h5::check(H5Tinsert(row.get(), "data", HOFFSET(Row, data), vlen.get()), "type");
    return row;
}

constexpr std::uint64_t bit(int flag) { return std::uint64_t(1) << (flag - 1); }
// The factor r when `enc` is `rec` widened along x by an integer r > 1 in matrix and field of view
// (readout oversampling), else 1.
int readoutOversampling(const ISMRMRD::EncodingSpace& enc, const ISMRMRD::EncodingSpace& rec) {
    const auto& em = enc.matrixSize;
    const auto& rm = rec.matrixSize;
    if (rm.x == 0 || em.x <= rm.x || em.x % rm.x != 0 || em.y != rm.y || em.z != rm.z) return 1;
    const int r = int(em.x / rm.x);
    const auto& ef = enc.fieldOfView_mm;
    const auto& rf = rec.fieldOfView_mm;
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-3 * std::max(std::abs(a), std::abs(b)); };
    return near(ef.x, r * rf.x) && near(ef.y, rf.y) && near(ef.z, rf.z) ? r : 1;
}

// Acquisitions that are not image data of the encoding.
constexpr std::uint64_t kSkipped =
    bit(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT) | bit(ISMRMRD::ISMRMRD_ACQ_IS_NAVIGATION_DATA) |
    bit(ISMRMRD::ISMRMRD_ACQ_IS_PHASECORR_DATA) | bit(ISMRMRD::ISMRMRD_ACQ_IS_HPFEEDBACK_DATA) |
    bit(ISMRMRD::ISMRMRD_ACQ_IS_DUMMYSCAN_DATA) | bit(ISMRMRD::ISMRMRD_ACQ_IS_RTFEEDBACK_DATA) |
    bit(ISMRMRD::ISMRMRD_ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA) |
    bit(ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION_REFERENCE) | bit(ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION);

// The file's record type must have ISMRMRD's shape before HDF5 converts it:
// every compound's members inside it and apart, the fields we read integers,
// traj and data variable-length float arrays. (libhdf5 1.10's compound
// conversion misbehaves on damaged member layouts.)
bool sane(hid_t type, int depth = 0) {
    if (depth > 4) return false;
    const H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) return H5Tget_size(type) <= 8;
    if (cls == H5T_ARRAY) {
        Handle base(H5Tget_super(type), H5Tclose);
        return base.valid() && H5Tget_size(type) <= 4096 && sane(base.get(), depth + 1);
    }
    if (cls == H5T_VLEN) {
        Handle base(H5Tget_super(type), H5Tclose);
        return base.valid() && H5Tget_class(base.get()) == H5T_FLOAT && H5Tget_size(base.get()) <= 8;
    }
    if (cls != H5T_COMPOUND) return false;
    const int n = H5Tget_nmembers(type);
    if (n < 1 || n > 64) return false;
    for (int i = 0; i < n; ++i) {
        Handle member(H5Tget_member_type(type, unsigned(i)), H5Tclose);
        if (!member.valid() || !sane(member.get(), depth + 1)) return false;
    }
    return h5::membersInsideAndApart(type);
}

bool hasInteger(hid_t compound, const char* name) {
    const int i = H5Tget_member_index(compound, name);
    return i >= 0 && H5Tget_member_class(compound, unsigned(i)) == H5T_INTEGER;
}

bool looksLikeIsmrmrdRecord(hid_t type) {
    if (H5Tget_class(type) != H5T_COMPOUND || !sane(type)) return false;
    for (const char* name : {"head", "traj", "data"})
        if (H5Tget_member_index(type, name) < 0) return false;
    if (H5Tget_member_class(type, unsigned(H5Tget_member_index(type, "traj"))) != H5T_VLEN ||
        H5Tget_member_class(type, unsigned(H5Tget_member_index(type, "data"))) != H5T_VLEN)
        return false;
    Handle head(H5Tget_member_type(type, unsigned(H5Tget_member_index(type, "head"))), H5Tclose);
    if (!head.valid() || H5Tget_class(head.get()) != H5T_COMPOUND) return false;
    for (const char* name : {"flags", "number_of_samples", "active_channels", "discard_pre", "discard_post",
                             "encoding_space_ref", "trajectory_dimensions"})
        if (!hasInteger(head.get(), name)) return false;
    const int idx_at = H5Tget_member_index(head.get(), "idx");
    if (idx_at < 0) return false;
    Handle idx(H5Tget_member_type(head.get(), unsigned(idx_at)), H5Tclose);
    if (!idx.valid() || H5Tget_class(idx.get()) != H5T_COMPOUND) return false;
    for (const char* name : {"kspace_encode_step_2", "slice", "contrast", "phase", "repetition", "set"})
        if (!hasInteger(idx.get(), name)) return false;
    return true;
}

std::string readXml(hid_t file, const std::string& path) {
    const Place at{path, "dataset /dataset/xml"};
    Handle d = h5::openDataset(file, "/dataset/xml", at);
    Handle type(H5Dget_type(d.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) throw InputError(at.str() + ": is not a string");
    Handle space(H5Dget_space(d.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1)
        throw InputError(at.str() + ": expected one XML string");
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    if (H5Tis_variable_str(type.get()) > 0) {
        H5Tset_size(mem.get(), H5T_VARIABLE);
        char* text = nullptr;
        if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0 || !text)
            throw InputError(at.str() + ": unreadable (" + h5::lastError() + ")");
        std::string xml(text);
        H5free_memory(text);
        return xml;
    }
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > (std::size_t(1) << 24)) throw InputError(at.str() + ": absurd string length");
    H5Tset_size(mem.get(), size);
    std::string xml(size, '\0');
    if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, xml.data()) < 0)
        throw InputError(at.str() + ": unreadable (" + h5::lastError() + ")");
    xml.resize(std::strlen(xml.c_str()));
    return xml;
}

// One frame's samples as they are read: coil -> samples, 3 k components per sample.
struct FrameSamples {
    FrameIndex index;
    std::vector<double> k;
    std::vector<double> weights;                 // Gadgetron's 3rd trajectory component in 2D
    std::vector<std::vector<cdouble>> per_coil;
    std::vector<int> readout_lengths;
    std::size_t samples = 0;
};
}  // namespace

FramesRead readIsmrmrd(const std::string& path, const InputSpec& spec) {
    Handle file = h5::openReadOnly(path, "input");
    const Place xml_at{path, "dataset /dataset/xml"};
    ISMRMRD::IsmrmrdHeader header;
    try {
        const std::string xml = readXml(file.get(), path);
        ISMRMRD::deserialize(xml.c_str(), header);
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        throw InputError(xml_at.str() + ": not a valid ISMRMRD header: " + e.what());
    }
    if (header.encoding.empty()) throw InputError(xml_at.str() + ": the header declares no encoding");
    const ISMRMRD::EncodingSpace& enc = header.encoding[0].encodedSpace;
    const ISMRMRD::EncodingSpace& rec = header.encoding[0].reconSpace;
    // Readout oversampling, as scanners' converters write it: the encoded space is the recon space
    // widened along the readout (x) by an integer factor, matrix and field of view alike (the voxel
    // is the same). The image is reconstructed on the recon space, the field of view the scan was
    // planned with; every sample is kept (the finer spacing along the readout is denser sampling),
    // and a trajectory in cycles per FOV is read per the recon FOV (docs/FILE_FORMAT.md).
    const int oversampling = readoutOversampling(enc, rec);
    const ISMRMRD::EncodingSpace& space = oversampling > 1 ? rec : enc;
    const std::array<double, 3> fov{space.fieldOfView_mm.x, space.fieldOfView_mm.y, space.fieldOfView_mm.z};
    for (double f : fov)
        if (!(f > 0 && f < 1e5))
            throw InputError(xml_at.str() + ": " + (oversampling > 1 ? "recon" : "encoded") + " field of view " +
                             std::to_string(f) + " mm is not usable");
    Grid grid = spec.matrix ? gridFromMatrix({(*spec.matrix)[0], (*spec.matrix)[1], (*spec.matrix)[2]}, fov, "--matrix")
                            : gridFromMatrix({space.matrixSize.x, space.matrixSize.y, space.matrixSize.z}, fov,
                                             xml_at.str() + (oversampling > 1 ? " (recon matrix)" : " (encoded matrix)"));

    const Place data_at{path, "dataset /dataset/data"};
    Handle table = h5::openDataset(file.get(), "/dataset/data", data_at);
    {
        Handle ft(H5Dget_type(table.get()), H5Tclose);
        if (!ft.valid() || !looksLikeIsmrmrdRecord(ft.get()))
            throw InputError(data_at.str() + ": not an ISMRMRD acquisition table (records of head with ISMRMRD's "
                             "fields, traj and data as variable-length float arrays)");
        // ISMRMRD's record is about 400 bytes; HDF5 sizes its conversion buffers by the
        // record, so a damaged type must not get that far.
        if (H5Tget_size(ft.get()) > 65536)
            throw InputError(data_at.str() + ": acquisition records of " + std::to_string(H5Tget_size(ft.get())) +
                             " bytes are not ISMRMRD's");
    }
    const h5::Shape shape = h5::shapeOf(table.get(), data_at);
    if (shape.dims.size() != 1 || shape.dims[0] == 0 || shape.dims[0] > (1u << 24))
        throw InputError(data_at.str() + ": shape " + shape.str() + " is not a list of acquisitions");
    const hsize_t count = shape.dims[0];

    Handle mem = rowType();
    Handle fspace(H5Dget_space(table.get()), H5Sclose);
    int coils = -1, tdims = -1;
    Counters first{};
    bool have_first = false;
    std::size_t used = 0, skipped = 0, samples = 0;
    // Frames in the order they first appear; a stack-of-stars file's partitions are frames too,
    // still in k_z (the parent transforms them).
    std::vector<FrameSamples> frames;
    int partitions = 1;
    bool stack_of_stars = false;
    Grid frame_grid = grid;
    std::vector<std::vector<cdouble>> noise_per_coil;  // the noise scan: coil -> samples
    int noise_coils = -1;
    std::size_t bad_noise = 0;  // noise acquisitions with NaN/Inf: left out of the noise samples
    constexpr hsize_t kBlock = 256;
    std::vector<Row> rows(kBlock);
    for (hsize_t start = 0; start < count; start += kBlock) {
        const hsize_t n = std::min(kBlock, count - start);
        Handle mspace(H5Screate_simple(1, &n, nullptr), H5Sclose);
        H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr);
        std::fill(rows.begin(), rows.end(), Row{});
        struct Reclaim {  // frees the variable-length arrays HDF5 allocated, even after a failed read
            hid_t type, space;
            Row* rows;
            ~Reclaim() { H5Dvlen_reclaim(type, space, H5P_DEFAULT, rows); }
        } reclaim{mem.get(), mspace.get(), rows.data()};
        if (H5Dread(table.get(), mem.get(), mspace.get(), fspace.get(), H5P_DEFAULT, rows.data()) < 0)
            throw InputError(data_at.str() + ": reading acquisitions " + std::to_string(start) + "+ failed (" +
                             h5::lastError() + "; truncated or corrupt file?)");
        for (hsize_t r = 0; r < n; ++r) {
            const Row& row = rows[r];
            const Head& h = row.head;
            const std::string at = data_at.str() + ", acquisition " + std::to_string(start + r);
            if (h.flags & bit(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT)) {
                // Noise for prewhitening (recon/sense/prewhiten.hpp): every sample, no trajectory.
                const std::size_t ns = h.number_of_samples, nc = h.active_channels;
                if (row.data.len != 2 * ns * nc)
                    throw InputError(at + " (noise): holds " + std::to_string(row.data.len) +
                                     " floats of data, its header says " + std::to_string(ns) + " samples x " +
                                     std::to_string(nc) + " channels");
                if (noise_coils < 0) {
                    noise_coils = int(nc);
                    noise_per_coil.resize(nc);
                }
                const float* v = static_cast<const float*>(row.data.p);
                const bool finite_noise = std::all_of(v, v + 2 * ns * nc, [](float x) { return std::isfinite(x); });
                if (!finite_noise) ++bad_noise;
                if (int(nc) == noise_coils && finite_noise) {
                    for (std::size_t c = 0; c < nc; ++c)
                        for (std::size_t s = 0; s < ns; ++s)
                            noise_per_coil[c].emplace_back(v[2 * (c * ns + s)], v[2 * (c * ns + s) + 1]);
                }
                ++skipped;
                continue;
            }
            if ((h.flags & kSkipped) || h.encoding_space_ref != 0) {
                ++skipped;
                continue;
            }
            const std::size_t ns = h.number_of_samples, nc = h.active_channels, td = h.trajectory_dimensions;
            if (row.data.len != 2 * ns * nc)
                throw InputError(at + ": holds " + std::to_string(row.data.len) + " floats of data, its header says " +
                                 std::to_string(ns) + " samples x " + std::to_string(nc) + " channels");
            if (row.traj.len != ns * td)
                throw InputError(at + ": holds " + std::to_string(row.traj.len) +
                                 " trajectory floats, its header says " + std::to_string(ns) + " samples x " +
                                 std::to_string(td) + " dimensions");
            if (td == 0 && spec.trajectory.empty()) {
                if (header.encoding[0].trajectory == ISMRMRD::TrajectoryType::CARTESIAN)
                    throw InputError(at + ": has no trajectory (Cartesian ISMRMRD data are not supported: "
                                          "ReconStudio reconstructs non-Cartesian acquisitions; give the k-space "
                                          "positions with --trajectory to reconstruct them as such)");
                throw InputError(at + ": stores no trajectory (trajectory_dimensions 0): give the k-space positions "
                                      "with --trajectory T.cfl (BART (3, readout, readouts), cycles per FOV: one "
                                      "frame's readouts in acquisition order, e.g. from `bart traj`)");
            }
            // A 3D encoding with a 2D trajectory is a stack of stars: radial in k_x, k_y, Cartesian
            // partitions along k_z (idx.kspace_encode_step_2); so is one without a stored trajectory.
            if (td != 0 && (td < std::size_t(std::min(grid.dims, 2)) || td > 3))
                throw InputError(at + ": " + std::to_string(td) + " trajectory dimensions for a " +
                                 std::to_string(grid.dims) + "D encoded matrix " + grid.describe());
            if (nc == 0 || nc > std::size_t(kMaxCoils)) throw InputError(at + ": " + std::to_string(nc) + " channels");
            if (coils < 0) {
                coils = int(nc);
                tdims = int(td);
                stack_of_stars = grid.dims == 3 && td < 3;
                if (stack_of_stars) {
                    partitions = grid.n[2];
                    frame_grid = Grid::make2D(grid.n[0], grid.n[1]);
                    frame_grid.fov_mm = {grid.fov_mm[0], grid.fov_mm[1], grid.fov_mm[2] / partitions};
                }
            }
            if (int(nc) != coils || int(td) != tdims)
                throw InputError(at + ": " + std::to_string(nc) + " channels and " + std::to_string(td) +
                                 " trajectory dimensions, earlier acquisitions had " + std::to_string(coils) +
                                 " and " + std::to_string(tdims));
            if (!have_first) {
                first = h.idx;
                have_first = true;
            } else if (h.idx.phase != first.phase || h.idx.set != first.set) {
                // Slices, partitions, contrasts and repetitions are frames; these are not (yet).
                throw InputError(at + ": the file holds several " +
                                 (h.idx.phase != first.phase ? "cardiac phases" : "sets") +
                                 "; ReconStudio reads slices, stack-of-stars partitions, contrasts and repetitions "
                                 "as frames, not these");
            }
            if (stack_of_stars && h.idx.kspace_encode_step_2 >= partitions)
                throw InputError(at + ": partition " + std::to_string(h.idx.kspace_encode_step_2) +
                                 " (kspace_encode_step_2) of a stack of stars with " + std::to_string(partitions) +
                                 " partitions (the encoded matrix's z)");
            const FrameIndex fi{h.idx.slice, stack_of_stars ? int(h.idx.kspace_encode_step_2) : 0, h.idx.contrast,
                                h.idx.repetition};
            auto found = std::find_if(frames.begin(), frames.end(), [&](const FrameSamples& f) { return f.index == fi; });
            if (found == frames.end()) {
                if (frames.size() >= 65536) throw InputError(at + ": more than 65536 frames");
                frames.push_back({});
                frames.back().index = fi;
                frames.back().per_coil.resize(std::size_t(coils));
                found = frames.end() - 1;
            }
            FrameSamples& f = *found;
            if (std::size_t(h.discard_pre) + h.discard_post >= ns)
                throw InputError(at + ": discards " + std::to_string(h.discard_pre + h.discard_post) +
                                 " of its " + std::to_string(ns) + " samples");
            const std::size_t s0 = h.discard_pre, s1 = ns - h.discard_post;
            samples += s1 - s0;
            if (std::uint64_t(samples) * std::uint64_t(coils) > kMaxSamples)
                throw InputError(data_at.str() + ": more than 2^31 samples x coils");
            const float* traj = static_cast<const float*>(row.traj.p);
            const float* data = static_cast<const float*>(row.data.p);
            for (std::size_t s = s0; s < s1; ++s) {
                if (td > 0) {  // none stored: --trajectory supplies it (dataset_io.cpp)
                    const float* t = traj + s * td;
                    f.k.push_back(t[0]);
                    f.k.push_back(t[1]);
                    f.k.push_back(frame_grid.dims == 3 ? t[2] : 0.0);
                    if (frame_grid.dims == 2 && td == 3) f.weights.push_back(t[2]);
                }
                for (std::size_t c = 0; c < nc; ++c) {
                    const float* v = data + 2 * (c * ns + s);
                    f.per_coil[c].emplace_back(v[0], v[1]);
                }
            }
            f.samples += s1 - s0;
            f.readout_lengths.push_back(int(s1 - s0));
            ++used;
        }
    }
    if (used == 0)
        throw InputError(data_at.str() + ": no imaging acquisitions (all " + std::to_string(count) +
                         " are noise, navigator or calibration data, or of another encoding)");

    FramesRead out;
    Dataset& data = out.shared;
    data.name = std::filesystem::path(path).stem().string();
    data.grid = frame_grid;
    data.coils = coils;
    std::string kind;
    switch (header.encoding[0].trajectory) {
        case ISMRMRD::TrajectoryType::RADIAL:
        case ISMRMRD::TrajectoryType::GOLDENANGLE: kind = frame_grid.dims == 2 ? "radial-2d" : "radial-3d"; break;
        case ISMRMRD::TrajectoryType::SPIRAL: kind = frame_grid.dims == 2 ? "spiral-2d" : "stack-of-spirals"; break;
        default: kind = "ismrmrd"; break;
    }
    const TrajectoryUnits units = spec.units.value_or(TrajectoryUnits::CyclesPerFov);
    // Frames in counter order: partition fastest, then slice, contrast, repetition (dataset_io.hpp).
    std::sort(frames.begin(), frames.end(), [](const FrameSamples& a, const FrameSamples& b) {
        auto key = [](const FrameIndex& i) { return std::array{i.repetition, i.contrast, i.slice, i.partition}; };
        return key(a.index) < key(b.index);
    });
    bool any_weights = false;
    for (FrameSamples& f : frames) {
        Dataset d;
        d.coils = coils;
        d.trajectory.dims = frame_grid.dims;
        d.trajectory.k = std::move(f.k);
        d.trajectory.kind = kind;
        const bool same_length = std::all_of(f.readout_lengths.begin(), f.readout_lengths.end(),
                                             [&](int l) { return l == f.readout_lengths.front(); });
        d.trajectory.readout_length = same_length ? f.readout_lengths.front() : 0;
        convertToCyclesPerFov(d.trajectory, frame_grid, units);
        d.kspace.reserve(std::size_t(coils) * f.samples);
        for (auto& c : f.per_coil) d.kspace.insert(d.kspace.end(), c.begin(), c.end());
        if (!f.weights.empty() && std::any_of(f.weights.begin(), f.weights.end(), [](double w) { return w != 0; })) {
            d.density = std::move(f.weights);  // Gadgetron's convention: (kx, ky, w) for 2D spirals
            any_weights = true;
        }
        out.index.push_back(f.index);
        out.frames.push_back(std::move(d));
    }
    if (stack_of_stars) {
        out.partitions = partitions;
        const auto& limit = header.encoding[0].encodingLimits.kspace_encoding_step_2;
        // k_z = 0 at the limit's centre when the header gives one, else at N_z/2 (docs/FILE_FORMAT.md).
        out.partition_centre = limit && limit->maximum > 0 ? int(limit->center) : partitions / 2;
        if (out.partition_centre >= partitions)
            throw InputError(xml_at.str() + ": the partition centre " + std::to_string(out.partition_centre) +
                             " lies outside the " + std::to_string(partitions) + " partitions");
    }
    std::string note;
    if (bad_noise > 0) note += "; " + std::to_string(bad_noise) + " noise acquisition(s) with NaN/Inf ignored";
    if (noise_coils == coils && !noise_per_coil.empty() && noise_per_coil[0].size() >= 2) {
        for (auto& c : noise_per_coil) data.noise.insert(data.noise.end(), c.begin(), c.end());
        note += "; " + std::to_string(noise_per_coil[0].size()) + " noise samples per coil";
    } else if (noise_coils > 0) {
        note += "; noise acquisitions ignored (" + std::to_string(noise_coils) + " channels, the data have " +
                std::to_string(coils) + ")";
    }
    if (any_weights) note += "; 3rd trajectory component read as density weights (Gadgetron convention)";
    if (oversampling > 1)
        note += "; readout oversampling " + std::to_string(oversampling) + "x (encoded matrix " +
                std::to_string(enc.matrixSize.x) + "x" + std::to_string(enc.matrixSize.y) +
                "): reconstructed on the recon space's field of view";
    if (stack_of_stars)
        note += "; stack of stars: " + std::to_string(partitions) + " partitions (k_z = 0 at partition " +
                std::to_string(out.partition_centre) + "), each a 2D problem after the inverse FFT along k_z";
    if (tdims == 0) note += "; no stored trajectory: k-space positions from --trajectory";
    data.source = "ISMRMRD '" + path + "': " + std::to_string(used) + " acquisitions (" + std::to_string(skipped) +
                  " skipped), " + std::to_string(coils) + " coil(s), " +
                  (oversampling > 1 ? "recon matrix " : "encoded matrix ") + grid.describe() +
                  (spec.matrix ? " (from --matrix)" : "") +
                  (oversampling == 1 && (rec.matrixSize.x != enc.matrixSize.x || rec.matrixSize.y != enc.matrixSize.y)
                       ? ", recon matrix " + std::to_string(rec.matrixSize.x) + "x" + std::to_string(rec.matrixSize.y)
                       : std::string()) +
                  unitsNote(units, spec.units ? "as given by the user"
                                              : "assumed: ISMRMRD defines no trajectory unit; override with --units") +
                  note;
    return out;
}

namespace {
// ISMRMRD's C++ Dataset opens its file on disk and closes it in the destructor,
// where a failure is lost. The image is built with the C++ class and appended
// through the C API to a file in memory whose bytes then go to disk, checked.
struct ImageForCApi : ISMRMRD::Image<std::complex<float>> {
    using ISMRMRD::Image<std::complex<float>>::Image;
    const ISMRMRD::ISMRMRD_Image* c() const { return &im; }
};

// ISMRMRD prints its errors to stderr; the writer's message says what failed instead.
void quietIsmrmrd(const char*, int, const char*, int, const char*) {}

void appendImageChecked(AtomicOutput& out, const std::string& path, const ImageForCApi& img) {
    ISMRMRD::ismrmrd_set_error_handler(quietIsmrmrd);
    // The file is made in memory and handed to ISMRMRD open (hdf5_util.hpp says why).
    Handle memory = h5::createInMemory(path);
    struct Closer {  // ISMRMRD closes the file and frees its names
        ISMRMRD::ISMRMRD_Dataset file;
        ~Closer() { ISMRMRD::ismrmrd_close_dataset(&file); }
    } data;
    if (ISMRMRD::ismrmrd_init_dataset(&data.file, path.c_str(), "dataset") != ISMRMRD::ISMRMRD_NOERROR)
        throw Error(cannotWrite(path, "ISMRMRD cannot start a data set"));
    data.file.fileid = memory.release();
    if (ISMRMRD::ismrmrd_append_image(&data.file, "image_0", img.c()) != ISMRMRD::ISMRMRD_NOERROR)
        throw Error(cannotWrite(path, h5::withCause("writing the image failed")));
    const std::string bytes = h5::fileImage(data.file.fileid);
    out.write(bytes.data(), bytes.size());
}
}  // namespace

void writeIsmrmrdImage(const std::string& path, const Grid& grid, const ComplexArray& image,
                       const std::string& description) {
    if (image.size() != grid.voxels())
        throw Error("writeImage: " + std::to_string(image.size()) + " voxels for grid " + grid.describe());
    for (int a = 0; a < 3; ++a)
        if (grid.n[a] > 65535) throw Error("writeImage: ISMRMRD images have at most 65535 voxels per axis");
    h5::Hdf5Session session;
    AtomicOutput out(path);
    try {
        ImageForCApi img(std::uint16_t(grid.n[0]), std::uint16_t(grid.n[1]),
                                               std::uint16_t(grid.n[2]), 1);
        img.setFieldOfView(float(grid.fov_mm[0]), float(grid.fov_mm[1]), float(grid.fov_mm[2]));
        // Image axes are the scanner's x, y, z (docs/FILE_FORMAT.md); the centre voxel sits at the origin.
        img.setReadDirection(1, 0, 0);
        img.setPhaseDirection(0, 1, 0);
        img.setSliceDirection(0, 0, 1);
        img.setPosition(0, 0, 0);
        img.setImageType(ISMRMRD::ISMRMRD_IMTYPE_COMPLEX);
        img.setImageSeriesIndex(1);
        if (!description.empty()) {
            ISMRMRD::MetaContainer meta;
            meta.set("ReconStudioDescription", description.c_str());
            std::ostringstream text;
            ISMRMRD::serialize(meta, text);
            img.setAttributeString(text.str());
        }
        std::complex<float>* p = img.getDataPtr();
        for (std::size_t i = 0; i < image.size(); ++i) p[i] = std::complex<float>(image[i]);
        appendImageChecked(out, path, img);
    } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.rfind("cannot write '" + path + "'", 0) == 0) throw;
        throw Error(cannotWrite(path, "ISMRMRD: " + what));
    }
    out.commit();
}

}  // namespace recon::io
