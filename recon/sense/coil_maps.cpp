#include "recon/sense/coil_maps.hpp"

#include <algorithm>
#include <cmath>

#include "recon/core/errors.hpp"
#include "recon/sense/calibration.hpp"
#include "recon/sense/small_linalg.hpp"

namespace recon {

std::string toString(CoilMapMethod m) {
    switch (m) {
        case CoilMapMethod::Walsh: return "walsh";
        case CoilMapMethod::Espirit: return "espirit";
        case CoilMapMethod::LowResolution: break;
    }
    return "lowres";
}

CoilMapMethod parseCoilMapMethod(const std::string& name) {
    if (name == "lowres" || name == "low-resolution") return CoilMapMethod::LowResolution;
    if (name == "walsh") return CoilMapMethod::Walsh;
    if (name == "espirit") return CoilMapMethod::Espirit;
    throw InputError("unknown coil map method '" + name + "' (available: lowres, walsh, espirit)");
}

LowResolutionImages lowResolutionCoilImages(Backend& backend, const Dataset& data, const std::vector<double>& density,
                                            double radius, const Progress& progress) {
    if (data.coils < 2) throw InputError("coil maps: the data set has one coil; SENSE needs several");
    if (!(radius > 0)) throw InputError("coil maps: the calibration radius must be > 0");
    const std::size_t m_count = data.samples(), voxels = data.grid.voxels();
    if (density.size() != m_count) throw InputError("coil maps: density weights do not match the samples");
    const Trajectory& t = data.trajectory;
    std::vector<double> taper(m_count);
    for (std::size_t m = 0; m < m_count; ++m) {
        const double r = std::sqrt(t.kx(m) * t.kx(m) + t.ky(m) * t.ky(m) + t.kz(m) * t.kz(m));
        taper[m] = r < radius ? density[m] * 0.5 * (1 + std::cos(kPi * r / radius)) : 0.0;
    }
    LowResolutionImages out;
    out.images.resize(std::size_t(data.coils) * voxels);
    std::vector<double> coil_energy(std::size_t(data.coils), 0.0);
    for (int c = 0; c < data.coils; ++c) {
        ComplexArray weighted(m_count), img;
        for (std::size_t m = 0; m < m_count; ++m) weighted[m] = taper[m] * data.coil(c)[m];
        backend.grid(t, weighted, data.grid, kaiserBesselGridding(), img, progress);
        std::copy(img.begin(), img.end(), out.images.begin() + std::ptrdiff_t(std::size_t(c) * voxels));
        for (const auto& x : img) coil_energy[std::size_t(c)] += std::norm(x);
    }
    out.strongest = int(std::max_element(coil_energy.begin(), coil_energy.end()) - coil_energy.begin());
    return out;
}

CoilMaps assembleCoilMaps(ComplexArray unit_maps, int coils, std::vector<std::uint8_t> mask, int reference,
                          std::string source) {
    const std::size_t voxels = mask.size();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t vi = 0; vi < std::ptrdiff_t(voxels); ++vi) {
        const std::size_t v = std::size_t(vi);
        const cdouble ref = unit_maps[std::size_t(reference) * voxels + v];
        const cdouble phase = std::abs(ref) > 0 ? std::conj(ref) / std::abs(ref) : cdouble(1);
        for (int c = 0; c < coils; ++c) {
            cdouble& s = unit_maps[std::size_t(c) * voxels + v];
            s = mask[v] ? s * phase : cdouble(0);
        }
    }
    CoilMaps out;
    out.maps = std::move(unit_maps);
    out.mask = std::move(mask);
    out.coils = coils;
    out.source = std::move(source);
    return out;
}

namespace {

// Voxels whose root sum of squares over `images` lies below `threshold` times its maximum are
// outside the object. Also returns the root sum of squares.
std::vector<std::uint8_t> objectMask(const ComplexArray& images, int coils, double threshold, std::vector<double>& rss) {
    if (!(threshold >= 0 && threshold < 1)) throw InputError("coil maps: the mask threshold must lie in [0, 1)");
    const std::size_t voxels = images.size() / std::size_t(coils);
    rss.assign(voxels, 0.0);
    for (int c = 0; c < coils; ++c)
        for (std::size_t v = 0; v < voxels; ++v) rss[v] += std::norm(images[std::size_t(c) * voxels + v]);
    for (auto& r : rss) r = std::sqrt(r);
    return objectFromRootSumOfSquares(rss, threshold);
}

}  // namespace

std::vector<std::uint8_t> supportMask(const ComplexArray& images, int coils, double threshold) {
    std::vector<double> rss;
    return objectMask(images, coils, threshold, rss);
}

