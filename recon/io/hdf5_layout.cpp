// ReconStudio's own HDF5 layout, version 1 (docs/FILE_FORMAT.md):
//   /                      attrs format="ReconStudio", format_version, software, created
//   /dataset               attrs name, source, dims, matrix[3], fov_mm[3], basis, trajectory_units
//   /dataset/trajectory    float64 [M][d], cycles per FOV unless trajectory_units says otherwise
//   /dataset/kspace        complex [coils][M] (compound r, i)
//   /dataset/density       float64 [M]               (optional; w, not sqrt(w))
//   /dataset/truth         complex [n_z][n_y][n_x]    (optional; 2D: [n_y][n_x])
//   /dataset/reference     complex, as truth          (optional)
//   /image                 complex image written by writeImage (attrs matrix, fov_mm, description)
//   /results               attrs matrix, fov_mm, lambda, lambda_scale, regularizer, method, backend,
//                          iterations, software; datasets gridding_trilinear, gridding_kb,
//                          iterative (complex images) and history (compound table)
#include <cmath>
#include <ctime>
#include <filesystem>

#include "recon/core/errors.hpp"
#include "recon/core/version.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"
#include "recon/io/hdf5_util.hpp"

namespace recon::io {
namespace {
using h5::Handle;
using h5::Place;

void writeRootAttributes(hid_t file) {
    h5::writeAttribute(file, "format", std::string(kLayoutName));
    h5::writeAttribute(file, "format_version", std::vector<std::int64_t>{kLayoutVersion});
    h5::writeAttribute(file, "software", std::string(RECONSTUDIO_NAME " " RECONSTUDIO_VERSION));
    h5::writeAttribute(file, "created", h5::utcTimestamp());
}

void writeGridAttributes(hid_t obj, const Grid& g) {
    h5::writeAttribute(obj, "dims", std::vector<std::int64_t>{g.dims});
    h5::writeAttribute(obj, "matrix", std::vector<std::int64_t>{g.n[0], g.n[1], g.n[2]});
    h5::writeAttribute(obj, "fov_mm", std::vector<double>{g.fov_mm[0], g.fov_mm[1], g.fov_mm[2]});
}

// HDF5 lists dimensions slowest first: an image is [n_z][n_y][n_x] (2D: [n_y][n_x]).
std::vector<hsize_t> imageDims(const Grid& g) {
    if (g.dims == 2) return {hsize_t(g.n[1]), hsize_t(g.n[0])};
    return {hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0])};
}

void writeImageDataset(hid_t loc, const std::string& name, const Grid& g, const ComplexArray& image) {
    if (image.empty()) return;
    if (image.size() != g.voxels())
        throw Error("cannot write " + name + ": " + std::to_string(image.size()) + " voxels for grid " + g.describe());
    h5::writeComplex(loc, name, imageDims(g), image.data());
}

Grid readGridAttributes(hid_t obj, const Place& where) {
    const std::vector<double> m = h5::readNumericAttribute(obj, "matrix", where, 3);
    for (double v : m)
        if (!(v >= 1 && v <= kMaxAxis) || v != std::floor(v))
            throw InputError(where.str() + ", attribute 'matrix': " + formatNumber(v) +
                             " is not a grid size (1 to " + std::to_string(kMaxAxis) + ")");
    std::array<double, 3> fov{240, 240, 240};
    if (h5::hasAttribute(obj, "fov_mm")) {
        const std::vector<double> f = h5::readNumericAttribute(obj, "fov_mm", where, 3);
        for (int a = 0; a < 3; ++a) {
            if (!(f[a] > 0 && f[a] < 1e5))
                throw InputError(where.str() + ", attribute 'fov_mm': " + formatNumber(f[a]) +
                                 " mm is not a field of view");
            fov[a] = f[a];
        }
    }
    Grid g = gridFromMatrix({long(m[0]), long(m[1]), long(m[2])}, fov, where.str());
    if (h5::hasAttribute(obj, "dims")) {
        const double d = h5::readNumericAttribute(obj, "dims", where, 1)[0];
        if (d != g.dims)
            throw InputError(where.str() + ": attribute 'dims' = " + formatNumber(d) + " disagrees with matrix " +
                             g.describe());
    }
    return g;
}

