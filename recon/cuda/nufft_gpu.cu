#include "recon/cuda/nufft_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/cuda/device_math.cuh"
#include "recon/cuda/nufft_samples.hpp"

namespace recon::cuda {
namespace {

template <class T>
struct KernelShape {
    int kind;      // SpreadKernelKind
    T half;        // W / 2
    T beta;
    T norm;  // Kaiser-Bessel: 1 / I0(beta) (SpreadKernel::norm)
};

__device__ inline float devExp(float x) { return expf(x); }
__device__ inline double devExp(double x) { return exp(x); }
__device__ inline float devI0(float x) { return cyl_bessel_i0f(x); }
__device__ inline double devI0(double x) { return cyl_bessel_i0(x); }

// The same closed forms as SpreadKernel::value on the host.
template <class T>
__device__ inline T kernelValue(const KernelShape<T>& k, T z) {
    const T a = fabs(z);
    if (a >= k.half) return T(0);
    if (k.kind == int(SpreadKernelKind::Linear)) return T(1) - a;
    const T r = a / k.half;
    const T s = sqrt(T(1) - r * r);
    if (k.kind == int(SpreadKernelKind::ExpSemicircle)) return devExp(k.beta * (s - T(1)));
    return devI0(k.beta * s) * k.norm;
}

__device__ inline int wrapCell(int c, int g) {
    if (c < 0 || c >= g) c = ((c % g) + g) % g;
    return c;
}

__device__ inline void atomicAddComplex(float2* p, float2 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(p, v);  // one vector atomic on Hopper
#else
    atomicAdd(&p->x, v.x);
    atomicAdd(&p->y, v.y);
#endif
}
__device__ inline void atomicAddComplex(double2* p, double2 v) {
    atomicAdd(&p->x, v.x);
    atomicAdd(&p->y, v.y);
}

struct FineGrid {
    int dims;
    int gx, gy, gz;
};

// Type 1 spreading, one thread per sample in bin-sorted order: consecutive
// threads touch neighbouring cells, so the atomics stay in L2.
template <class T, int W>
__global__ void spreadSamples(FineGrid g, KernelShape<T> ks, const int* start, const T* offset,
                              const std::uint32_t* order, const cx_t<T>* c, cx_t<T>* fine, std::size_t M) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= M) return;
    const cx_t<T> v = c[order[i]];
    T wx[W], wy[W], wz[W];
#pragma unroll
    for (int j = 0; j < W; ++j) {
        wx[j] = kernelValue(ks, offset[3 * i] + T(j));
        wy[j] = g.dims > 1 ? kernelValue(ks, offset[3 * i + 1] + T(j)) : T(j == 0);
        wz[j] = g.dims > 2 ? kernelValue(ks, offset[3 * i + 2] + T(j)) : T(j == 0);
    }
    const int sx = start[3 * i], sy = start[3 * i + 1], sz = start[3 * i + 2];
    const int ny = g.dims > 1 ? W : 1, nz = g.dims > 2 ? W : 1;
    for (int iz = 0; iz < nz; ++iz) {
        const int cz = wrapCell(sz + iz, g.gz);
        for (int iy = 0; iy < ny; ++iy) {
            const int cy = wrapCell(sy + iy, g.gy);
            const T wyz = wy[iy] * wz[iz];
            cx_t<T>* rowp = fine + (std::size_t(cz) * g.gy + cy) * g.gx;
#pragma unroll
            for (int ix = 0; ix < W; ++ix) {
                const T w = wx[ix] * wyz;
                atomicAddComplex(rowp + wrapCell(sx + ix, g.gx), cmake<cx_t<T>>(v.x * w, v.y * w));
            }
        }
    }
}

// Type 2 interpolation: gather, no atomics.
template <class T, int W>
__global__ void interpolateSamples(FineGrid g, KernelShape<T> ks, const int* start, const T* offset,
                                   const std::uint32_t* order, const cx_t<T>* fine, cx_t<T>* c, std::size_t M) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= M) return;
    T wx[W], wy[W], wz[W];
