#include "recon/cuda/linalg.hpp"

#include <string>

#include "recon/cuda/coil_map_args.cuh"
#include "recon/cuda/device_math.cuh"

namespace recon::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kDotBlocks = 1024;

unsigned blocksFor(std::size_t n) {
    std::size_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 1 ? 1 : b);
}
template <class V, class S>
__global__ void axpyKernel(S a, const V* x, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i].x += a * x[i].x;
        y[i].y += a * x[i].y;
    }
}
template <class V, class S>
__global__ void xpbyKernel(const V* x, S b, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i].x = x[i].x + b * y[i].x;
        y[i].y = x[i].y + b * y[i].y;
    }
}
template <class V, class S>
__global__ void scaleKernel(S a, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i].x *= a;
        y[i].y *= a;
    }
}
template <class V, class S>
struct CombineArgs {
    int k;
    S w[kMaxCombine];
    const V* x[kMaxCombine];
};
template <class V, class S>
__global__ void combineKernel(CombineArgs<V, S> a, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    S re = 0, im = 0;
#pragma unroll
    for (int t = 0; t < kMaxCombine; ++t) {
        if (t >= a.k) break;
        const V v = a.x[t][i];
        re += a.w[t] * v.x;
        im += a.w[t] * v.y;
    }
    y[i].x = re;
    y[i].y = im;
}
template <class V, class S>
__global__ void multiplyRealKernel(const S* w, const V* x, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i].x = w[i] * x[i].x;
        y[i].y = w[i] * x[i].y;
    }
}

template <class V, class S>
__global__ void scaleComplexKernel(S re, S im, V* y, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        const V v = y[i];
        y[i].x = re * v.x - im * v.y;
        y[i].y = re * v.y + im * v.x;
    }
}
template <class V>
__global__ void multiplyKernel(const V* d, const V* x, V* y, bool conjugate, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) {
        const V a = d[i], b = x[i];
        const auto ai = conjugate ? -a.y : a.y;
        y[i].x = a.x * b.x - ai * b.y;
        y[i].y = a.x * b.y + ai * b.x;
    }
}

// The end of a float64 reduction of `count` (<= R) values per thread: warp
// shuffles, one partial per block, and the last block to finish (counted by an
// atomic) sums the partials in a fixed order (deterministic) and writes the
// results to mapped host memory.
template <int R>
__device__ void finishReduction(double (&acc)[R], int count, double* partial, unsigned* done, double* result) {
    __shared__ double warpSums[kThreads / 32][R];
    __shared__ bool last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    auto blockSums = [&](double (&v)[R]) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (r >= count) break;
            double x = v[r];
            for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
            if (lane == 0) warpSums[warp][r] = x;
        }
        __syncthreads();
    };
    blockSums(acc);
    if (threadIdx.x < count) {
        double v = 0;
        for (int w = 0; w < kThreads / 32; ++w) v += warpSums[w][threadIdx.x];
        partial[std::size_t(blockIdx.x) * R + threadIdx.x] = v;
        __threadfence();  // the partial is visible before the count says so
    }
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    double sums[R];
#pragma unroll
    for (int r = 0; r < R; ++r) sums[r] = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (r < count) sums[r] += __ldcg(&partial[std::size_t(b) * R + r]);
    __syncthreads();  // warpSums is reused
    blockSums(sums);
    if (threadIdx.x < count) {
        double v = 0;
        for (int w = 0; w < kThreads / 32; ++w) v += warpSums[w][threadIdx.x];
        result[threadIdx.x] = v;
    }
    if (threadIdx.x == 0) *done = 0;  // ready for the next reduction on this stream
}

constexpr int kReduceValues = 2 * kMaxDots;

template <class V>
struct DotsArgs {
    int count;
    const V* a;
    const V* b[kMaxDots];
};
template <class V>
__global__ void __launch_bounds__(kThreads) dotsKernel(DotsArgs<V> args, std::size_t n, double* partial, unsigned* done,
                                                       double* result) {
    double acc[kReduceValues];
#pragma unroll
    for (int r = 0; r < kReduceValues; ++r) acc[r] = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const double ar = args.a[i].x, ai = args.a[i].y;
#pragma unroll
        for (int k = 0; k < kMaxDots; ++k) {
            if (k >= args.count) break;
            const double br = args.b[k][i].x, bi = args.b[k][i].y;
            acc[2 * k] += ar * br + ai * bi;
            acc[2 * k + 1] += ar * bi - ai * br;
        }
    }
    finishReduction(acc, 2 * args.count, partial, done, result);
}

