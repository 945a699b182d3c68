#include "recon/cuda/coil_eigen.hpp"

#include <algorithm>

#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {
namespace {

__device__ inline double2 cmul(double2 a, double2 b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
__device__ inline double2 conjugate(double2 a) { return {a.x, -a.y}; }

// A thread's matrix in shared memory, element-major: element k of thread t at k * stride + t, so
// a warp's accesses to one element are contiguous (no bank conflicts).
struct Strided {
    double2* p;
    unsigned stride;
    __device__ double2& operator[](int k) const { return p[std::size_t(k) * stride]; }
};

// Cyclic Jacobi on the full matrix a (row-major, n x n, Hermitian) with the rotations gathered
// in v: each pivot (p, q) first turns a_pq real by a phase on column/row q, then a real rotation
// zeroes it (Numerical Recipes' jacobi, with t the smaller root). Converges quadratically; a
// sweep is n (n - 1) / 2 rotations.
template <int MAX>
__global__ void dominantEigenKernel(int n, std::size_t voxels, const double2* __restrict__ upper,
                                    const std::uint32_t* __restrict__ index, std::size_t count,
                                    double2* __restrict__ vectors, double* __restrict__ values) {
    const std::size_t item = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (item >= count) return;
    const std::size_t voxel = index ? std::size_t(index[item]) : item;
    // Both matrices (2 KB per thread at MAX = 8) in shared memory: in local memory the resident
    // threads' matrices overflowed L1 and L2 and the kernel was bound by DRAM traffic.
    extern __shared__ double2 shared[];
    const Strided a{shared + threadIdx.x, blockDim.x}, v{shared + std::size_t(MAX) * MAX * blockDim.x + threadIdx.x, blockDim.x};
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

// out[(hi out_len + o) below + lo] = sum_i m[o len + i] in[(hi len + i) below + lo]: one output per thread.
__global__ void transformAxisKernel(const double2* __restrict__ in, double2* __restrict__ out, const double2* __restrict__ m,
                                    int len, int out_len, std::size_t below, std::size_t total) {
    const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const std::size_t lo = idx % below, t = idx / below;
    const int o = int(t % std::size_t(out_len));
    const std::size_t hi = t / std::size_t(out_len);
    const double2* src = in + hi * std::size_t(len) * below + lo;
    const double2* row = m + std::size_t(o) * std::size_t(len);
    double2 acc = {0, 0};
    for (int i = 0; i < len; ++i) {
        const double2 w = row[i], x = src[std::size_t(i) * below];
        acc.x += w.x * x.x - w.y * x.y;
        acc.y += w.x * x.y + w.y * x.x;
    }
    out[idx] = acc;
}

__global__ void rootSumOfSquaresKernel(const double2* __restrict__ images, int n, std::size_t voxels, double* __restrict__ rss) {
    const std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (v >= voxels) return;
    double s = 0;
    for (int c = 0; c < n; ++c) {
        const double2 x = images[std::size_t(c) * voxels + v];
        s += x.x * x.x + x.y * x.y;
    }
    rss[v] = sqrt(s);
}

// upper[pair (r, c)][v] = m_r(v) conj(m_c(v)), r <= c.
__global__ void outerProductsKernel(const double2* __restrict__ images, int n, std::size_t voxels, double2* __restrict__ upper) {
    const std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (v >= voxels) return;
    std::size_t pair = 0;
    for (int r = 0; r < n; ++r) {
        const double2 a = images[std::size_t(r) * voxels + v];
        for (int c = r; c < n; ++c, ++pair) upper[pair * voxels + v] = cmul(a, conjugate(images[std::size_t(c) * voxels + v]));
    }
}

// out = the sum over the (2 h + 1) box along one axis (length len, stride between neighbours),
// clipped at the edges; images of `voxels` values one after another.
__global__ void boxSumKernel(const double2* __restrict__ in, double2* __restrict__ out, std::size_t voxels, std::size_t total,
                             int len, std::size_t stride, int h) {
    const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int i = int((idx % voxels) / stride % std::size_t(len));
    const int from = max(0, i - h), to = min(len - 1, i + h);
    const double2* base = in + idx - std::size_t(i) * stride;
    double2 acc = {0, 0};
    for (int j = from; j <= to; ++j) {
        const double2 x = base[std::size_t(j) * stride];
        acc.x += x.x;
        acc.y += x.y;
    }
    out[idx] = acc;
}

unsigned blocksFor(std::size_t n, int threads) { return unsigned((n + std::size_t(threads) - 1) / std::size_t(threads)); }

// As many threads per block as the shared memory one block may opt in to holds (at most 96:
// 192 KB at MAX = 8), whole warps where possible.
template <int MAX>
void launchDominantEigen(int n, std::size_t voxels, const double2* upper, const std::uint32_t* index, std::size_t count,
                         double2* vectors, double* values, cudaStream_t stream) {
    constexpr std::size_t per_thread = 2 * std::size_t(MAX) * MAX * sizeof(double2);
    int device = 0, optin = 0;
    check(cudaGetDevice(&device), "dominantEigenvectors");
    check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "dominantEigenvectors");
    int threads = int(std::min<std::size_t>(96, std::size_t(optin) / per_thread));
    if (threads >= 32) threads -= threads % 32;
    threads = std::max(threads, 1);
    const std::size_t bytes = per_thread * std::size_t(threads);
    check(cudaFuncSetAttribute(dominantEigenKernel<MAX>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
          "dominantEigenvectors' shared memory");
    dominantEigenKernel<MAX><<<blocksFor(count, threads), threads, bytes, stream>>>(n, voxels, upper, index, count, vectors,
                                                                                   values);
    checkLaunch("dominantEigenKernel");
}

}  // namespace

void dominantEigenvectors(int n, std::size_t voxels, const double2* upper, double2* vectors, double* values,
                          cudaStream_t stream, const std::uint32_t* index, std::size_t count) {
    if (!index) count = voxels;
    if (count == 0) return;
    if (n <= 8)
        launchDominantEigen<8>(n, voxels, upper, index, count, vectors, values, stream);
    else
        launchDominantEigen<kMaxEigenCoils>(n, voxels, upper, index, count, vectors, values, stream);
}

void transformAxis(const double2* in, double2* out, const double2* m, int len, int out_len, std::size_t below,
                   std::size_t above, cudaStream_t stream) {
    const std::size_t total = above * std::size_t(out_len) * below;
    if (total == 0) return;
    transformAxisKernel<<<blocksFor(total, 256), 256, 0, stream>>>(in, out, m, len, out_len, below, total);
    checkLaunch("transformAxisKernel");
}

void rootSumOfSquares(const double2* images, int n, std::size_t voxels, double* rss, cudaStream_t stream) {
    if (voxels == 0) return;
    rootSumOfSquaresKernel<<<blocksFor(voxels, 256), 256, 0, stream>>>(images, n, voxels, rss);
    checkLaunch("rootSumOfSquaresKernel");
}

void outerProducts(const double2* images, int n, std::size_t voxels, double2* upper, cudaStream_t stream) {
    if (voxels == 0) return;
    outerProductsKernel<<<blocksFor(voxels, 256), 256, 0, stream>>>(images, n, voxels, upper);
    checkLaunch("outerProductsKernel");
}

void boxSum(const double2* in, double2* out, std::size_t images, std::size_t voxels, int len, std::size_t stride, int h,
            cudaStream_t stream) {
    const std::size_t total = images * voxels;
    if (total == 0) return;
    boxSumKernel<<<blocksFor(total, 256), 256, 0, stream>>>(in, out, voxels, total, len, stride, h);
    checkLaunch("boxSumKernel");
}

}  // namespace recon::cuda
