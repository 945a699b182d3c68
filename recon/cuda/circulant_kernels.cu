#include "recon/cuda/circulant_kernels.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/device_math.cuh"

namespace recon::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocksFor(std::size_t n) {
    const std::size_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 1 ? 1 : b);
}

template <class V>
__global__ void foldKernel(int3 n, int3 src, int3 offset, const int* index, const double* weight, const V* kernel, V* out) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const std::size_t voxels = std::size_t(n.x) * n.y * n.z;
    if (i >= voxels) return;
    const int x = int(i % n.x), y = int((i / n.x) % n.y), z = int(i / (std::size_t(n.x) * n.y));
    double re = 0, im = 0;
    for (int jz = 0; jz < 2; ++jz) {
        const double wz = weight[offset.z + 2 * z + jz];
        if (wz == 0) continue;
        const std::size_t iz = std::size_t(index[offset.z + 2 * z + jz]);
        for (int jy = 0; jy < 2; ++jy) {
            const double wy = weight[offset.y + 2 * y + jy];
            if (wy == 0) continue;
            const std::size_t row = (iz * src.y + std::size_t(index[offset.y + 2 * y + jy])) * src.x;
            for (int jx = 0; jx < 2; ++jx) {
                const double w = wz * wy * weight[offset.x + 2 * x + jx];
                if (w == 0) continue;
                const V v = kernel[row + std::size_t(index[offset.x + 2 * x + jx])];
                re += w * v.x;
                im += w * v.y;
            }
        }
    }
    out[i].x = re;
    out[i].y = im;
}

template <class V>
__global__ void realPartKernel(V* x, std::size_t n, bool nonnegative) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    x[i].x = nonnegative && !(x[i].x > 0) ? 0 : x[i].x;
    x[i].y = 0;
}

template <class V>
__global__ void thresholdMaskKernel(const V* g, std::size_t n, double threshold, V* inside, V* outside) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const bool in = double(g[i].x) > threshold;
    inside[i].x = in ? 1 : 0;
    inside[i].y = 0;
    outside[i].x = in ? 0 : 1;
    outside[i].y = 0;
}

template <class V, class S>
__global__ void scaledRealKernel(const V* x, double scale, S* out, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = S(scale * x[i].x);
}

// result[0]: the largest max(Re x, 0) as the bits of a float64 (for values >= 0 their order as
// unsigned integers is the numbers'); result[1]: non-zero where a value is not finite.
template <class V>
__global__ void largestKernel(const V* x, std::size_t n, unsigned long long* result) {
    double best = 0;
    bool bad = false;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const double v = x[i].x;
        if (!isfinite(v)) bad = true;
        else if (v > best) best = v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        best = fmax(best, __shfl_down_sync(0xffffffffu, best, o));
        bad = __shfl_down_sync(0xffffffffu, int(bad), o) != 0 || bad;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&result[0], static_cast<unsigned long long>(__double_as_longlong(best)));
        if (bad) atomicOr(&result[1], 1ull);
    }
}

template <class V>
__global__ void inversePowerKernel(V* m, std::size_t n, double largest, double exponent, double floor) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    // (m/m_max)^{-p} / m_max, as the host's reference (float64 whatever the vectors' precision).
    m[i].x = pow(fmax(double(m[i].x), floor * largest) / largest, -exponent) / largest;
    m[i].y = 0;
}

}  // namespace

template <class T>
void circulantFold(std::array<int, 3> n, std::array<int, 3> source, std::array<int, 3> offset, const int* index,
                   const double* weight, const std::complex<T>* kernel, std::complex<T>* out, cudaStream_t s) {
    const std::size_t voxels = std::size_t(n[0]) * n[1] * n[2];
    foldKernel<<<blocksFor(voxels), kThreads, 0, s>>>(make_int3(n[0], n[1], n[2]), make_int3(source[0], source[1], source[2]),
                                                       make_int3(offset[0], offset[1], offset[2]), index, weight, dev(kernel), dev(out));
    check(cudaGetLastError(), "circulant fold");
}

template <class T>
void keepRealPart(std::complex<T>* x, std::size_t n, bool nonnegative, cudaStream_t s) {
    realPartKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(x), n, nonnegative);
    check(cudaGetLastError(), "circulant eigenvalues");
}

template <class T>
void scaledRealPart(const std::complex<T>* x, double scale, T* out, std::size_t n, cudaStream_t s) {
    scaledRealKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(x), scale, out, n);
    check(cudaGetLastError(), "circulant spectrum");
}

template <class T>
double largestRealPart(const std::complex<T>* x, std::size_t n, cudaStream_t s) {
    DeviceBuffer<unsigned long long> result(2, "circulant eigenvalues' maximum");
    result.fill0(s);
    const unsigned blocks = blocksFor(n) < 1024 ? blocksFor(n) : 1024;
    largestKernel<<<blocks, kThreads, 0, s>>>(dev(x), n, result.data());
    check(cudaGetLastError(), "circulant eigenvalues' maximum");
    unsigned long long host[2];
    result.download(host, 2, s);
    if (host[1]) return std::numeric_limits<double>::quiet_NaN();
    double largest;
    static_assert(sizeof(largest) == sizeof(host[0]));
    std::memcpy(&largest, &host[0], sizeof(largest));
    return largest;
}

template <class T>
void inverseCirculantPowerKernel(std::complex<T>* m, std::size_t n, double largest, double exponent, double floor,
                                 cudaStream_t s) {
    inversePowerKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(m), n, largest, exponent, floor);
    check(cudaGetLastError(), "circulant M^-p");
}

template <class T>
void thresholdMasks(const std::complex<T>* g, std::size_t n, double threshold, std::complex<T>* inside, std::complex<T>* outside,
                    cudaStream_t s) {
    thresholdMaskKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(g), n, threshold, dev(inside), dev(outside));
    check(cudaGetLastError(), "threshold masks");
}

#define RECON_CIRCULANT_INSTANTIATE(T)                                                                                   \
    template void circulantFold<T>(std::array<int, 3>, std::array<int, 3>, std::array<int, 3>, const int*, const double*, \
                                   const std::complex<T>*, std::complex<T>*, cudaStream_t);                              \
    template void keepRealPart<T>(std::complex<T>*, std::size_t, bool, cudaStream_t);                                    \
    template void scaledRealPart<T>(const std::complex<T>*, double, T*, std::size_t, cudaStream_t);                      \
    template double largestRealPart<T>(const std::complex<T>*, std::size_t, cudaStream_t);                               \
    template void inverseCirculantPowerKernel<T>(std::complex<T>*, std::size_t, double, double, double, cudaStream_t); \
    template void thresholdMasks<T>(const std::complex<T>*, std::size_t, double, std::complex<T>*, std::complex<T>*, cudaStream_t);
RECON_CIRCULANT_INSTANTIATE(float)
RECON_CIRCULANT_INSTANTIATE(double)

}  // namespace recon::cuda