template <class V>
struct DotPairsArgs {
    int count;
    const V* a[kMaxDots];
    const V* b[kMaxDots];
};
template <class V>
__global__ void __launch_bounds__(kThreads) dotPairsKernel(DotPairsArgs<V> args, std::size_t n, double* partial,
                                                           unsigned* done, double* result) {
    double acc[kReduceValues];
#pragma unroll
    for (int r = 0; r < kReduceValues; ++r) acc[r] = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
#pragma unroll
        for (int k = 0; k < kMaxDots; ++k) {
            if (k >= args.count) break;
            const double ar = args.a[k][i].x, ai = args.a[k][i].y;
            const double br = args.b[k][i].x, bi = args.b[k][i].y;
            acc[2 * k] += ar * br + ai * bi;
            acc[2 * k + 1] += ar * bi - ai * br;
        }
    }
    finishReduction(acc, 2 * args.count, partial, done, result);
}

template <class V, class S>
__global__ void __launch_bounds__(kThreads) axpyNorm2Kernel(S a, const V* x, V* y, std::size_t n, double* partial,
                                                            unsigned* done, double* result) {
    double acc[1] = {0};
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        V v = y[i];
        v.x += a * x[i].x;
        v.y += a * x[i].y;
        y[i] = v;
        acc[0] += double(v.x) * v.x + double(v.y) * v.y;
    }
    finishReduction(acc, 1, partial, done, result);
}

// One thread per group: the group's norm in float64, then the shrunk values.
template <class V>
__global__ void groupSoftThresholdKernel(const V* x, std::size_t group, std::size_t stride, double t, V* y) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= stride) return;
    double norm2 = 0;
    for (std::size_t k = 0; k < group; ++k) {
        const V v = x[i + k * stride];
        norm2 += double(v.x) * v.x + double(v.y) * v.y;
    }
    const double norm = sqrt(norm2);
    // max(0, 1 - t/|x|) without dividing by zero: a group of zeros stays zero.
    const double factor = norm > t ? 1.0 - t / norm : 0.0;
    for (std::size_t k = 0; k < group; ++k) {
        V v = x[i + k * stride];
        v.x = decltype(v.x)(factor * v.x);
        v.y = decltype(v.y)(factor * v.y);
        y[i + k * stride] = v;
    }
}
template <class V>
__global__ void __launch_bounds__(kThreads) groupNorm1Kernel(const V* x, std::size_t group, std::size_t stride,
                                                             double* partial, unsigned* done, double* result) {
    double acc[1] = {0};
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < stride;
         i += std::size_t(gridDim.x) * blockDim.x) {
        double norm2 = 0;
        for (std::size_t k = 0; k < group; ++k) {
            const V v = x[i + k * stride];
            norm2 += double(v.x) * v.x + double(v.y) * v.y;
        }
        acc[0] += sqrt(norm2);
    }
    finishReduction(acc, 1, partial, done, result);
}

// One warp per row: rows of the regularisers hold a handful of entries.
template <class V, class S>
__global__ void csrKernel(std::int64_t rows, const std::int64_t* rp, const std::int32_t* col, const S* val, const V* x,
                          V* y) {
    const std::int64_t row = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x);
    if (row >= rows) return;
    S re = 0, im = 0;
    for (std::int64_t e = rp[row]; e < rp[row + 1]; ++e) {
        const V v = x[col[e]];
        re += val[e] * v.x;
        im += val[e] * v.y;
    }
    y[row].x = re;
    y[row].y = im;
}

struct Shape {
    int nx, ny, nz;  // image grid
    int bx, by, bz;  // 2N grid
};