CoilMaps estimateCoilMapsLowResolution(Backend& backend, const Dataset& data, const std::vector<double>& density,
                                       const LowResolutionMapOptions& opts, const Progress& progress) {
    LowResolutionImages low = lowResolutionCoilImages(backend, data, density, opts.calibration_radius, progress);
    std::vector<double> rss;
    std::vector<std::uint8_t> mask = objectMask(low.images, data.coils, opts.mask_threshold, rss);
    const std::size_t voxels = data.grid.voxels();
    for (int c = 0; c < data.coils; ++c)
        for (std::size_t v = 0; v < voxels; ++v)
            if (mask[v]) low.images[std::size_t(c) * voxels + v] /= rss[v];
    return assembleCoilMaps(std::move(low.images), data.coils, std::move(mask), low.strongest, "low-resolution");
}

CoilMaps estimateCoilMapsWalsh(Backend& backend, const Dataset& data, const WalshOptions& opts, const Progress& progress) {
    if (data.coils < 2) throw InputError("Walsh coil maps: the data set has one coil; SENSE needs several");
    if (opts.half_width < 0 || opts.half_width > 32)
        throw InputError("Walsh coil maps: the neighbourhood's half width must lie in [0, 32], got " +
                         std::to_string(opts.half_width));
    const CalibrationBlocks blocks =
        fitCalibrationBlocks(backend, data, opts.calibration, opts.calibration_iterations, progress.part(0, 0.4));
    progress.update(0.4);
    CoilField field;
    field.coils = data.coils;
    field.coil_blocks = taperedCalibrationBlocks(blocks);
    field.object_threshold = opts.mask_threshold;
    field.half_width = opts.half_width;
    CoilFieldEigen eig = backend.coilFieldEigenvectors(data.grid, field, progress.part(0.4, 1));
    return assembleCoilMaps(std::move(eig.vectors), data.coils, std::move(eig.object), blocks.strongest, "walsh");
}

CoilMaps coilMapsFromArray(const std::vector<long>& dims, const ComplexArray& values, const Grid& grid, int coils,
                           const std::string& source) {
    auto dim = [&](std::size_t i) { return i < dims.size() ? dims[i] : 1L; };
    const std::size_t n = grid.voxels() * std::size_t(coils);  // the first set of maps
    if (dim(0) != grid.n[0] || dim(1) != grid.n[1] || dim(2) != grid.n[2] || dim(3) != coils || values.size() < n)
        throw InputError("coil maps '" + source + "': the array is " + std::to_string(dim(0)) + "x" +
                         std::to_string(dim(1)) + "x" + std::to_string(dim(2)) + "x" + std::to_string(dim(3)) +
                         ", expected " + std::to_string(grid.n[0]) + "x" + std::to_string(grid.n[1]) + "x" +
                         std::to_string(grid.n[2]) + "x" + std::to_string(coils) + " (x, y, z, coils) for grid " +
                         grid.describe());
    CoilMaps out;
    out.coils = coils;
    out.source = source;
    out.maps.assign(values.begin(), values.begin() + std::ptrdiff_t(n));
    out.mask.assign(grid.voxels(), 0);
    for (int c = 0; c < coils; ++c)
        for (std::size_t v = 0; v < grid.voxels(); ++v)
            if (out.maps[std::size_t(c) * grid.voxels() + v] != cdouble(0)) out.mask[v] = 1;
    return out;
}

CoilMapAgreement compareCoilMaps(const ComplexArray& estimate, const ComplexArray& reference, int coils,
                             const std::vector<std::uint8_t>& region) {
    const std::size_t voxels = region.size();
    if (coils < 1 || estimate.size() != std::size_t(coils) * voxels || reference.size() != estimate.size())
        throw InputError("comparing coil maps: " + std::to_string(estimate.size()) + " and " +
                         std::to_string(reference.size()) + " values for " + std::to_string(coils) + " coils x " +
                         std::to_string(voxels) + " voxels");
    CoilMapAgreement out;
    std::vector<double> errors;
    for (std::size_t v = 0; v < voxels; ++v) {
        if (!region[v]) continue;
        double e2 = 0, r2 = 0;
        cdouble inner = 0;
        for (int c = 0; c < coils; ++c) {
            const cdouble e = estimate[std::size_t(c) * voxels + v], r = reference[std::size_t(c) * voxels + v];
            e2 += std::norm(e);
            r2 += std::norm(r);
            inner += std::conj(e) * r;
        }
        if (e2 == 0 || r2 == 0) {
            ++out.uncovered;
            continue;
        }
        const double fit = std::min(1.0, std::abs(inner) / std::sqrt(e2 * r2));
        errors.push_back(std::sqrt(2 - 2 * fit));
    }
    out.voxels = errors.size();
    if (errors.empty()) return out;
    double sum2 = 0;
    for (double e : errors) sum2 += e * e;
    out.rms_error = std::sqrt(sum2 / double(errors.size()));
    std::sort(errors.begin(), errors.end());
    out.max_error = errors.back();
    out.p99_error = errors[std::min(errors.size() - 1, std::size_t(0.99 * double(errors.size())))];
    return out;
}

}  // namespace recon
