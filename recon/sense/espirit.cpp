#include "recon/sense/espirit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <Eigen/Dense>

#include "recon/core/errors.hpp"
#include "recon/sense/calibration.hpp"
#include "recon/sense/small_linalg.hpp"

namespace recon {

CoilMaps estimateCoilMapsEspirit(Backend& backend, const Dataset& data, const EspiritOptions& opts,
                                 const Progress& progress, EspiritDetails* details) {
    const Grid& g = data.grid;
    const int coils = data.coils;
    if (coils < 2) throw InputError("ESPIRiT coil maps: the data set has one coil; SENSE needs several");
    if (opts.kernel < 1 || opts.kernel > 16)
        throw InputError("ESPIRiT coil maps: the kernel size must lie in [1, 16], got " + std::to_string(opts.kernel));
    int smallest_side = opts.calibration;
    for (int a = 0; a < g.dims; ++a) smallest_side = std::min(smallest_side, g.n[std::size_t(a)]);
    if (smallest_side < opts.kernel)
        throw InputError("ESPIRiT coil maps: the calibration block (" + std::to_string(smallest_side) +
                         " on grid " + g.describe() + ") is smaller than the kernel (" + std::to_string(opts.kernel) + ")");
    if (!(opts.singular_value_threshold > 0 && opts.singular_value_threshold < 1))
        throw InputError("ESPIRiT coil maps: the singular value threshold must lie in (0, 1)");
    if (!(opts.eigenvalue_crop >= 0 && opts.eigenvalue_crop < 1))
        throw InputError("ESPIRiT coil maps: the eigenvalue crop must lie in [0, 1)");

    // 1. Calibration data, coil after coil, each a cal block (k = -cal/2 .. cal/2 - 1 per axis).
    const CalibrationBlocks blocks =
        fitCalibrationBlocks(backend, data, opts.calibration, opts.calibration_iterations, progress.part(0, 0.3));
    progress.update(0.3);
    const ComplexArray& calib = blocks.values;
    // Per axis: the block, the kernel and the kernel-difference block (2 kernel - 1).
    const BlockShape& cal = blocks.shape;
    BlockShape ker{1, 1, 1}, diff{1, 1, 1};
    for (int a = 0; a < g.dims; ++a) {
        ker[std::size_t(a)] = opts.kernel;
        diff[std::size_t(a)] = 2 * opts.kernel - 1;
    }
    const std::size_t ker_points = blockPoints(ker), voxels = g.voxels();

    // 2. The calibration matrix (one row per patch position) and its row space. The right
    // singular vectors are the eigenvectors of A^H A (sigma^2 its eigenvalues), on the backend:
    // 3D with 8 coils makes A^H A 1728 x 1728. The projection P = V V^H on the row space
    // (sigma^2 >= threshold * sigma_max^2) there too.
    CalibrationMatrix matrix;
    matrix.block = cal;
    matrix.kernel = ker;
    matrix.coils = coils;
    matrix.values = calib;
    const Eigen::Index columns = Eigen::Index(matrix.cols());
    std::vector<double> gram_values;
    std::size_t kept = 0;
    ComplexArray projection;
    backend.calibrationProjection(matrix, opts.singular_value_threshold, gram_values, kept, projection);
    progress.update(0.5);
    std::vector<double> sigma(static_cast<std::size_t>(columns));
    for (Eigen::Index i = 0; i < columns; ++i) sigma[std::size_t(i)] = std::sqrt(std::max(0.0, gram_values[std::size_t(columns - 1 - i)]));

    // 3. G(x) = sum_delta a_cc'(delta) exp(-i 2 pi delta . x), with delta = kappa' - kappa and
    // a_cc'(delta) = (1/kernel^d) sum over kappa' - kappa = delta of conj(P)[(c, kappa), (c', kappa')]
    // (derivation: docs/CONVENTIONS.md). A's rows are the patches' transposes: A = U Sigma V^H puts
    // the patches (as columns) in the span of conj(V), so the projection on them is conj(V V^H).
    // The kernels here (pairs x (2 kernel - 1)^d values); their images on the backend.
    CoilField field;
    field.coils = coils;
    field.coil_blocks = taperedCalibrationBlocks(blocks);
    field.object_threshold = opts.mask_threshold;
    field.pair_blocks.shape = diff;
    field.pair_blocks.sign = -1;
    for (int a_ = 0; a_ < g.dims; ++a_) field.pair_blocks.first[std::size_t(a_)] = 1 - opts.kernel;
    const std::size_t pairs = std::size_t(coils) * std::size_t(coils + 1) / 2, diff_points = blockPoints(diff);
    field.pair_blocks.values.assign(pairs * diff_points, cdouble(0));
    auto kernelIndex = [&](int kx, int ky, int kz) {
        return (std::size_t(kz) * std::size_t(ker[1]) + std::size_t(ky)) * std::size_t(ker[0]) + std::size_t(kx);
    };
    const Eigen::Map<const Eigen::MatrixXcd> p(projection.data(), columns, columns);
#pragma omp parallel for schedule(dynamic)
    for (std::ptrdiff_t pair = 0; pair < std::ptrdiff_t(pairs); ++pair) {
        int r = 0, rest = int(pair);  // pair = r n - r (r - 1) / 2 + c - r
        while (rest >= coils - r) rest -= coils - r++;
        const int c = r + rest;
        cdouble* kernel = field.pair_blocks.values.data() + std::size_t(pair) * diff_points;
        for (int z0 = 0; z0 < ker[2]; ++z0)
            for (int y0 = 0; y0 < ker[1]; ++y0)
                for (int x0 = 0; x0 < ker[0]; ++x0) {
                    const Eigen::Index row = Eigen::Index(std::size_t(r) * ker_points + kernelIndex(x0, y0, z0));
                    for (int z1 = 0; z1 < ker[2]; ++z1)
                        for (int y1 = 0; y1 < ker[1]; ++y1)
                            for (int x1 = 0; x1 < ker[0]; ++x1) {
                                const Eigen::Index col = Eigen::Index(std::size_t(c) * ker_points + kernelIndex(x1, y1, z1));
                                const std::size_t d = (std::size_t(z1 - z0 + ker[2] - 1) * std::size_t(diff[1]) +
                                                       std::size_t(y1 - y0 + ker[1] - 1)) * std::size_t(diff[0]) +
                                                      std::size_t(x1 - x0 + ker[0] - 1);
                                kernel[d] += std::conj(p(row, col));
                            }
                }
        for (std::size_t d = 0; d < diff_points; ++d) kernel[d] /= double(ker_points);
    }
    progress.update(0.55);

    // 4. On the backend: the object (the root sum of squares of the calibration block's coil
    // images), G(x) and its dominant eigenvector per voxel of the object (the maps are zero
    // elsewhere); the eigenvalue decides the mask.
    CoilFieldEigen eig = backend.coilFieldEigenvectors(g, field, progress.part(0.55, 1));
    std::vector<std::uint8_t> mask(voxels);
    for (std::size_t v = 0; v < voxels; ++v) mask[v] = eig.values[v] >= opts.eigenvalue_crop && eig.object[v] ? 1 : 0;
    if (details) {
        details->kernels_kept = int(kept);
        details->kernels_total = int(columns);
        details->singular_values = sigma;
        details->eigenvalues = eig.values;
    }
    return assembleCoilMaps(std::move(eig.vectors), coils, std::move(mask), blocks.strongest, "espirit");
}

}  // namespace recon