// Pad and crop run one block row per (y, z) line of the grid (blockIdx.y, blockIdx.z),
// threads along x: no index division per point.
template <class V>
__global__ void padKernel(Shape s, const V* x, V* big) {
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, iz = blockIdx.z;
    if (ix >= s.bx) return;
    V v;
    v.x = 0;
    v.y = 0;
    if (ix < s.nx && iy < s.ny && iz < s.nz) v = x[(std::size_t(iz) * s.ny + iy) * s.nx + ix];
    big[(std::size_t(iz) * s.by + iy) * s.bx + ix] = v;
}
template <class V>
__global__ void cropKernel(Shape s, const V* big, V* y) {
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, iz = blockIdx.z;
    if (ix >= s.nx) return;
    y[(std::size_t(iz) * s.ny + iy) * s.nx + ix] = big[(std::size_t(iz) * s.by + iy) * s.bx + ix];
}
// blockIdx.z runs over the coils' (z) lines: coil = blockIdx.z / lines_z.
template <class V>
__global__ void padCoilsKernel(Shape s, int lines_z, CoilMapArgs<V> maps, const V* x, V* big, std::size_t stride) {
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y;
    const int coil = blockIdx.z / lines_z, iz = blockIdx.z % lines_z;
    if (ix >= s.bx) return;
    V v;
    v.x = 0;
    v.y = 0;
    if (ix < s.nx && iy < s.ny && iz < s.nz) {
        const V* map = coilMap(maps, coil);
        const std::size_t i = (std::size_t(iz) * s.ny + iy) * s.nx + ix;
        v = cmul(map[i], x[i]);
    }
    big[coil * stride + (std::size_t(iz) * s.by + iy) * s.bx + ix] = v;
}
template <class V>
__global__ void cropCoilsKernel(Shape s, int coils, CoilMapArgs<V> maps, const V* big, std::size_t stride, bool accumulate,
                                V* y) {
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, iz = blockIdx.z;
    if (ix >= s.nx) return;
    const std::size_t i = (std::size_t(iz) * s.ny + iy) * s.nx + ix, b = (std::size_t(iz) * s.by + iy) * s.bx + ix;
    V acc;
    acc.x = 0;
    acc.y = 0;
    if (accumulate) acc = y[i];
#pragma unroll
    for (int c = 0; c < kMaxCoilBatch; ++c) {  // constant indices (see coilMap)
        if (c >= coils) break;
        const V m = maps.map[c][i], t = big[c * stride + b];
        acc.x += m.x * t.x + m.y * t.y;  // conj(m) t
        acc.y += m.x * t.y - m.y * t.x;
    }
    y[i] = acc;
}
template <class V>
__global__ void spectrumKernel(const V* spec, V* big, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) big[i] = cmul(big[i], spec[i]);
}
template <class V>
__global__ void halfShiftKernel(Shape s, const V* in, V* out, bool inverse, std::size_t total) {
    std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= total) return;
    const int ix = int(j % s.bx), iy = int((j / s.bx) % s.by), iz = int(j / (std::size_t(s.bx) * s.by));
    // out[l] = in[(l + half) mod size]; the inverse moves the other way.
    auto shift = [&](int i, int n) {
        const int h = n / 2;
        return inverse ? (i + n - h) % n : (i + h) % n;
    };
    const std::size_t src = (std::size_t(shift(iz, s.bz)) * s.by + shift(iy, s.by)) * s.bx + shift(ix, s.bx);
    out[j] = in[src];
}

}  // namespace

