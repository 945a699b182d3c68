#include "recon/cuda/prior_kernels.hpp"

#include <algorithm>
#include <string>

#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/device_math.cuh"

namespace recon::cuda {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 1u << 20;  // grid-stride beyond this

unsigned blocksFor(std::size_t n) { return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks)); }

struct Shape {
    int n[3];
    int dims;
};

template <class V>
__device__ inline V csub(V a, V b) {
    a.x -= b.x;
    a.y -= b.y;
    return a;
}
// conj(w) v
template <class V>
__device__ inline V conjMul(V w, V v) {
    V r;
    r.x = w.x * v.x + w.y * v.y;
    r.y = w.x * v.y - w.y * v.x;
    return r;
}

// One thread per voxel: forward writes the voxel's dims differences; adjoint and normal gather the
// (at most 2 dims) differences that touch it.
template <class V>
__global__ void gradientKernel(Shape sh, const V* w, Product p, const V* x, V* y, std::size_t nvox) {
    const std::size_t st[3] = {1, std::size_t(sh.n[0]), std::size_t(sh.n[0]) * sh.n[1]};
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < nvox; i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t r = i / std::size_t(sh.n[0]);
        const int pos[3] = {int(i - r * std::size_t(sh.n[0])), int(r % std::size_t(sh.n[1])), int(r / std::size_t(sh.n[1]))};
        if (p == Product::Forward) {
#pragma unroll
            for (int a = 0; a < 3; ++a) {
                if (a >= sh.dims) break;
                V out = cmake<V>(0, 0);
                if (pos[a] + 1 < sh.n[a]) {
                    out = csub(x[i + st[a]], x[i]);
                    if (w) out = cmul(w[a * nvox + i], out);
                }
                y[a * nvox + i] = out;
            }
            continue;
        }
        V acc = cmake<V>(0, 0);
        const V xi = x[i];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
            if (a >= sh.dims) break;
            const bool has_prev = pos[a] >= 1, has_next = pos[a] + 1 < sh.n[a];
            if (p == Product::Adjoint) {
                // D^T (conj(w) .* x): +value of the difference ending here, -value of the one starting here.
                if (has_prev) {
                    const std::size_t j = a * nvox + i - st[a];
                    const V v = w ? conjMul(w[j], x[j]) : x[j];
                    acc.x += v.x;
                    acc.y += v.y;
                }
                if (has_next) {
                    const std::size_t j = a * nvox + i;
                    const V v = w ? conjMul(w[j], x[j]) : x[j];
                    acc.x -= v.x;
                    acc.y -= v.y;
                }
            } else {
                // D^T |w|^2 D x in one pass.
                if (has_prev) {
                    const V d = csub(xi, x[i - st[a]]);
                    const auto c = w ? w[a * nvox + i - st[a]].x * w[a * nvox + i - st[a]].x +
                                           w[a * nvox + i - st[a]].y * w[a * nvox + i - st[a]].y
                                     : decltype(d.x)(1);
                    acc.x += c * d.x;
                    acc.y += c * d.y;
                }
                if (has_next) {
                    const V d = csub(x[i + st[a]], xi);
                    const auto c = w ? w[a * nvox + i].x * w[a * nvox + i].x + w[a * nvox + i].y * w[a * nvox + i].y
                                     : decltype(d.x)(1);
                    acc.x -= c * d.x;
                    acc.y -= c * d.y;
                }
            }
        }
        y[i] = acc;
    }
}

template <class S>
struct Filter {
    int taps;
    S h[VectorSpace::kMaxWaveletTaps];  // low-pass
    S g[VectorSpace::kMaxWaveletTaps];  // high-pass, g[k] = (-1)^k h[taps-1-k]
};