#pragma unroll
    for (int j = 0; j < W; ++j) {
        wx[j] = kernelValue(ks, offset[3 * i] + T(j));
        wy[j] = g.dims > 1 ? kernelValue(ks, offset[3 * i + 1] + T(j)) : T(j == 0);
        wz[j] = g.dims > 2 ? kernelValue(ks, offset[3 * i + 2] + T(j)) : T(j == 0);
    }
    const int sx = start[3 * i], sy = start[3 * i + 1], sz = start[3 * i + 2];
    const int ny = g.dims > 1 ? W : 1, nz = g.dims > 2 ? W : 1;
    T re = 0, im = 0;
    for (int iz = 0; iz < nz; ++iz) {
        const int cz = wrapCell(sz + iz, g.gz);
        for (int iy = 0; iy < ny; ++iy) {
            const int cy = wrapCell(sy + iy, g.gy);
            const T wyz = wy[iy] * wz[iz];
            const cx_t<T>* rowp = fine + (std::size_t(cz) * g.gy + cy) * g.gx;
            T rr = 0, ri = 0;
#pragma unroll
            for (int ix = 0; ix < W; ++ix) {
                const cx_t<T> f = rowp[wrapCell(sx + ix, g.gx)];
                rr += wx[ix] * f.x;
                ri += wx[ix] * f.y;
            }
            re += wyz * rr;
            im += wyz * ri;
        }
    }
    c[order[i]] = cmake<cx_t<T>>(re, im);
}

struct OutGrid {
    int sx, sy, sz;
};

__device__ inline std::size_t fineIndex(const FineGrid& g, const OutGrid& s, std::size_t j, int& x, int& y, int& z) {
    x = int(j % s.sx);
    y = int((j / s.sx) % s.sy);
    z = int(j / (std::size_t(s.sx) * s.sy));
    const int fx = wrapCell(x - s.sx / 2, g.gx);
    const int fy = g.dims > 1 ? wrapCell(y - s.sy / 2, g.gy) : 0;
    const int fz = g.dims > 2 ? wrapCell(z - s.sz / 2, g.gz) : 0;
    return (std::size_t(fz) * g.gy + fy) * g.gx + fx;
}

template <class T>
__global__ void cropDeapodize(FineGrid g, OutGrid s, const T* deapod, const cx_t<T>* fine, cx_t<T>* out, std::size_t n) {
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= n) return;
    int x, y, z;
    const std::size_t f = fineIndex(g, s, j, x, y, z);
    T d = 1;
    if (deapod) d = deapod[x] * deapod[s.sx + y] * deapod[s.sx + s.sy + z];
    const cx_t<T> v = fine[f];
    out[j] = cmake<cx_t<T>>(v.x / d, v.y / d);
}

template <class T>
__global__ void padDeapodize(FineGrid g, OutGrid s, const T* deapod, const cx_t<T>* in, cx_t<T>* fine, std::size_t n) {
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= n) return;
    int x, y, z;
    const std::size_t f = fineIndex(g, s, j, x, y, z);
    T d = 1;
    if (deapod) d = deapod[x] * deapod[s.sx + y] * deapod[s.sx + s.sy + z];
    const cx_t<T> v = in[j];
    fine[f] = cmake<cx_t<T>>(v.x / d, v.y / d);
}

unsigned blocksFor(std::size_t n, int threads) { return unsigned((n + threads - 1) / threads); }

template <class T, template <class, int> class Launch, class... Args>
void dispatchWidth(int w, Args&&... args) {
    switch (w) {
#define RECON_WIDTH_CASE(N) \
    case N: Launch<T, N>::run(args...); break;
        RECON_WIDTH_CASE(1)
        RECON_WIDTH_CASE(2)
        RECON_WIDTH_CASE(3)
        RECON_WIDTH_CASE(4)
        RECON_WIDTH_CASE(5)
        RECON_WIDTH_CASE(6)
        RECON_WIDTH_CASE(7)
        RECON_WIDTH_CASE(8)
        RECON_WIDTH_CASE(9)
        RECON_WIDTH_CASE(10)
        RECON_WIDTH_CASE(11)
        RECON_WIDTH_CASE(12)
        RECON_WIDTH_CASE(13)
        RECON_WIDTH_CASE(14)
        RECON_WIDTH_CASE(15)
        RECON_WIDTH_CASE(16)
#undef RECON_WIDTH_CASE
        default: throw InputError("spreading kernel width " + std::to_string(w) + " is outside 1..16");
    }
}