// An optional image on `g` at `path`, shape checked before reading.
ComplexArray readImageDataset(hid_t file, const std::string& path, const Grid& g, const Place& where) {
    Handle d = h5::openDataset(file, path, where);
    const h5::Shape s = h5::shapeOf(d.get(), where);
    if (s.dims != imageDims(g))
        throw InputError(where.str() + ": shape " + s.str() + " does not match the grid " + g.describe() +
                         " (expected " + h5::Shape{imageDims(g)}.str() + ", slowest axis first)");
    return h5::readComplex(d.get(), where, g.voxels());
}

void requireOurLayout(hid_t file, const std::string& path) {
    const Place root{path, "root group"};
    const std::string format = h5::readStringAttribute(file, "format", root, "");
    if (format != kLayoutName)
        throw InputError(root.str() + ": not a ReconStudio file (attribute 'format' is '" + format + "')");
    const double version = h5::readNumericAttribute(file, "format_version", root, 1)[0];
    if (!(version >= 1 && version <= kLayoutVersion))
        throw InputError(root.str() + ": layout version " + std::to_string(version) + "; this build reads 1 to " +
                         std::to_string(kLayoutVersion) + " (written by a newer ReconStudio?)");
}

// A file made in memory (h5::createInMemory): closing it touches no disk.
void closeWritten(Handle& file, const std::string& path) {
    if (!file.close()) throw Error(cannotWrite(path, h5::withCause("closing the HDF5 file failed")));
}

// Runs a writer's body so that a failure inside names the file the user asked
// for, not its temporary.
template <class Body>
void namingTarget(const std::string& path, Body&& body) {
    try {
        body();
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.rfind("cannot write '" + path + "'", 0) == 0) throw;
        throw Error(cannotWrite(path, what));
    }
}
}  // namespace

Hdf5Flavour classifyHdf5(const std::string& path) {
    Handle file = h5::openReadOnly(path, "input");
    const Place root{path, "root group"};
    if (h5::hasAttribute(file.get(), "format") &&
        h5::readStringAttribute(file.get(), "format", root, "") == kLayoutName)
        return Hdf5Flavour::ReconStudio;
    if (h5::isDataset(file.get(), "/dataset/xml")) return Hdf5Flavour::Ismrmrd;
    throw InputError(root.str() + ": HDF5, but neither a ReconStudio file (no root attribute format=\"ReconStudio\") "
                     "nor ISMRMRD (no /dataset/xml)");
}

