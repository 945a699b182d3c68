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

constexpr int kHaarThreads = 256;
struct HaarTiles {
    int n[3];       // the grid
    int splits[3];  // per axis; the tile is 2^splits voxels along it
    int levels;     // the largest split count
    std::size_t voxels, offset;
};

// The multilevel Haar transform of a tile in shared memory, in place with its coefficients
// interleaved (lifting order, not Mallat's): level l's split along `axis` turns each pair (p,
// p + 2^l e_axis), p on the level's grid (multiples of 2^min(l, splits) along every axis) and a
// multiple of 2^(l+1) along the axis, into (low, high) at the same two places. Every pair is
// independent of the others, so a split is one barrier and no staging; the threshold and the l1
// norm do not care where a coefficient sits, and the inverse undoes the same splits in reverse.
template <class V, class S>
__device__ void haarTransform(V* tile, const HaarTiles& h, const int side[3], bool inverse) {
    const S r = S(0.70710678118654752440);
    const int st[3] = {1, side[0], side[0] * side[1]};
    for (int step = 0; step < 3 * h.levels; ++step) {
        const int s = inverse ? 3 * h.levels - 1 - step : step, level = s / 3, axis = s % 3;
        if (level >= h.splits[axis]) continue;
        // The level's grid: every 2^min(level, splits) voxels per axis; the pairs' first members:
        // every 2^(level+1) along the axis.
        int spacing[3], count[3];
        for (int a = 0; a < 3; ++a) {
            spacing[a] = 1 << min(level, h.splits[a]);
            if (a == axis) spacing[a] *= 2;
            count[a] = side[a] / spacing[a];
        }
        const int pairs = count[0] * count[1] * count[2], gap = (1 << level) * st[axis];
        for (int p = int(threadIdx.x); p < pairs; p += kHaarThreads) {
            const int at = (p % count[0]) * spacing[0] * st[0] + (p / count[0] % count[1]) * spacing[1] * st[1] +
                           (p / count[0] / count[1]) * spacing[2] * st[2];
            const V u = tile[at], w = tile[at + gap];
            tile[at] = cmake<V>(r * (u.x + w.x), r * (u.y + w.y));
            tile[at + gap] = cmake<V>(r * (u.x - w.x), r * (u.y - w.y));
        }
        __syncthreads();
    }
}

// One block per tile of P x (P the cyclic shift): the multilevel Haar transform in shared memory,
// then either the soft threshold, the inverse and the store through P^H (`y` given), or only the
// coefficients' l1 norm; the block's sum of |coefficient| (after the threshold) goes to partial[block].
template <class V, class S>
__global__ void __launch_bounds__(kHaarThreads) haarTileKernel(HaarTiles h, S t, const V* x, V* y, double* partial) {
    extern __shared__ unsigned char haar_shared[];
    V* tile = reinterpret_cast<V*>(haar_shared);
    __shared__ double sums[kHaarThreads / 32];
    const int side[3] = {1 << h.splits[0], 1 << h.splits[1], 1 << h.splits[2]};
    const int volume = side[0] * side[1] * side[2];
    const int tiles0 = h.n[0] / side[0], tiles1 = h.n[1] / side[1];
    const int b = int(blockIdx.x);
    const int o0 = b % tiles0 * side[0], o1 = b / tiles0 % tiles1 * side[1], o2 = b / tiles0 / tiles1 * side[2];
    auto source = [&](int e) {
        const int i = e % side[0], j = e / side[0] % side[1], k = e / side[0] / side[1];
        const std::size_t v = (std::size_t(o2 + k) * h.n[1] + (o1 + j)) * h.n[0] + (o0 + i);
        return v >= h.offset ? v - h.offset : v + h.voxels - h.offset;  // (P x)[v] = x[(v - offset) mod n]
    };
    for (int e = int(threadIdx.x); e < volume; e += kHaarThreads) tile[e] = x[source(e)];
    __syncthreads();
    haarTransform<V, S>(tile, h, side, false);
    double sum = 0;
    for (int e = int(threadIdx.x); e < volume; e += kHaarThreads) {
        V c = tile[e];
        const S norm = sqrt(c.x * c.x + c.y * c.y);
        if (y) {
            const S factor = norm > t ? S(1) - t / norm : S(0);  // soft(c, t) without dividing by zero
            c.x *= factor;
            c.y *= factor;
            tile[e] = c;
            sum += double(factor) * norm;
        } else {
            sum += norm;
        }
    }
    if (partial) {
        for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d);
        if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = sum;
    }
    __syncthreads();
    if (partial && threadIdx.x == 0) {
        double block = 0;
        for (int w = 0; w < kHaarThreads / 32; ++w) block += sums[w];
        partial[blockIdx.x] = block;
    }
    if (!y) return;
    haarTransform<V, S>(tile, h, side, true);
    for (int e = int(threadIdx.x); e < volume; e += kHaarThreads) y[source(e)] = tile[e];
}