constexpr int kSpreadThreads = 128;

template <class T, int W>
struct SpreadLaunch {
    static void run(cudaStream_t s, FineGrid g, KernelShape<T> ks, const int* st, const T* off,
                    const std::uint32_t* ord, const cx_t<T>* c, cx_t<T>* fine, std::size_t M) {
        spreadSamples<T, W><<<blocksFor(M, kSpreadThreads), kSpreadThreads, 0, s>>>(g, ks, st, off, ord, c, fine, M);
    }
};
template <class T, int W>
struct InterpLaunch {
    static void run(cudaStream_t s, FineGrid g, KernelShape<T> ks, const int* st, const T* off,
                    const std::uint32_t* ord, const cx_t<T>* fine, cx_t<T>* c, std::size_t M) {
        interpolateSamples<T, W><<<blocksFor(M, kSpreadThreads), kSpreadThreads, 0, s>>>(g, ks, st, off, ord, fine, c, M);
    }
};

}  // namespace

template <class T>
GpuNufft<T>::GpuNufft(const Trajectory& t, const SampleGrid& grid, const SpreadKernel& kernel, bool deapodize,
                      cudaStream_t stream, NufftSteps steps)
    : grid_(grid), kernel_(kernel), deapodize_(deapodize), dims_(grid.dims), M_(t.samples()), stream_(stream) {
    if (M_ > std::size_t(UINT32_MAX)) throw InputError("too many samples for the GPU NUFFT (limit 2^32 - 1)");
    W_ = kernel.width;
    for (int a = 0; a < dims_; ++a) {
        G_[a] = oversampledLength(grid.size[a], kernel.sigma);
        if (G_[a] < W_)
            throw InputError("grid axis of " + std::to_string(grid.size[a]) + " points is too small for a spreading kernel of width " +
                             std::to_string(W_) + " (oversampled length " + std::to_string(G_[a]) + ")");
    }
    const SortedSamples sorted = sortSamplesByBin(t, grid, G_, W_);
    const std::vector<int>& startSorted = sorted.start;
    const std::vector<std::uint32_t>& order = sorted.order;
    std::vector<T> offsetNarrowed;  // float plans: the float64 offsets rounded once
    if constexpr (!std::is_same_v<T, double>) offsetNarrowed.assign(sorted.offset.begin(), sorted.offset.end());
    const T* offsetSorted;
    if constexpr (std::is_same_v<T, double>) offsetSorted = sorted.offset.data();
    else offsetSorted = offsetNarrowed.data();
    const std::size_t m3 = std::max<std::size_t>(3 * M_, 1);
    start_ = DeviceBuffer<int>(m3, "NUFFT sample cells");
    offset_ = DeviceBuffer<T>(m3, "NUFFT sample offsets");
    order_ = DeviceBuffer<std::uint32_t>(std::max<std::size_t>(M_, 1), "NUFFT sample order");
    if (M_) {
        start_.upload(startSorted.data(), startSorted.size(), stream_);
        offset_.upload(offsetSorted, sorted.offset.size(), stream_);
        order_.upload(order.data(), order.size(), stream_);
    }
    if (deapodize_) {
        std::vector<T> d;
        for (int a = 0; a < 3; ++a) {
            if (a < dims_) {
                for (double v : kernel_.deapodization(grid.size[a], G_[a])) d.push_back(T(v));
            } else {
                d.insert(d.end(), std::size_t(grid.size[a]), T(1));
            }
        }
        deapod_ = DeviceBuffer<T>(d.size(), "deapodisation factors");
        deapod_.upload(d.data(), d.size(), stream_);
    }
    fine_ = DeviceBuffer<C>(fineSize(), "NUFFT oversampled grid");
    if (steps == NufftSteps::Transforms) fft_ = std::make_unique<GpuFft<T>>(G_, dims_, stream_);
    check(cudaStreamSynchronize(stream_), "NUFFT plan upload");
}