Dataset readReconStudioHdf5(const std::string& path, const InputSpec& spec) {
    Handle file = h5::openReadOnly(path, "input");
    requireOurLayout(file.get(), path);
    const Place group{path, "group /dataset"};
    if (!h5::isGroup(file.get(), "/dataset"))
        throw InputError(group.str() + ": missing (this file holds no data set, only results or an image?)");
    Handle g(H5Gopen2(file.get(), "/dataset", H5P_DEFAULT), H5Gclose);
    if (!g.valid()) throw InputError(group.str() + ": cannot be opened");

    Dataset data;
    data.grid = readGridAttributes(g.get(), group);
    if (spec.matrix) data.grid = gridFromMatrix({(*spec.matrix)[0], (*spec.matrix)[1], (*spec.matrix)[2]},
                                                data.grid.fov_mm, "--matrix");
    const Grid& grid = data.grid;
    data.name = h5::readStringAttribute(g.get(), "name", group, std::filesystem::path(path).stem().string());
    const std::string stored_source = h5::readStringAttribute(g.get(), "source", group, "");
    try {
        data.basis = parseBasis(h5::readStringAttribute(g.get(), "basis", group, toString(kDefaultBasis)));
    } catch (const std::invalid_argument& e) {
        throw InputError(group.str() + ", attribute 'basis': " + e.what());
    }
    TrajectoryUnits units = TrajectoryUnits::CyclesPerFov;
    const char* how = "as written by ReconStudio";
    if (h5::hasAttribute(g.get(), "trajectory_units")) {
        try {
            units = parseTrajectoryUnits(h5::readStringAttribute(g.get(), "trajectory_units", group, ""));
            how = "as declared in the file";
        } catch (const std::invalid_argument& e) {
            throw InputError(group.str() + ", attribute 'trajectory_units': " + e.what());
        }
    }
    if (spec.units) {
        units = *spec.units;
        how = "as given by the user";
    }

    // Shapes first, all of them, before any array is read.
    const Place traj_at{path, "dataset /dataset/trajectory"}, ksp_at{path, "dataset /dataset/kspace"};
    Handle traj = h5::openDataset(file.get(), "/dataset/trajectory", traj_at);
    const h5::Shape ts = h5::shapeOf(traj.get(), traj_at);
    if (ts.dims.size() != 2 || (ts.dims[1] != hsize_t(grid.dims) && ts.dims[1] != 3))
        throw InputError(traj_at.str() + ": shape " + ts.str() + ", expected M x " + std::to_string(grid.dims) +
                         " (one row of k components per sample) for the " + grid.describe() + " grid");
    const std::uint64_t M = ts.dims[0];
    if (M == 0 || M > kMaxSamples)
        throw InputError(traj_at.str() + ": " + std::to_string(M) + " samples is not a usable count");
    Handle ksp = h5::openDataset(file.get(), "/dataset/kspace", ksp_at);
    const h5::Shape ks = h5::shapeOf(ksp.get(), ksp_at);
    std::uint64_t coils = 0;
    if (ks.dims.size() == 1 && ks.dims[0] == M) coils = 1;
    else if (ks.dims.size() == 2 && ks.dims[1] == M) coils = ks.dims[0];
    else
        throw InputError(ksp_at.str() + ": shape " + ks.str() + ", expected coils x " + std::to_string(M) +
                         " (the trajectory has " + std::to_string(M) + " samples)");
    if (coils < 1 || coils > std::uint64_t(kMaxCoils) || coils * M > kMaxSamples)
        throw InputError(ksp_at.str() + ": " + std::to_string(coils) + " coils is not a usable count");
    const bool has_density = h5::exists(file.get(), "/dataset/density");
    const Place dens_at{path, "dataset /dataset/density"};
    Handle dens;
    if (has_density) {
        dens = h5::openDataset(file.get(), "/dataset/density", dens_at);
        const h5::Shape s = h5::shapeOf(dens.get(), dens_at);
        if (s.dims.size() != 1 || s.dims[0] != M)
            throw InputError(dens_at.str() + ": shape " + s.str() + ", expected " + std::to_string(M) + " weights");
    }

    const std::size_t d = std::size_t(ts.dims[1]);
    const std::vector<double> k = h5::readReal(traj.get(), traj_at, M * d);
    data.trajectory.dims = grid.dims;
    data.trajectory.k.assign(3 * M, 0.0);
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t a = 0; a < d; ++a) {
            const double v = k[m * d + a];
            if (a >= std::size_t(grid.dims) && v != 0)
                throw InputError(traj_at.str() + ": sample " + std::to_string(m) +
                                 " has a non-zero k_z but the grid is 2D");
            data.trajectory.k[3 * m + a] = v;
        }
    if (h5::hasAttribute(traj.get(), "readout_length")) {
        const double r = h5::readNumericAttribute(traj.get(), "readout_length", traj_at, 1)[0];
        if (!(r >= 1 && r <= double(M) && std::fmod(double(M), r) == 0))
            throw InputError(traj_at.str() + ", attribute 'readout_length' = " + formatNumber(r) +
                             ": a readout length is a whole number of samples from 1 to " + std::to_string(M) +
                             " that divides the " + std::to_string(M) + " samples");
        data.trajectory.readout_length = int(r);
    }
    data.trajectory.kind = h5::readStringAttribute(traj.get(), "kind", traj_at, "");
    convertToCyclesPerFov(data.trajectory, grid, units);
    data.coils = int(coils);
    data.kspace = h5::readComplex(ksp.get(), ksp_at, coils * M);
    if (has_density) data.density = h5::readReal(dens.get(), dens_at, M);
    for (const char* name : {"truth", "reference"}) {
        const std::string p = std::string("/dataset/") + name;
        if (!h5::exists(file.get(), p)) continue;
        ComplexArray img = readImageDataset(file.get(), p, grid, Place{path, "dataset " + p});
        (std::string(name) == "truth" ? data.truth : data.reference) = std::move(img);
    }
    data.source = "ReconStudio HDF5 '" + path + "'" + unitsNote(units, how) +
                  (stored_source.empty() ? "" : "; originally " + stored_source);
    return data;
}

