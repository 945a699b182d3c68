#include "recon/core/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "recon/core/errors.hpp"

namespace recon {
namespace {
// Largest sum of |d|^2 accepted: eight orders of magnitude below float32's range.
constexpr double kMaxKspaceEnergy = 1e30;
bool finite(const cdouble& v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
}  // namespace

void Dataset::validate(const std::string& origin) const {
    auto fail = [&](const std::string& what) { throw InputError(origin + ": " + what); };
    if (grid.dims != 2 && grid.dims != 3) fail("grid must be 2D or 3D, not " + std::to_string(grid.dims) + "D");
    for (int a = 0; a < 3; ++a) {
        if (grid.n[a] < 1) fail("grid size " + grid.describe() + " has an empty axis");
        if (a >= grid.dims && grid.n[a] != 1) fail("a 2D grid must have n_z = 1");
        if (grid.n[a] > 4096) fail("grid axis of " + std::to_string(grid.n[a]) + " voxels is absurdly large (limit 4096)");
    }
    if (grid.voxels() > (std::size_t(1) << 30)) fail("grid " + grid.describe() + " has more than 2^30 voxels");
    if (trajectory.dims != grid.dims)
        fail("trajectory is " + std::to_string(trajectory.dims) + "D but the grid is " + std::to_string(grid.dims) + "D");
    if (trajectory.k.size() % 3 != 0) fail("trajectory array length is not a multiple of 3");
    const std::size_t M = samples();
    if (M == 0) fail("trajectory has no samples");
    if (coils < 1) fail("number of coils must be at least 1");
    if (kspace.size() != std::size_t(coils) * M)
        fail("k-space has " + std::to_string(kspace.size()) + " values but the trajectory has " + std::to_string(M) +
             " samples x " + std::to_string(coils) + " coil(s)");
    std::string why;
    if (!trajectoryInBand(grid, trajectory, &why)) fail("trajectory: " + why);
    // The passes over k-space and the images in parallel: a 128^3 data set of 8 coils holds 2.3 million values.
    const std::int64_t values = std::int64_t(kspace.size());
    std::int64_t bad = values;  // the first value that is not finite
    double peak = 0;
#pragma omp parallel for reduction(min : bad) reduction(max : peak) schedule(static) if (values > 65536)
    for (std::int64_t i = 0; i < values; ++i) {
        const cdouble& d = kspace[std::size_t(i)];
        if (!finite(d)) bad = std::min(bad, i);
        else peak = std::max(peak, std::max(std::abs(d.real()), std::abs(d.imag())));
    }
    if (bad < values)
        fail("k-space value " + std::to_string(std::size_t(bad) % M) + " of coil " + std::to_string(std::size_t(bad) / M) +
             " is NaN or Inf");
    if (!density.empty()) {
        if (density.size() != M)
            fail("density weights have " + std::to_string(density.size()) + " values, trajectory has " + std::to_string(M));
        bool any_positive = false;
        for (std::size_t m = 0; m < M; ++m) {
            if (!std::isfinite(density[m]) || density[m] < 0) fail("density weight " + std::to_string(m) + " is negative, NaN or Inf");
            any_positive = any_positive || density[m] > 0;
        }
        if (!any_positive) fail("density weights are all zero: gridding would discard every sample");
    }
    // Gridding and CG form sums of |d|^2 over all samples; in single precision
    // (largest 3.4e38) they overflow to Inf and give NaN images long before a
    // single value does. Refused here, with the remedy, rather than computed.
    double energy = 0;
    if (peak > 0 && peak < kMaxKspaceEnergy) {
#pragma omp parallel for reduction(+ : energy) schedule(static) if (values > 65536)
        for (std::int64_t i = 0; i < values; ++i) energy += std::norm(kspace[std::size_t(i)] / peak);
    }
    if (peak >= kMaxKspaceEnergy || energy * peak * peak > kMaxKspaceEnergy)
        fail("k-space values reach " + formatNumber(peak) + ": sums of |d|^2 over the " + std::to_string(kspace.size()) +
             " values would exceed " + formatNumber(kMaxKspaceEnergy) +
             " and overflow single precision (largest 3.4e38) in gridding and CG; scale the data down, e.g. so "
             "that the largest value is near 1");
    if (!noise.empty() && noise.size() % std::size_t(coils) != 0)
        fail(std::to_string(noise.size()) + " noise samples do not split into " + std::to_string(coils) + " coils");
    for (const auto& v : noise)
        if (!finite(v)) fail("the noise samples contain NaN or Inf");
    for (const auto* img : {&truth, &reference}) {
        if (img->empty()) continue;
        const char* what = img == &truth ? "true image" : "reference image";
        if (img->size() != grid.voxels())
            fail(std::string(what) + " has " + std::to_string(img->size()) + " voxels, the grid " + grid.describe() +
                 " has " + std::to_string(grid.voxels()));
        const std::int64_t voxels = std::int64_t(img->size());
        int nonfinite = 0;
#pragma omp parallel for reduction(max : nonfinite) schedule(static) if (voxels > 65536)
        for (std::int64_t i = 0; i < voxels; ++i) nonfinite = std::max(nonfinite, finite((*img)[std::size_t(i)]) ? 0 : 1);
        if (nonfinite) fail(std::string(what) + " contains NaN or Inf");
    }
}

MemoryEstimate estimateReconstructionMemory(const Grid& g, std::size_t samples, int coils, Precision precision,
                                            double q_oversampling) {
    const std::size_t c = precision == Precision::Single ? 8 : 16;  // a complex value on the backend
    const std::size_t h = 16;                                       // on the host (complex<double>)
    const std::size_t n = g.voxels();
    const std::size_t n2 = g.doubled().voxels();          // the 2N grid; also gridding's sigma = 2 grid
    std::size_t n4 = 1;                                     // Q's NUFFT grid: sigma on the 2N grid
    for (int a = 0; a < g.dims; ++a)
        n4 *= std::size_t(std::ceil(q_oversampling * double(2 * g.n[std::size_t(a)])));
    const std::size_t M = samples, C = std::size_t(std::max(coils, 1));
    const std::size_t plan = 40 * M;  // a NUFFT plan per sample: position, first cell, bucket
    MemoryEstimate e;
    // Pipe-Menon (in double on the host) or one gridding: oversampled grid, plan, weighted data;
    // each coil's image stays until the sum of squares.
    const std::size_t pipe_menon = n2 * h + plan + 3 * M * h;
    const std::size_t one_gridding = n2 * c + plan + M * (h + c) + n * (c + h);
    // + Pipe-Menon's kept kernel weights (3 x 4 doubles per sample; NufftPlan::keepKernelWeights): freed
    // before gridding, but measured to stay in the process's peak (the allocator keeps them).
    e.gridding = std::max(pipe_menon, one_gridding) + C * n * h + 2 * n * h + 96 * M;
    // Q by NUFFT (its grid, the plan, Q itself on host and backend), then the solve: CG's x, r, p,
    // Ap, b, two per-term images, two term outputs, the Toeplitz kernel and its 2N work grid,
    // F^H d per coil; the gridding images and the coil images of a sum of squares stay. A lambda
    // change by recycling (SolveOptions::kept_directions' default 0) keeps x_c and its two term
    // products: three images more.
    const std::size_t q_stage = n4 * c + plan + M * (h + c) + n2 * (c + h);
    const std::size_t cg = 12 * n * c + 2 * n2 * c + C * n * c + C * n * h;
    e.solve = std::max(q_stage, cg) + 2 * n * h;
    return e;
}

std::size_t estimateReconstructionBytes(const Grid& g, std::size_t samples, Precision precision) {
    return estimateReconstructionMemory(g, samples, 1, precision).peak();
}

}  // namespace recon
