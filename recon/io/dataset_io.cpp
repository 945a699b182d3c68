// The format dispatch behind dataset_io.hpp, the rules all readers share, and
// the BART data-set reader (BART keeps a data set as separate arrays).
#include "recon/io/dataset_io.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "recon/core/errors.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"
#ifdef RECONSTUDIO_IO_HAVE_HDF5
#include "recon/io/isolated_read.hpp"
#endif

namespace recon {
namespace io {

Grid gridFromMatrix(const std::array<long, 3>& n, const std::array<double, 3>& fov_mm, const std::string& origin) {
    for (int a = 0; a < 3; ++a)
        if (n[std::size_t(a)] < 1 || n[std::size_t(a)] > kMaxAxis)
            throw InputError(origin + ": matrix size " + std::to_string(n[std::size_t(a)]) + " on axis " +
                             std::to_string(a) + " is not usable (1 to " + std::to_string(kMaxAxis) + ")");
    if (n[0] < 2 || n[1] < 2) throw InputError(origin + ": a grid needs at least 2 voxels along x and y");
    Grid g = n[2] == 1 ? Grid::make2D(int(n[0]), int(n[1])) : Grid::make3D(int(n[0]), int(n[1]), int(n[2]));
    g.fov_mm = fov_mm;
    return g;
}

void convertToCyclesPerFov(Trajectory& t, const Grid& g, TrajectoryUnits units) {
    if (units == TrajectoryUnits::CyclesPerFov) return;
    for (int a = 0; a < g.dims; ++a) {
        const double f = toCyclesPerFov(units, g.n[a]);
        for (std::size_t m = 0; m < t.samples(); ++m) t.k[3 * m + std::size_t(a)] *= f;
    }
}

std::string unitsNote(TrajectoryUnits units, const char* how) {
    const char* name = units == TrajectoryUnits::CyclesPerFov     ? "cycles per FOV"
                       : units == TrajectoryUnits::CyclesPerVoxel ? "cycles per voxel"
                                                                  : "radians per voxel";
    return std::string("; trajectory units: ") + name + " (" + how + ")";
}

namespace {
bool allZero(const std::vector<double>& k, int component) {
    for (std::size_t i = std::size_t(component); i < k.size(); i += 3)
        if (k[i] != 0) return false;
    return true;
}

ComplexArray imageOnGrid(const std::string& name, const Grid& grid, const char* what) {
    Grid g;
    ComplexArray img = readImage(name, &g);
    if (g.n != grid.n)
        throw InputError(std::string(what) + " '" + name + "' is " + g.describe() + " but the data's grid is " +
                         grid.describe());
    return img;
}

std::vector<double> realWeights(const CflArray& a, const std::string& name, std::size_t samples) {
    if (a.elements() != samples)
        throw InputError("density weights '" + name + "' (" + a.describe() + "): " + std::to_string(a.elements()) +
                         " values for " + std::to_string(samples) + " samples");
    std::vector<double> w(samples);
    for (std::size_t m = 0; m < samples; ++m) {
        if (a.data[m].imag() != 0)
            throw InputError("density weights '" + name + "': value " + std::to_string(m) + " is not real");
        w[m] = a.data[m].real();
    }
    // Checked again by Dataset::validate; here the message names the weights' file.
    if (std::all_of(w.begin(), w.end(), [](double v) { return v == 0; }))
        throw InputError("density weights '" + name + "': all zero: gridding would discard every sample");
    return w;
}
}  // namespace

namespace {
// The median distance between neighbouring samples of each readout (0 when
// readouts have fewer than two samples).
double medianReadoutStep(const std::vector<double>& k, std::size_t readout) {
    std::vector<double> steps;
    const std::size_t M = k.size() / 3;
    if (readout < 2) return 0;
    for (std::size_t m = 0; m + 1 < M; ++m) {
        if ((m + 1) % readout == 0) continue;  // the next sample starts another readout
        const double dx = k[3 * m + 3] - k[3 * m], dy = k[3 * m + 4] - k[3 * m + 1], dz = k[3 * m + 5] - k[3 * m + 2];
        steps.push_back(std::sqrt(dx * dx + dy * dy + dz * dz));
    }
    if (steps.empty()) return 0;
    std::nth_element(steps.begin(), steps.begin() + long(steps.size() / 2), steps.end());
    return steps[steps.size() / 2];
}
}  // namespace

std::shared_ptr<Dataset> readBartDataset(const InputSpec& spec) {
    if (spec.trajectory.empty() || spec.kspace.empty())
        throw InputError("BART input needs both a trajectory and k-space (--trajectory T --kspace K)");
    const std::string tname = cflBase(spec.trajectory), kname = cflBase(spec.kspace);
    // Both headers (and file sizes) first: shapes are checked before any data are read.
    const CflArray theader = readCflHeader(tname, "trajectory");
    const CflArray kheader = readCflHeader(kname, "k-space");
    if (theader.dim(0) != 3)
        throw InputError("trajectory '" + tname + "' (" + theader.describe() +
                         "): its first dimension must be 3 (k_x, k_y, k_z), as `bart traj` writes");
    if (theader.dim(3) != 1)
        throw InputError("trajectory '" + tname + "' (" + theader.describe() +
                         "): dimension 3 is BART's coil dimension and must be 1");
    if (kheader.dim(0) != 1)
        throw InputError("k-space '" + kname + "' (" + kheader.describe() +
                         "): its first dimension must be 1 (BART k-space is (1, readout, readouts, coils))");
    for (int i = 1; i < kBartMaxDims; ++i)
        if (i != 3 && kheader.dim(i) != theader.dim(i))
            throw InputError("k-space '" + kname + "' (" + kheader.describe() + ") does not match trajectory '" + tname +
                             "' (" + theader.describe() + ") in dimension " + std::to_string(i) +
                             ": trajectory and data of different lengths");
    const CflArray traj = readCfl(tname, "trajectory");
    const std::size_t M = traj.elements() / 3;
    for (std::size_t i = 0; i < traj.elements(); ++i)
        if (!std::isfinite(traj.data[i].real()) || traj.data[i].imag() != 0)
            throw InputError("trajectory '" + tname + "': value " + std::to_string(i) +
                             " is not a finite real number (k-space data given as trajectory?)");
    const CflArray ksp = readCfl(kname, "k-space");
    const long coils = ksp.dim(3);
    if (coils > kMaxCoils) throw InputError("k-space '" + kname + "': " + std::to_string(coils) + " coils");

    auto data = std::make_shared<Dataset>();
    data->name = std::filesystem::path(kname).filename().string();
    Trajectory& t = data->trajectory;
    t.k.resize(3 * M);
    for (std::size_t i = 0; i < 3 * M; ++i) t.k[i] = traj.data[i].real();
    t.readout_length = int(traj.dim(1));
    t.kind = "bart";

    // The grid: the user's, else the truth's or reference's, else the smallest
    // even size whose band holds the trajectory (stated in `source`).
    std::string grid_note;
    Grid grid;
    std::string image_for_grid = !spec.truth.empty() ? spec.truth : spec.reference;
    if (spec.matrix) {
        grid = gridFromMatrix({(*spec.matrix)[0], (*spec.matrix)[1], (*spec.matrix)[2]}, {240, 240, 240}, "--matrix");
        grid_note = "grid " + grid.describe() + " from --matrix";
    } else if (!image_for_grid.empty()) {
        readImage(image_for_grid, &grid);
        grid_note = "grid " + grid.describe() + " from '" + image_for_grid + "'";
    } else {
        const bool flat = allZero(t.k, 2);
        std::array<long, 3> n{1, 1, 1};
        const TrajectoryUnits units = spec.units.value_or(TrajectoryUnits::CyclesPerFov);
        if (units != TrajectoryUnits::CyclesPerFov)
            throw InputError("trajectory '" + tname + "': with units other than cycles per FOV the grid size "
                             "cannot be inferred; give --matrix");
        for (int a = 0; a < (flat ? 2 : 3); ++a) {
            double peak = 0;
            for (std::size_t m = 0; m < M; ++m) peak = std::max(peak, std::abs(t.k[3 * m + std::size_t(a)]));
            if (peak > kMaxAxis / 2)
                throw InputError("trajectory '" + tname + "': |k| reaches " + std::to_string(peak) +
                                 " cycles/FOV; not BART's units? (give --units or --matrix)");
            n[std::size_t(a)] = std::max(2L, 2 * long(std::ceil(peak - 1e-6)));
        }
        // Sampled at Nyquist in cycles per FOV, neighbours along a readout lie about
        // 1 apart; far more means other units, and a grid that many times too large.
        const double step = medianReadoutStep(t.k, std::size_t(traj.dim(1)));
        if (step > 2.5)
            throw InputError("trajectory '" + tname + "': neighbouring samples along a readout lie a median " +
                             formatNumber(std::round(step * 100) / 100) +
                             " cycles/FOV apart (about 1 at Nyquist), so the grid inferred from its extent, " +
                             std::to_string(n[0]) + " wide, would be about " + formatNumber(std::round(step)) +
                             " times too large: the trajectory is likely in other units, scaled by about " +
                             formatNumber(std::round(step)) + " (this program and BART use cycles per FOV). "
                             "Give --units or --matrix");
        grid = gridFromMatrix(n, {240, 240, 240}, "trajectory '" + tname + "'");
        grid_note = "grid " + grid.describe() + " inferred from the trajectory's extent (override with --matrix)";
    }
    t.dims = grid.dims;
    if (grid.dims == 2 && !allZero(t.k, 2))
        throw InputError("trajectory '" + tname + "' has non-zero k_z but the grid " + grid.describe() + " is 2D");
    t.kind = grid.dims == 2 ? "bart-2d" : "bart-3d";
    const TrajectoryUnits units = spec.units.value_or(TrajectoryUnits::CyclesPerFov);
    convertToCyclesPerFov(t, grid, units);
    data->grid = grid;
    data->coils = int(coils);
    data->kspace.assign(ksp.data.begin(), ksp.data.end());
    if (!spec.truth.empty()) data->truth = imageOnGrid(spec.truth, grid, "truth");
    if (!spec.reference.empty()) data->reference = imageOnGrid(spec.reference, grid, "reference");
    if (!spec.density.empty()) data->density = realWeights(readCfl(spec.density, "density weights"), spec.density, M);
    data->source = "BART: trajectory '" + tname + "' (" + traj.describe() + "), k-space '" + kname + "' (" +
                   ksp.describe() + "); " + grid_note +
                   unitsNote(units, spec.units ? "as given by the user" : "BART's unit") +
                   "; k-space values as stored (BART's `phantom -k` is C/N^d times this program's model)";
    data->validate("BART input '" + kname + "'");
    return data;
}

void writeBartDataset(const std::string& path, const Dataset& data) {
    data.validate("data set to write");
    const std::string base = cflBase(path);
    const std::size_t M = data.samples();
    const long ro = data.trajectory.readout_length > 0 && M % std::size_t(data.trajectory.readout_length) == 0
                        ? data.trajectory.readout_length
                        : long(M);
    const long readouts = long(M) / ro;
    std::vector<cfloat> k(3 * M), ksp(data.kspace.size());
    for (std::size_t i = 0; i < 3 * M; ++i) k[i] = cfloat(float(data.trajectory.k[i]), 0.0f);
    for (std::size_t i = 0; i < ksp.size(); ++i) ksp[i] = cfloat(data.kspace[i]);
    // All arrays or none: a failed write leaves the previous data set whole.
    CflGroupWriter writer;
    writer.add(base + "_traj", {3, ro, readouts}, k);
    writer.add(base + "_ksp", {1, ro, readouts, data.coils}, ksp);
    if (!data.density.empty()) {
        std::vector<cfloat> w(M);
        for (std::size_t m = 0; m < M; ++m) w[m] = cfloat(float(data.density[m]), 0.0f);
        writer.add(base + "_dens", {1, ro, readouts}, w);
    }
    const auto addImage = [&](const std::string& name, const ComplexArray& image) {
        const Grid& g = data.grid;
        writer.add(name, {g.n[0], g.n[1], g.n[2]}, std::vector<cfloat>(image.begin(), image.end()));
    };
    if (data.hasTruth()) addImage(base + "_truth", data.truth);
    if (data.hasReference()) addImage(base + "_ref", data.reference);
    writer.commit();
}

namespace {
const std::vector<std::string> kHdf5Ext{".h5", ".hdf5", ".mrd", ".ismrmrd"};
const std::vector<std::string> kCflExt{".cfl", ".hdr", ""};
const std::vector<std::string> kNiftiExt{".nii", ".nii.gz"};

[[noreturn]] void unsupported(const std::string& path, const std::string& what, const std::vector<std::string>& formats) {
    std::string list;
    for (const auto& f : formats) list += (list.empty() ? "" : ", ") + f;
    throw InputError(what + " '" + path + "': the extension '" + extensionOf(path) +
                     "' names no format this build " + (what == "input" ? "reads" : "writes") + " (" + list + ")");
}
}  // namespace
}  // namespace io

std::vector<std::string> supportedInputFormats() {
    std::vector<std::string> f;
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    f.push_back("ReconStudio HDF5 (*.h5 *.hdf5)");
#endif
#ifdef RECONSTUDIO_IO_HAVE_ISMRMRD
    f.push_back("ISMRMRD (*.h5 *.mrd)");
#endif
    f.push_back("BART (*.cfl *.hdr)");
#ifdef RECONSTUDIO_IO_HAVE_NIFTI
    f.push_back("NIfTI-1 image (*.nii *.nii.gz)");
#endif
    return f;
}

std::vector<std::string> supportedOutputFormats() {
    std::vector<std::string> f;
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    f.push_back("ReconStudio HDF5 (*.h5 *.hdf5)");
#endif
#ifdef RECONSTUDIO_IO_HAVE_ISMRMRD
    f.push_back("ISMRMRD image (*.mrd)");
#endif
    f.push_back("BART (*.cfl *.hdr)");
#ifdef RECONSTUDIO_IO_HAVE_NIFTI
    f.push_back("NIfTI-1 (*.nii *.nii.gz)");
#endif
#ifdef RECONSTUDIO_IO_HAVE_PNG
    f.push_back("PNG slice (*.png)");
#endif
    return f;
}

namespace {
std::shared_ptr<Dataset> readAnyDataset(const InputSpec& spec);
}

std::shared_ptr<Dataset> readDataset(const InputSpec& spec) {
    std::shared_ptr<Dataset> data = readAnyDataset(spec);
    if (spec.basis && data->basis != *spec.basis) {
        data->basis = *spec.basis;
        data->source += "; voxel basis " + toString(*spec.basis) + " (as given by the user)";
    }
    return data;
}

namespace {
bool isFileInput(const InputSpec& spec) {
    return !spec.input.empty() && spec.kspace.empty() && !io::hasExtension(spec.input, {".cfl", ".hdr"});
}

// Images from separate files may complete a data set of one frame (a truth for error readouts).
void completeFromFiles(Dataset& data, const InputSpec& spec) {
    using namespace io;
    if (spec.truth.empty() && spec.reference.empty() && spec.density.empty()) return;
    if (!spec.truth.empty()) data.truth = imageOnGrid(spec.truth, data.grid, "truth");
    if (!spec.reference.empty()) data.reference = imageOnGrid(spec.reference, data.grid, "reference");
    if (!spec.density.empty())
        data.density = realWeights(readCfl(spec.density, "density weights"), spec.density, data.samples());
    data.validate("input '" + spec.input + "'");
}

std::shared_ptr<Dataset> readAnyDataset(const InputSpec& spec) {
    using namespace io;
    if (spec.input.empty()) {
        if (spec.trajectory.empty() && spec.kspace.empty())
            throw InputError("no input: give an HDF5/ISMRMRD file, or BART --trajectory and --kspace");
        return readBartDataset(spec);
    }
    if (!spec.kspace.empty())
        throw InputError("give either one input file or BART --trajectory/--kspace, not both");
    if (hasExtension(spec.input, {".cfl", ".hdr"}))
        throw InputError("input '" + spec.input + "' is a BART array: give it as --kspace with its --trajectory");
    Frames frames = readFrames(spec);
    if (frames.frames.size() != 1)
        throw InputError("input '" + spec.input + "' holds " + std::to_string(frames.frames.size()) + " frames (" +
                         frames.counts.describe() + "): choose one with --frame K (0 to " +
                         std::to_string(frames.frames.size() - 1) + "); `recon` without --frame reconstructs them all");
    return std::move(frames.frames.front().data);
}
}  // namespace

Frames readFrames(const InputSpec& spec) {
    if (isFileInput(spec)) {
#ifdef RECONSTUDIO_IO_HAVE_HDF5
        Frames frames = io::readHdf5FramesChecked(spec);
        if ((!spec.truth.empty() || !spec.reference.empty() || !spec.density.empty()) && frames.frames.size() != 1)
            throw InputError("--truth, --reference and --density belong to one frame: input '" + spec.input +
                             "' holds " + std::to_string(frames.frames.size()) + " (choose one with --frame)");
        if (frames.frames.size() == 1) completeFromFiles(*frames.frames.front().data, spec);
        return frames;
#else
        io::unsupported(spec.input, "input", supportedInputFormats());
#endif
    }
    if (spec.frame && *spec.frame != 0)
        throw InputError("--frame " + std::to_string(*spec.frame) + ": the input holds one frame (frame 0)");
    Frames one;
    one.frames.push_back({{}, 0, "frame 0", readDataset(spec)});
    one.total = 1;
    return one;
}

void writeDataset(const std::string& path, const Dataset& data) {
    using namespace io;
    if (hasExtension(path, kCflExt)) return writeBartDataset(path, data);
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    if (hasExtension(path, {".h5", ".hdf5"})) return writeReconStudioHdf5(path, data);
#endif
    unsupported(path, "output", {"ReconStudio HDF5 (*.h5 *.hdf5)", "BART (*.cfl)"});
}

void writeImage(const std::string& path, const Grid& grid, const ComplexArray& image, const ImageWriteOptions& opts) {
    using namespace io;
    if (opts.volumes > 1) {  // frames along a 4th dimension: NIfTI only
#ifdef RECONSTUDIO_IO_HAVE_NIFTI
        if (hasExtension(path, kNiftiExt)) return writeNifti(path, grid, image, opts);
#endif
        throw InputError("output '" + path + "': " + std::to_string(opts.volumes) +
                         " volumes (frames) need a 4th dimension: write NIfTI (.nii, .nii.gz), or choose one frame");
    }
    if (image.size() != grid.voxels())
        throw Error("writeImage '" + path + "': " + std::to_string(image.size()) + " voxels for grid " + grid.describe());
    (void)opts;  // unused when neither HDF5, ISMRMRD, NIfTI nor PNG is built in
    if (hasExtension(path, kCflExt)) return writeCflImage(path, grid, image);
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    if (hasExtension(path, {".h5", ".hdf5"})) return writeReconStudioImage(path, grid, image, opts.description);
#endif
#ifdef RECONSTUDIO_IO_HAVE_ISMRMRD
    if (hasExtension(path, {".mrd", ".ismrmrd"})) return writeIsmrmrdImage(path, grid, image, opts.description);
#endif
#ifdef RECONSTUDIO_IO_HAVE_NIFTI
    if (hasExtension(path, kNiftiExt)) return writeNifti(path, grid, image, opts);
#endif
#ifdef RECONSTUDIO_IO_HAVE_PNG
    if (hasExtension(path, {".png"})) return writePng(path, grid, image, opts);
#endif
    unsupported(path, "output", supportedOutputFormats());
}

ComplexArray readImage(const std::string& path, Grid* grid) {
    using namespace io;
    if (hasExtension(path, kCflExt)) return readCflImage(path, grid);
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    if (hasExtension(path, {".h5", ".hdf5"})) {  // in a child process, as every HDF5 input
        GriddedImage read = readImageIsolated(path, [&] {
            GriddedImage image;
            image.image = readReconStudioImage(path, &image.grid);
            return image;
        });
        if (grid) *grid = read.grid;
        return std::move(read.image);
    }
#endif
#ifdef RECONSTUDIO_IO_HAVE_NIFTI
    if (hasExtension(path, kNiftiExt)) return readNifti(path, grid);
#endif
    unsupported(path, "input", {"BART (*.cfl)", "ReconStudio HDF5 (*.h5)", "NIfTI-1 (*.nii *.nii.gz)"});
}

void writeReconstruction(const std::string& path, const ReconstructionRecord& rec) {
#ifdef RECONSTUDIO_IO_HAVE_HDF5
    if (io::hasExtension(path, {".h5", ".hdf5"})) return io::writeReconStudioResults(path, rec);
#endif
    (void)rec;
    io::unsupported(path, "output", {"ReconStudio HDF5 (*.h5 *.hdf5)"});
}

}  // namespace recon