void writeReconStudioHdf5(const std::string& path, const Dataset& data) {
    data.validate("data set to write");
    h5::Hdf5Session session;
    namingTarget(path, [&] {
        AtomicOutput out(path);
        {
            Handle file = h5::createInMemory(path);
            writeRootAttributes(file.get());
            Handle g = h5::createGroup(file.get(), "dataset");
            const Grid& grid = data.grid;
            writeGridAttributes(g.get(), grid);
            h5::writeAttribute(g.get(), "name", data.name);
            h5::writeAttribute(g.get(), "source", data.source);
            h5::writeAttribute(g.get(), "basis", toString(data.basis));
            h5::writeAttribute(g.get(), "trajectory_units", toString(TrajectoryUnits::CyclesPerFov));
            const std::size_t M = data.samples(), d = std::size_t(grid.dims);
            std::vector<double> k(M * d);
            for (std::size_t m = 0; m < M; ++m)
                for (std::size_t a = 0; a < d; ++a) k[m * d + a] = data.trajectory.k[3 * m + a];
            h5::writeReal(g.get(), "trajectory", {M, d}, k.data());
            {
                Handle t(H5Dopen2(g.get(), "trajectory", H5P_DEFAULT), H5Dclose);
                if (data.trajectory.readout_length > 0)
                    h5::writeAttribute(t.get(), "readout_length", std::vector<std::int64_t>{data.trajectory.readout_length});
                if (!data.trajectory.kind.empty()) h5::writeAttribute(t.get(), "kind", data.trajectory.kind);
            }
            h5::writeComplex(g.get(), "kspace", {hsize_t(data.coils), M}, data.kspace.data());
            if (!data.density.empty()) h5::writeReal(g.get(), "density", {M}, data.density.data());
            writeImageDataset(g.get(), "truth", grid, data.truth);
            writeImageDataset(g.get(), "reference", grid, data.reference);
            g.reset();
            const std::string bytes = h5::fileImage(file.get());
            closeWritten(file, path);
            out.write(bytes.data(), bytes.size());
        }
        out.commit();
    });
}

void writeReconStudioImage(const std::string& path, const Grid& grid, const ComplexArray& image,
                           const std::string& description) {
    h5::Hdf5Session session;
    namingTarget(path, [&] {
        AtomicOutput out(path);
        {
            Handle file = h5::createInMemory(path);
            writeRootAttributes(file.get());
            writeImageDataset(file.get(), "image", grid, image);
            Handle d(H5Dopen2(file.get(), "image", H5P_DEFAULT), H5Dclose);
            writeGridAttributes(d.get(), grid);
            if (!description.empty()) h5::writeAttribute(d.get(), "description", description);
            d.reset();
            const std::string bytes = h5::fileImage(file.get());
            closeWritten(file, path);
            out.write(bytes.data(), bytes.size());
        }
        out.commit();
    });
}

ComplexArray readReconStudioImage(const std::string& path, Grid* grid_out) {
    Handle file = h5::openReadOnly(path, "image");
    requireOurLayout(file.get(), path);
    // The image a user most likely means: a written image, else the iterative result, ...
    for (const char* p : {"/image", "/results/iterative", "/results/gridding_kb", "/results/gridding_trilinear"}) {
        if (!h5::isDataset(file.get(), p)) continue;
        const Place where{path, std::string("dataset ") + p};
        const std::string holder = std::string(p) == "/image" ? p : "/results";
        Handle obj(H5Oopen(file.get(), holder.c_str(), H5P_DEFAULT), H5Oclose);
        if (!obj.valid()) throw InputError(where.str() + ": cannot be opened");
        const Grid g = readGridAttributes(obj.get(), Place{path, holder});
        obj.reset();
        ComplexArray img = readImageDataset(file.get(), p, g, where);
        for (const auto& v : img)
            if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
                throw InputError(where.str() + ": contains NaN or Inf");
        if (grid_out) *grid_out = g;
        return img;
    }
    throw InputError("file '" + path + "': holds no image (/image or /results/*)");
}

