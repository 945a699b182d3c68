#include "recon/cuda/coil_eigen.hpp"

#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {
namespace {

__device__ inline double2 cmul(double2 a, double2 b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
__device__ inline double2 conjugate(double2 a) { return {a.x, -a.y}; }

// Cyclic Jacobi on the full matrix a (row-major, n x n, Hermitian) with the rotations gathered
// in v: each pivot (p, q) first turns a_pq real by a phase on column/row q, then a real rotation
// zeroes it (Numerical Recipes' jacobi, with t the smaller root). Converges quadratically; a
// sweep is n (n - 1) / 2 rotations.
template <int MAX>
__global__ void dominantEigenKernel(int n, std::size_t voxels, const double2* __restrict__ upper,
                                    double2* __restrict__ vectors, double* __restrict__ values) {
    const std::size_t voxel = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (voxel >= voxels) return;
    double2 a[MAX * MAX], v[MAX * MAX];
    double frobenius = 0;
    for (int r = 0; r < n; ++r)
        for (int c = r; c < n; ++c) {
            const std::size_t pair = std::size_t(r) * n - std::size_t(r) * (r - 1) / 2 + std::size_t(c - r);
            double2 x = upper[pair * voxels + voxel];
            if (r == c) x.y = 0;
            a[r * MAX + c] = x;
            a[c * MAX + r] = conjugate(x);
            frobenius += (r == c ? 1 : 2) * (x.x * x.x + x.y * x.y);
        }
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) v[r * MAX + c] = {r == c ? 1.0 : 0.0, 0.0};
    for (int sweep = 0; sweep < 50; ++sweep) {
        double off = 0;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) off += a[p * MAX + q].x * a[p * MAX + q].x + a[p * MAX + q].y * a[p * MAX + q].y;
        if (!(off > 1e-30 * frobenius)) break;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                const double2 apq = a[p * MAX + q];
                const double g = hypot(apq.x, apq.y);
                if (!(g > 1e-300)) continue;
                // Column q (and row q) times e^{-i phi}, phi = arg a_pq: a_pq becomes g, real.
                const double2 e = {apq.x / g, -apq.y / g};
                for (int r = 0; r < n; ++r) {
                    if (r == q) continue;
                    a[r * MAX + q] = cmul(a[r * MAX + q], e);
                    a[q * MAX + r] = conjugate(a[r * MAX + q]);
                    v[r * MAX + q] = cmul(v[r * MAX + q], e);
                }
                v[q * MAX + q] = cmul(v[q * MAX + q], e);
                const double app = a[p * MAX + p].x, aqq = a[q * MAX + q].x;
                const double theta = (aqq - app) / (2 * g);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                const double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int r = 0; r < n; ++r) {
                    if (r == p || r == q) continue;
                    const double2 x = a[r * MAX + p], y = a[r * MAX + q];
                    a[r * MAX + p] = {c * x.x - s * y.x, c * x.y - s * y.y};
                    a[r * MAX + q] = {s * x.x + c * y.x, s * x.y + c * y.y};
                    a[p * MAX + r] = conjugate(a[r * MAX + p]);
                    a[q * MAX + r] = conjugate(a[r * MAX + q]);
                }
                a[p * MAX + p] = {app - t * g, 0};
                a[q * MAX + q] = {aqq + t * g, 0};
                a[p * MAX + q] = a[q * MAX + p] = {0, 0};
                for (int r = 0; r < n; ++r) {
                    const double2 x = v[r * MAX + p], y = v[r * MAX + q];
                    v[r * MAX + p] = {c * x.x - s * y.x, c * x.y - s * y.y};
                    v[r * MAX + q] = {s * x.x + c * y.x, s * x.y + c * y.y};
                }
            }
    }
    int best = 0;
    for (int k = 1; k < n; ++k)
        if (a[k * MAX + k].x > a[best * MAX + best].x) best = k;
    values[voxel] = a[best * MAX + best].x;
    for (int r = 0; r < n; ++r) vectors[std::size_t(r) * voxels + voxel] = v[r * MAX + best];
}

}  // namespace

void dominantEigenvectors(int n, std::size_t voxels, const double2* upper, double2* vectors, double* values,
                          cudaStream_t stream) {
    if (voxels == 0) return;
    constexpr int threads = 128;
    const unsigned blocks = unsigned((voxels + threads - 1) / threads);
    if (n <= 8)
        dominantEigenKernel<8><<<blocks, threads, 0, stream>>>(n, voxels, upper, vectors, values);
    else
        dominantEigenKernel<kMaxEigenCoils><<<blocks, threads, 0, stream>>>(n, voxels, upper, vectors, values);
    checkLaunch("dominantEigenKernel");
}

}  // namespace recon::cuda
