#include "recon/sense/coil_maps.hpp"

#include <algorithm>
#include <cmath>

#include "recon/core/errors.hpp"

namespace recon {

CoilMaps estimateCoilMapsLowResolution(Backend& backend, const Dataset& data, const std::vector<double>& density,
                                       const LowResolutionMapOptions& opts, const Progress& progress) {
    if (data.coils < 2) throw InputError("coil maps: the data set has one coil; SENSE needs several");
    if (!(opts.calibration_radius > 0)) throw InputError("coil maps: the calibration radius must be > 0");
    if (!(opts.mask_threshold >= 0 && opts.mask_threshold < 1))
        throw InputError("coil maps: the mask threshold must lie in [0, 1)");
    const std::size_t m_count = data.samples(), voxels = data.grid.voxels();
    if (density.size() != m_count) throw InputError("coil maps: density weights do not match the samples");
    const Trajectory& t = data.trajectory;
    std::vector<double> taper(m_count);
    for (std::size_t m = 0; m < m_count; ++m) {
        const double r = std::sqrt(t.kx(m) * t.kx(m) + t.ky(m) * t.ky(m) + t.kz(m) * t.kz(m));
        taper[m] = r < opts.calibration_radius ? density[m] * 0.5 * (1 + std::cos(kPi * r / opts.calibration_radius)) : 0.0;
    }
    CoilMaps out;
    out.coils = data.coils;
    out.source = "low-resolution";
    out.maps.resize(std::size_t(data.coils) * voxels);
    std::vector<double> rss(voxels, 0.0);
    std::vector<double> coil_energy(std::size_t(data.coils), 0.0);
    for (int c = 0; c < data.coils; ++c) {
        ComplexArray weighted(m_count), img;
        for (std::size_t m = 0; m < m_count; ++m) weighted[m] = taper[m] * data.coil(c)[m];
        backend.grid(t, weighted, data.grid, kaiserBesselGridding(), img, progress);
        std::copy(img.begin(), img.end(), out.maps.begin() + std::ptrdiff_t(std::size_t(c) * voxels));
        for (std::size_t v = 0; v < voxels; ++v) {
            rss[v] += std::norm(img[v]);
            coil_energy[std::size_t(c)] += std::norm(img[v]);
        }
    }
    double rss_max = 0;
    for (auto& r : rss) rss_max = std::max(rss_max, r = std::sqrt(r));
    if (!(rss_max > 0)) throw InputError("coil maps: the centre of k-space holds no signal");
    const int reference = int(std::max_element(coil_energy.begin(), coil_energy.end()) - coil_energy.begin());
    out.mask.assign(voxels, 0);
    for (std::size_t v = 0; v < voxels; ++v) {
        const bool inside = rss[v] > opts.mask_threshold * rss_max;
        out.mask[v] = inside ? 1 : 0;
        const cdouble ref = out.maps[std::size_t(reference) * voxels + v];
        const cdouble phase = std::abs(ref) > 0 ? std::conj(ref) / std::abs(ref) : cdouble(1);
        for (int c = 0; c < data.coils; ++c) {
            cdouble& s = out.maps[std::size_t(c) * voxels + v];
            s = inside ? s * phase / rss[v] : cdouble(0);
        }
    }
    return out;
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

}  // namespace recon