namespace {
struct HistoryRow {
    std::int32_t iteration;
    double residual, data_term, penalty_term, seconds;
    std::int8_t has_truth;
    double error_percent, psnr_db;
};

Handle historyType(bool file_type) {
    Handle t(h5::checkId(H5Tcreate(H5T_COMPOUND, sizeof(HistoryRow)), "history type"), H5Tclose);
    const hid_t i32 = file_type ? H5T_STD_I32LE : H5T_NATIVE_INT32;
    const hid_t i8 = file_type ? H5T_STD_I8LE : H5T_NATIVE_INT8;
    const hid_t f64 = file_type ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
    h5::check(H5Tinsert(t.get(), "iteration", HOFFSET(HistoryRow, iteration), i32), "history type");
    h5::check(H5Tinsert(t.get(), "residual", HOFFSET(HistoryRow, residual), f64), "history type");
    h5::check(H5Tinsert(t.get(), "data_term", HOFFSET(HistoryRow, data_term), f64), "history type");
    h5::check(H5Tinsert(t.get(), "penalty_term", HOFFSET(HistoryRow, penalty_term), f64), "history type");
    h5::check(H5Tinsert(t.get(), "seconds", HOFFSET(HistoryRow, seconds), f64), "history type");
    h5::check(H5Tinsert(t.get(), "has_truth", HOFFSET(HistoryRow, has_truth), i8), "history type");
    h5::check(H5Tinsert(t.get(), "error_percent", HOFFSET(HistoryRow, error_percent), f64), "history type");
    h5::check(H5Tinsert(t.get(), "psnr_db", HOFFSET(HistoryRow, psnr_db), f64), "history type");
    return t;
}
}  // namespace

void writeReconStudioResults(const std::string& path, const ReconstructionRecord& rec) {
    const Grid& grid = rec.grid;
    for (const ComplexArray* img : {&rec.gridding_trilinear, &rec.gridding_kb, &rec.iterative})
        if (!img->empty() && img->size() != grid.voxels())
            throw Error("writeReconstruction: an image has " + std::to_string(img->size()) + " voxels, grid " +
                        grid.describe() + " has " + std::to_string(grid.voxels()));
    h5::Hdf5Session session;
    std::error_code ec;
    const bool update = std::filesystem::exists(path, ec);
    if (update) {  // only ever add to our own files, never to someone else's
        Handle existing = h5::openReadOnly(path, "output");
        requireOurLayout(existing.get(), path);
    }
    namingTarget(path, [&] {
        AtomicOutput out(path);
        {
            Handle file = update ? h5::openInMemory(path, readSmallFile(path, "output", std::size_t(1) << 40)) : h5::createInMemory(path);
            if (!update) writeRootAttributes(file.get());
            if (h5::exists(file.get(), "/results"))
                h5::check(H5Ldelete(file.get(), "/results", H5P_DEFAULT), "replacing /results");
            Handle r = h5::createGroup(file.get(), "results");
            writeGridAttributes(r.get(), grid);
            h5::writeAttribute(r.get(), "lambda", std::vector<double>{rec.lambda});
            h5::writeAttribute(r.get(), "lambda_scale", std::vector<double>{rec.lambda_scale});
            h5::writeAttribute(r.get(), "regularizer", rec.regularizer);
            h5::writeAttribute(r.get(), "method", rec.method);
            h5::writeAttribute(r.get(), "data_weighting", rec.data_weighting);
            h5::writeAttribute(r.get(), "backend", rec.backend);
            h5::writeAttribute(r.get(), "iterations", std::vector<std::int64_t>{rec.iterations});
            h5::writeAttribute(r.get(), "software", std::string(RECONSTUDIO_NAME " " RECONSTUDIO_VERSION));
            h5::writeAttribute(r.get(), "created", h5::utcTimestamp());
            writeImageDataset(r.get(), "gridding_trilinear", grid, rec.gridding_trilinear);
            writeImageDataset(r.get(), "gridding_kb", grid, rec.gridding_kb);
            writeImageDataset(r.get(), "iterative", grid, rec.iterative);
            if (!rec.history.empty()) {
                std::vector<HistoryRow> rows;
                for (const IterationRecord& it : rec.history)
                    rows.push_back({it.iteration, it.residual, it.data_term, it.penalty_term, it.seconds,
                                    std::int8_t(it.has_truth), it.error_percent, it.psnr_db});
                const hsize_t n = rows.size();
                Handle mem = historyType(false), ftype = historyType(true);
                Handle space(h5::checkId(H5Screate_simple(1, &n, nullptr), "history space"), H5Sclose);
                Handle d(h5::checkId(H5Dcreate2(r.get(), "history", ftype.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                                H5P_DEFAULT),
                                     "history"),
                         H5Dclose);
                h5::check(H5Dwrite(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), "writing history");
            }
            r.reset();
            const std::string bytes = h5::fileImage(file.get());
            closeWritten(file, path);
            out.write(bytes.data(), bytes.size());
        }
        out.commit();
    });
}

}  // namespace recon::io