template <class T>
void vecZero(DComplex<T>* y, std::size_t n, cudaStream_t s) {
    if (n) check(cudaMemsetAsync(y, 0, n * sizeof(DComplex<T>), s), "vecZero");
}
template <class T>
void vecCopy(const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    if (n && x != y) check(cudaMemcpyAsync(y, x, n * sizeof(DComplex<T>), cudaMemcpyDeviceToDevice, s), "vecCopy");
}
template <class T>
void vecAxpy(double a, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    axpyKernel<<<blocksFor(n), kThreads, 0, s>>>(T(a), dev(x), dev(y), n);
    checkLaunch("axpy");
}
template <class T>
void vecXpby(const DComplex<T>* x, double b, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    xpbyKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(x), T(b), dev(y), n);
    checkLaunch("xpby");
}
template <class T>
void vecScale(double a, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    scaleKernel<<<blocksFor(n), kThreads, 0, s>>>(T(a), dev(y), n);
    checkLaunch("scale");
}
template <class T>
void vecScaleComplex(std::complex<double> a, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    if (n == 0) return;
    scaleComplexKernel<<<blocksFor(n), kThreads, 0, s>>>(T(a.real()), T(a.imag()), dev(y), n);
    checkLaunch("scaleComplex");
}
template <class T>
void vecMultiply(const DComplex<T>* d, const DComplex<T>* x, DComplex<T>* y, bool conjugate, std::size_t n, cudaStream_t s) {
    if (n == 0) return;
    multiplyKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(d), dev(x), dev(y), conjugate, n);
    checkLaunch("multiply");
}
template <class T>
void vecCombine(int k, const double* w, const DComplex<T>* const* xs, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    if (k < 1 || k > kMaxCombine) throw Error("vecCombine takes 1.." + std::to_string(kMaxCombine) + " terms");
    CombineArgs<cx_t<T>, T> a{};
    a.k = k;
    for (int i = 0; i < k; ++i) {
        a.w[i] = T(w[i]);
        a.x[i] = dev(xs[i]);
    }
    combineKernel<<<blocksFor(n), kThreads, 0, s>>>(a, dev(y), n);
    checkLaunch("combine");
}
template <class T>
void vecMultiplyReal(const T* w, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    multiplyRealKernel<<<blocksFor(n), kThreads, 0, s>>>(w, dev(x), dev(y), n);
    checkLaunch("multiplyReal");
}

DeviceReductions::DeviceReductions() : partial_(std::size_t(kReduceValues) * kDotBlocks, "reduction partial sums") {
    check(cudaHostAlloc(&host_, kReduceValues * sizeof(double), cudaHostAllocMapped), "mapped host memory for reductions");
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hostOnDevice_), host_, 0), "mapped host pointer");
    counter_ = DeviceBuffer<unsigned>(1, "reduction counter");
    check(cudaMemset(counter_.data(), 0, sizeof(unsigned)), "reduction counter");
}
DeviceReductions::~DeviceReductions() {
    if (host_) cudaFreeHost(host_);
}
template <class T>
void DeviceReductions::dots(const DComplex<T>* a, const DComplex<T>* const* bs, int count, std::size_t n,
                            std::complex<double>* out, cudaStream_t s) {
    if (count < 1 || count > kMaxDots) throw Error("DeviceReductions::dots takes 1.." + std::to_string(kMaxDots) + " vectors");
    if (n == 0) {
        for (int k = 0; k < count; ++k) out[k] = 0;
        return;
    }
    DotsArgs<cx_t<T>> args{};
    args.count = count;
    args.a = dev(a);
    for (int k = 0; k < count; ++k) args.b[k] = dev(bs[k]);
    const int blocks = int(std::min<std::size_t>(kDotBlocks, (n + kThreads - 1) / kThreads));
    dotsKernel<<<blocks, kThreads, 0, s>>>(args, n, partial_.data(), counter_.data(), hostOnDevice_);
    checkLaunch("dots");
    check(cudaStreamSynchronize(s), "dots");
    for (int k = 0; k < count; ++k) out[k] = {host_[2 * k], host_[2 * k + 1]};
}
template <class T>
void DeviceReductions::dotPairs(const DComplex<T>* const* as, const DComplex<T>* const* bs, int count, std::size_t n,
                                std::complex<double>* out, cudaStream_t s) {
    if (count < 1 || count > kMaxDots) throw Error("DeviceReductions::dotPairs takes 1.." + std::to_string(kMaxDots) + " pairs");
    if (n == 0) {
        for (int k = 0; k < count; ++k) out[k] = 0;
        return;
    }
    DotPairsArgs<cx_t<T>> args{};
    args.count = count;
    for (int k = 0; k < count; ++k) {
        args.a[k] = dev(as[k]);
        args.b[k] = dev(bs[k]);
    }
    const int blocks = int(std::min<std::size_t>(kDotBlocks, (n + kThreads - 1) / kThreads));
    dotPairsKernel<<<blocks, kThreads, 0, s>>>(args, n, partial_.data(), counter_.data(), hostOnDevice_);
    checkLaunch("dotPairs");
    check(cudaStreamSynchronize(s), "dotPairs");
    for (int k = 0; k < count; ++k) out[k] = {host_[2 * k], host_[2 * k + 1]};
}
template <class T>
double DeviceReductions::axpyNorm2(double alpha, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s) {
    if (n == 0) return 0;
    const int blocks = int(std::min<std::size_t>(kDotBlocks, (n + kThreads - 1) / kThreads));
    axpyNorm2Kernel<<<blocks, kThreads, 0, s>>>(T(alpha), dev(x), dev(y), n, partial_.data(), counter_.data(), hostOnDevice_);
    checkLaunch("axpyNorm2");
    check(cudaStreamSynchronize(s), "axpyNorm2");
    return host_[0];
}