__global__ void sumKernel(const double* partial, int count, double* out) {
    __shared__ double sums[kHaarThreads];
    double acc = 0;
    for (int i = int(threadIdx.x); i < count; i += kHaarThreads) acc += partial[i];
    sums[threadIdx.x] = acc;
    __syncthreads();
    for (int d = kHaarThreads / 2; d > 0; d /= 2) {
        if (int(threadIdx.x) < d) sums[threadIdx.x] += sums[threadIdx.x + d];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = sums[0];
}

template <class T>
HaarTiles haarTiles(std::array<int, 3> n, std::array<int, 3> splits, std::size_t offset, int& blocks, std::size_t& shared) {
    HaarTiles h{{n[0], n[1], n[2]}, {splits[0], splits[1], splits[2]}, std::max({splits[0], splits[1], splits[2]}),
                std::size_t(n[0]) * n[1] * n[2], offset};
    blocks = (n[0] >> splits[0]) * (n[1] >> splits[1]) * (n[2] >> splits[2]);
    shared = (std::size_t(1) << (splits[0] + splits[1] + splits[2])) * sizeof(cx_t<T>);
    // A float64 tile of more than 2048 voxels needs more than the default 48 KB of dynamic shared
    // memory: opt in (per device, so on every such launch; float32 tiles never need it).
    if (shared > 48 * 1024)
        check(cudaFuncSetAttribute(haarTileKernel<cx_t<T>, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
              "Haar tile kernel's shared memory");
    return h;
}

}  // namespace

template <class T>
void haarShrinkTiles(std::array<int, 3> n, std::array<int, 3> splits, std::size_t offset, double t, const std::complex<T>* x,
                     std::complex<T>* y, cudaStream_t s) {
    int blocks = 0;
    std::size_t shared = 0;
    const HaarTiles h = haarTiles<T>(n, splits, offset, blocks, shared);
    haarTileKernel<cx_t<T>, T><<<unsigned(blocks), kHaarThreads, shared, s>>>(h, T(t), dev(x), dev(y), nullptr);
    checkLaunch("haarShrink");
}

template <class T>
double haarNorm1Tiles(std::array<int, 3> n, std::array<int, 3> splits, const std::vector<std::size_t>& offsets,
                      const std::complex<T>* x, DeviceBuffer<double>& partial, cudaStream_t s) {
    int blocks = 0;
    std::size_t shared = 0;
    haarTiles<T>(n, splits, 0, blocks, shared);
    const std::size_t count = std::size_t(blocks) * offsets.size();
    if (partial.size() < count + 1) partial = DeviceBuffer<double>(count + 1, "Haar l1 partial sums");
    for (std::size_t k = 0; k < offsets.size(); ++k) {
        const HaarTiles h = haarTiles<T>(n, splits, offsets[k], blocks, shared);
        haarTileKernel<cx_t<T>, T><<<unsigned(blocks), kHaarThreads, shared, s>>>(h, T(0), dev(x), nullptr,
                                                                                  partial.data() + k * std::size_t(blocks));
        checkLaunch("haarNorm1");
    }
    sumKernel<<<1, kHaarThreads, 0, s>>>(partial.data(), int(count), partial.data() + count);
    checkLaunch("haarNorm1 sum");
    double result = 0;
    check(cudaMemcpyAsync(&result, partial.data() + count, sizeof(double), cudaMemcpyDeviceToHost, s), "haarNorm1");
    check(cudaStreamSynchronize(s), "haarNorm1");
    return result / double(offsets.size());
}

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
                                         cudaStream_t);                                                                  \
    template void haarShrinkTiles<T>(std::array<int, 3>, std::array<int, 3>, std::size_t, double, const std::complex<T>*,  \
                                     std::complex<T>*, cudaStream_t);                                                 \
    template double haarNorm1Tiles<T>(std::array<int, 3>, std::array<int, 3>, const std::vector<std::size_t>&,          \
                                      const std::complex<T>*, DeviceBuffer<double>&, cudaStream_t);

RECON_PRIOR_KERNELS_INSTANTIATE(float)
RECON_PRIOR_KERNELS_INSTANTIATE(double)

}  // namespace recon::cuda