template <class T>
const GpuFft<T>& GpuNufft<T>::fft() const {
    if (!fft_) throw std::logic_error("GpuNufft: a spread-and-interpolate plan has no FFT (adjoint/forward need NufftSteps::Transforms)");
    return *fft_;
}

namespace {
// What the kernels are told about a plan: its spreading kernel and its oversampled grid.
template <class T>
KernelShape<T> kernelShape(const SpreadKernel& k, int width) {
    return {int(k.kind), T(0.5 * width), T(k.beta), T(k.norm)};
}
FineGrid fineGrid(int dims, const std::array<int, 3>& g) { return {dims, g[0], g[1], g[2]}; }
}  // namespace

template <class T>
void GpuNufft<T>::spread(const C* c, C* fine) {
    check(cudaMemsetAsync(fine, 0, fineSize() * sizeof(C), stream_), "clear the oversampled grid");
    if (M_ == 0) return;
    const KernelShape<T> ks = kernelShape<T>(kernel_, W_);
    const FineGrid g = fineGrid(dims_, G_);
    dispatchWidth<T, SpreadLaunch>(W_, stream_, g, ks, start_.data(), offset_.data(), order_.data(),
                                   reinterpret_cast<const cx_t<T>*>(c), reinterpret_cast<cx_t<T>*>(fine), M_);
    checkLaunch("spreadSamples");
}

template <class T>
void GpuNufft<T>::interpolate(const C* fine, C* c) {
    if (M_ == 0) return;
    const KernelShape<T> ks = kernelShape<T>(kernel_, W_);
    const FineGrid g = fineGrid(dims_, G_);
    dispatchWidth<T, InterpLaunch>(W_, stream_, g, ks, start_.data(), offset_.data(), order_.data(),
                                   reinterpret_cast<const cx_t<T>*>(fine), reinterpret_cast<cx_t<T>*>(c), M_);
    checkLaunch("interpolateSamples");
}

template <class T>
void GpuNufft<T>::adjoint(const C* c, C* out) {
    spread(c, fine_.data());
    fft().inverse(fine_.data());
    const std::size_t n = grid_.points();
    const FineGrid g = fineGrid(dims_, G_);
    OutGrid s{grid_.size[0], grid_.size[1], grid_.size[2]};
    cropDeapodize<T><<<blocksFor(n, 256), 256, 0, stream_>>>(g, s, deapodize_ ? deapod_.data() : nullptr,
                                                             reinterpret_cast<const cx_t<T>*>(fine_.data()),
                                                             reinterpret_cast<cx_t<T>*>(out), n);
    checkLaunch("cropDeapodize");
}

template <class T>
void GpuNufft<T>::forward(const C* f, C* out) {
    const std::size_t n = grid_.points();
    const FineGrid g = fineGrid(dims_, G_);
    OutGrid s{grid_.size[0], grid_.size[1], grid_.size[2]};
    check(cudaMemsetAsync(fine_.data(), 0, fineSize() * sizeof(C), stream_), "clear the oversampled grid");
    padDeapodize<T><<<blocksFor(n, 256), 256, 0, stream_>>>(g, s, deapodize_ ? deapod_.data() : nullptr,
                                                            reinterpret_cast<const cx_t<T>*>(f),
                                                            reinterpret_cast<cx_t<T>*>(fine_.data()), n);
    checkLaunch("padDeapodize");
    fft().forward(fine_.data());
    interpolate(fine_.data(), out);
}

template class GpuNufft<float>;
template class GpuNufft<double>;

}  // namespace recon::cuda