template <class T>
double DeviceReductions::groupNorm1(const DComplex<T>* x, std::size_t group, std::size_t stride, cudaStream_t s) {
    if (stride == 0 || group == 0) return 0;
    const int blocks = int(std::min<std::size_t>(kDotBlocks, (stride + kThreads - 1) / kThreads));
    groupNorm1Kernel<<<blocks, kThreads, 0, s>>>(dev(x), group, stride, partial_.data(), counter_.data(), hostOnDevice_);
    checkLaunch("groupNorm1");
    check(cudaStreamSynchronize(s), "groupNorm1");
    return host_[0];
}
template <class T>
void vecGroupSoftThreshold(const DComplex<T>* x, std::size_t group, std::size_t stride, double t, DComplex<T>* y,
                           cudaStream_t s) {
    if (stride == 0 || group == 0) return;
    groupSoftThresholdKernel<<<blocksFor(stride), kThreads, 0, s>>>(dev(x), group, stride, t, dev(y));
    checkLaunch("groupSoftThreshold");
}

template <class T>
void csrMultiply(const DeviceCsr<T>& a, const DComplex<T>* x, DComplex<T>* y, cudaStream_t s) {
    if (a.rows == 0) return;
    csrKernel<<<blocksFor(std::size_t(a.rows)), kThreads, 0, s>>>(a.rows, a.row_ptr.data(), a.col.data(), a.val.data(),
                                                                 dev(x), dev(y));
    checkLaunch("csrMultiply");
}

namespace {
Shape shape(std::array<int, 3> n, std::array<int, 3> big) { return Shape{n[0], n[1], n[2], big[0], big[1], big[2]}; }
std::size_t count(std::array<int, 3> a) { return std::size_t(a[0]) * a[1] * a[2]; }
}  // namespace

template <class T>
void toeplitzPad(std::array<int, 3> n, std::array<int, 3> big, bool halfSlowest, const DComplex<T>* x, DComplex<T>* b,
                 cudaStream_t s) {
    std::array<int, 3> lines = big;  // the (y, z) lines to write
    if (halfSlowest) (big[2] > 1 ? lines[2] : lines[1]) /= 2;
    const dim3 grid((unsigned(big[0]) + kThreads - 1) / kThreads, unsigned(lines[1]), unsigned(lines[2]));
    padKernel<<<grid, kThreads, 0, s>>>(shape(n, big), dev(x), dev(b));
    checkLaunch("toeplitzPad");
}
template <class T>
void toeplitzMultiply(const DComplex<T>* spectrum, DComplex<T>* b, std::size_t n, cudaStream_t s) {
    spectrumKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(spectrum), dev(b), n);
    checkLaunch("toeplitzMultiply");
}
template <class T>
void toeplitzCrop(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* b, DComplex<T>* y, cudaStream_t s) {
    const dim3 grid((unsigned(n[0]) + kThreads - 1) / kThreads, unsigned(n[1]), unsigned(n[2]));
    cropKernel<<<grid, kThreads, 0, s>>>(shape(n, big), dev(b), dev(y));
    checkLaunch("toeplitzCrop");
}
template <class T>
void toeplitzPadCoils(std::array<int, 3> n, std::array<int, 3> big, int coils, const DComplex<T>* const* maps,
                      const DComplex<T>* x, DComplex<T>* b, std::size_t stride, cudaStream_t s) {
    const auto args = coilMapArgs<T>(coils, maps, "toeplitzPadCoils");
    std::array<int, 3> lines = big;  // the first half along the slowest axis only
    (big[2] > 1 ? lines[2] : lines[1]) /= 2;
    const dim3 grid((unsigned(big[0]) + kThreads - 1) / kThreads, unsigned(lines[1]), unsigned(lines[2] * coils));
    padCoilsKernel<<<grid, kThreads, 0, s>>>(shape(n, big), lines[2], args, dev(x), dev(b), stride);
    checkLaunch("toeplitzPadCoils");
}
template <class T>
void toeplitzCropCoils(std::array<int, 3> n, std::array<int, 3> big, int coils, const DComplex<T>* const* maps,
                       const DComplex<T>* b, std::size_t stride, bool accumulate, DComplex<T>* y, cudaStream_t s) {
    const auto args = coilMapArgs<T>(coils, maps, "toeplitzCropCoils");
    const dim3 grid((unsigned(n[0]) + kThreads - 1) / kThreads, unsigned(n[1]), unsigned(n[2]));
    cropCoilsKernel<<<grid, kThreads, 0, s>>>(shape(n, big), coils, args, dev(b), stride, accumulate, dev(y));
    checkLaunch("toeplitzCropCoils");
}
template <class T>
void halfShift(std::array<int, 3> big, const DComplex<T>* in, DComplex<T>* out, bool inverse, cudaStream_t s) {
    halfShiftKernel<<<blocksFor(count(big)), kThreads, 0, s>>>(shape(big, big), dev(in), dev(out), inverse, count(big));
    checkLaunch("halfShift");
}