// One thread per voxel of the extent: inside the box the level's analysis (or synthesis) along
// the axis, gathered from the line's taps; elsewhere a copy.
template <class V, class S>
__global__ void waveletLevelKernel(Shape sh, int axis, int3 box, int3 ext, Filter<S> f, bool inverse, const V* x, V* y,
                                   std::size_t count) {
    const std::size_t st[3] = {1, std::size_t(sh.n[0]), std::size_t(sh.n[0]) * sh.n[1]};
    const std::size_t s = st[axis];
    const int len = axis == 0 ? box.x : axis == 1 ? box.y : box.z, half = len / 2;
    for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count; e += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t r = e / std::size_t(ext.x);
        const int ix = int(e - r * std::size_t(ext.x)), iy = int(r % std::size_t(ext.y)), iz = int(r / std::size_t(ext.y));
        const std::size_t v = (std::size_t(iz) * sh.n[1] + iy) * sh.n[0] + ix;
        if (ix >= box.x || iy >= box.y || iz >= box.z) {
            y[v] = x[v];
            continue;
        }
        const int j = axis == 0 ? ix : axis == 1 ? iy : iz;
        const std::size_t base = v - std::size_t(j) * s;
        S re = 0, im = 0;
        if (!inverse) {
            const bool high = j >= half;
            const int m = high ? j - half : j;
            for (int k = 0; k < f.taps; ++k) {
                const V in = x[base + std::size_t((2 * m + k) % len) * s];
                const S c = high ? f.g[k] : f.h[k];
                re += c * in.x;
                im += c * in.y;
            }
        } else {
            for (int k = 0; k < f.taps; ++k) {
                const int q = ((j - k) % len + len) % len;
                if (q % 2 != 0) continue;
                const V lo = x[base + std::size_t(q / 2) * s], hi = x[base + std::size_t(half + q / 2) * s];
                re += f.h[k] * lo.x + f.g[k] * hi.x;
                im += f.h[k] * lo.y + f.g[k] * hi.y;
            }
        }
        y[v] = cmake<V>(re, im);
    }
}

}  // namespace

template <class T>
void gradientStencil(std::array<int, 3> n, int dims, const std::complex<T>* weights, Product p, const std::complex<T>* x,
                     std::complex<T>* y, cudaStream_t s) {
    const std::size_t nvox = std::size_t(n[0]) * n[1] * n[2];
    gradientKernel<<<blocksFor(nvox), kThreads, 0, s>>>(Shape{{n[0], n[1], n[2]}, dims}, dev(weights), p, dev(x), dev(y), nvox);
    checkLaunch("gradient");
}

template <class T>
void waveletLevelStencil(std::array<int, 3> n, int axis, std::array<int, 3> box, std::array<int, 3> extent,
                         const std::vector<double>& lowpass, bool inverse, const std::complex<T>* x, std::complex<T>* y,
                         cudaStream_t s) {
    Filter<T> f{};
    f.taps = int(lowpass.size());
    for (int k = 0; k < f.taps; ++k) {
        f.h[k] = T(lowpass[std::size_t(k)]);
        f.g[k] = T((k % 2 == 0 ? 1.0 : -1.0) * lowpass[std::size_t(f.taps - 1 - k)]);
    }
    const std::size_t count = std::size_t(extent[0]) * extent[1] * extent[2];
    waveletLevelKernel<<<blocksFor(count), kThreads, 0, s>>>(Shape{{n[0], n[1], n[2]}, 0}, axis, make_int3(box[0], box[1], box[2]),
                                                            make_int3(extent[0], extent[1], extent[2]), f, inverse, dev(x),
                                                            dev(y), count);
    checkLaunch("waveletLevel");
}

#define RECON_PRIOR_KERNELS_INSTANTIATE(T)                                                                            \
    template void gradientStencil<T>(std::array<int, 3>, int, const std::complex<T>*, Product, const std::complex<T>*, \
                                     std::complex<T>*, cudaStream_t);                                                 \
    template void waveletLevelStencil<T>(std::array<int, 3>, int, std::array<int, 3>, std::array<int, 3>,             \
                                         const std::vector<double>&, bool, const std::complex<T>*, std::complex<T>*,   \
                                         cudaStream_t);

RECON_PRIOR_KERNELS_INSTANTIATE(float)
RECON_PRIOR_KERNELS_INSTANTIATE(double)

}  // namespace recon::cuda
