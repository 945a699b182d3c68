#include "recon/cuda/nufft_samples.hpp"

#include <cmath>
#include <cstddef>

namespace recon::cuda {

SortedSamples sortSamplesByBin(const Trajectory& t, const SampleGrid& grid, const std::array<int, 3>& G, int W) {
    const int dims = grid.dims;
    const std::size_t M = t.samples();
    // Per-sample first cell and offset in float64 (as the CPU plan does), so the device
    // evaluates the kernel at offsets exact to its own precision.
    std::vector<int> start(3 * M, 0);
    std::vector<double> offset(3 * M, 0.0);
    std::vector<std::uint64_t> key(M, 0);
    const int bin = dims == 3 ? 16 : 32;
    std::array<int, 3> nbins{1, 1, 1};
    for (int a = 0; a < dims; ++a) nbins[a] = (G[a] + bin - 1) / bin;
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t mi = 0; mi < std::ptrdiff_t(M); ++mi) {
        const std::size_t m = std::size_t(mi);
        std::uint64_t k = 0;
        for (int a = dims - 1; a >= 0; --a) {
            double p = t.k[3 * m + a] * grid.spacing[a] * G[a];
            p -= std::floor(p / G[a]) * G[a];
            const int s = int(std::ceil(p - 0.5 * W));
            start[3 * m + a] = s;
            offset[3 * m + a] = s - p;
            const int cell = ((s % G[a]) + G[a]) % G[a];
            k = k * std::uint64_t(nbins[a]) + std::uint64_t(cell / bin);
        }
        key[m] = k;
    }
    // Counting sort by bin (stable, O(M)): samples of one bin end up in consecutive threads.
    const std::size_t binCount = std::size_t(nbins[0]) * nbins[1] * nbins[2];
    std::vector<std::uint32_t> first(binCount + 1, 0);
    SortedSamples r;
    r.order.resize(M);
    for (std::size_t m = 0; m < M; ++m) ++first[key[m] + 1];
    for (std::size_t b = 0; b < binCount; ++b) first[b + 1] += first[b];
    for (std::size_t m = 0; m < M; ++m) r.order[first[key[m]]++] = std::uint32_t(m);
    r.start.resize(3 * M);
    r.offset.resize(3 * M);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t ii = 0; ii < std::ptrdiff_t(M); ++ii) {
        const std::size_t i = std::size_t(ii), from = 3 * std::size_t(r.order[i]);
        for (int a = 0; a < 3; ++a) {
            r.start[3 * i + a] = start[from + a];
            r.offset[3 * i + a] = offset[from + a];
        }
    }
    return r;
}

}  // namespace recon::cuda