#define RECON_LINALG_INSTANTIATE(T)                                                                                   \
    template void vecZero<T>(DComplex<T>*, std::size_t, cudaStream_t);                                               \
    template void vecCopy<T>(const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);                           \
    template void vecAxpy<T>(double, const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);                   \
    template void vecXpby<T>(const DComplex<T>*, double, DComplex<T>*, std::size_t, cudaStream_t);                   \
    template void vecScale<T>(double, DComplex<T>*, std::size_t, cudaStream_t);                                      \
    template void vecCombine<T>(int, const double*, const DComplex<T>* const*, DComplex<T>*, std::size_t,             \
                                cudaStream_t);                                                                        \
    template void vecMultiplyReal<T>(const T*, const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);         \
    template void vecScaleComplex<T>(std::complex<double>, DComplex<T>*, std::size_t, cudaStream_t);                 \
    template void vecMultiply<T>(const DComplex<T>*, const DComplex<T>*, DComplex<T>*, bool, std::size_t,            \
                                 cudaStream_t);                                                                       \
    template void DeviceReductions::dots<T>(const DComplex<T>*, const DComplex<T>* const*, int, std::size_t,         \
                                            std::complex<double>*, cudaStream_t);                                    \
    template void DeviceReductions::dotPairs<T>(const DComplex<T>* const*, const DComplex<T>* const*, int, std::size_t,    \
                                                std::complex<double>*, cudaStream_t);                                   \
    template double DeviceReductions::axpyNorm2<T>(double, const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t); \
    template double DeviceReductions::groupNorm1<T>(const DComplex<T>*, std::size_t, std::size_t, cudaStream_t);      \
    template void vecGroupSoftThreshold<T>(const DComplex<T>*, std::size_t, std::size_t, double, DComplex<T>*,        \
                                           cudaStream_t);                                                             \
    template void csrMultiply<T>(const DeviceCsr<T>&, const DComplex<T>*, DComplex<T>*, cudaStream_t);               \
    template void toeplitzPad<T>(std::array<int, 3>, std::array<int, 3>, bool, const DComplex<T>*, DComplex<T>*,      \
                                 cudaStream_t);                                                                       \
    template void toeplitzMultiply<T>(const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);                  \
    template void toeplitzCrop<T>(std::array<int, 3>, std::array<int, 3>, const DComplex<T>*, DComplex<T>*,           \
                                  cudaStream_t);                                                                      \
    template void toeplitzPadCoils<T>(std::array<int, 3>, std::array<int, 3>, int, const DComplex<T>* const*,       \
                                      const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);                  \
    template void toeplitzCropCoils<T>(std::array<int, 3>, std::array<int, 3>, int, const DComplex<T>* const*,      \
                                       const DComplex<T>*, std::size_t, bool, DComplex<T>*, cudaStream_t);           \
    template void halfShift<T>(std::array<int, 3>, const DComplex<T>*, DComplex<T>*, bool, cudaStream_t);

RECON_LINALG_INSTANTIATE(float)
RECON_LINALG_INSTANTIATE(double)

}  // namespace recon::cuda
