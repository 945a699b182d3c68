#include "recon/cuda/linalg.hpp"

#include <string>

#include "recon/cuda/device_math.cuh"

namespace recon::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kDotBlocks = 1024;

unsigned blocksFor(std::size_t n) {
    std::size_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 1 ? 1 : b);
}
template <class T>
cx_t<T>* dev(DComplex<T>* p) {
    return reinterpret_cast<cx_t<T>*>(p);
}
template <class T>
const cx_t<T>* dev(const DComplex<T>* p) {
    return reinterpret_cast<const cx_t<T>*>(p);
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
    for (int t = 0; t < a.k; ++t) {
        re += a.w[t] * a.x[t][i].x;
        im += a.w[t] * a.x[t][i].y;
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

// a^H b in one launch: per-thread float64 sums, a block tree, one partial per
// block; the last block to finish (counted by an atomic) sums the partials in a
// fixed order (deterministic) and writes the result to mapped host memory.
template <class V>
__global__ void dotKernel(const V* a, const V* b, std::size_t n, double* partial, unsigned* done, double* result) {
    __shared__ double sr[kThreads], si[kThreads];
    __shared__ bool last;
    double re = 0, im = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const double ar = a[i].x, ai = a[i].y, br = b[i].x, bi = b[i].y;
        re += ar * br + ai * bi;
        im += ar * bi - ai * br;
    }
    auto reduce = [&](double r, double m) {
        sr[threadIdx.x] = r;
        si[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) {
                sr[threadIdx.x] += sr[threadIdx.x + s];
                si[threadIdx.x] += si[threadIdx.x + s];
            }
            __syncthreads();
        }
    };
    reduce(re, im);
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = sr[0];
        partial[2 * blockIdx.x + 1] = si[0];
        __threadfence();  // the partial is visible before the count says so
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    re = im = 0;
    for (int i = threadIdx.x; i < int(gridDim.x); i += blockDim.x) {
        re += __ldcg(&partial[2 * i]);
        im += __ldcg(&partial[2 * i + 1]);
    }
    __syncthreads();
    reduce(re, im);
    if (threadIdx.x == 0) {
        result[0] = sr[0];
        result[1] = si[0];
        *done = 0;  // ready for the next dot on this stream
    }
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

template <class V>
__global__ void padKernel(Shape s, const V* x, V* big, std::size_t total) {
    std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= total) return;
    const int ix = int(j % s.bx), iy = int((j / s.bx) % s.by), iz = int(j / (std::size_t(s.bx) * s.by));
    V v;
    v.x = 0;
    v.y = 0;
    if (ix < s.nx && iy < s.ny && iz < s.nz) v = x[(std::size_t(iz) * s.ny + iy) * s.nx + ix];
    big[j] = v;
}
template <class V>
__global__ void cropKernel(Shape s, const V* big, V* y, std::size_t total) {
    std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= total) return;
    const int ix = int(j % s.nx), iy = int((j / s.nx) % s.ny), iz = int(j / (std::size_t(s.nx) * s.ny));
    y[j] = big[(std::size_t(iz) * s.by + iy) * s.bx + ix];
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

DotReducer::DotReducer() : partial_(2 * kDotBlocks, "dot-product partial sums") {
    check(cudaHostAlloc(&host_, 2 * sizeof(double), cudaHostAllocMapped), "mapped host memory for dot products");
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hostOnDevice_), host_, 0), "mapped host pointer");
    counter_ = DeviceBuffer<unsigned>(1, "dot-product counter");
    check(cudaMemset(counter_.data(), 0, sizeof(unsigned)), "dot-product counter");
}
DotReducer::~DotReducer() {
    if (host_) cudaFreeHost(host_);
}
template <class T>
std::complex<double> DotReducer::dot(const DComplex<T>* a, const DComplex<T>* b, std::size_t n, cudaStream_t s) {
    if (n == 0) return 0;
    const int blocks = int(std::min<std::size_t>(kDotBlocks, (n + kThreads - 1) / kThreads));
    dotKernel<<<blocks, kThreads, 0, s>>>(dev(a), dev(b), n, partial_.data(), counter_.data(), hostOnDevice_);
    checkLaunch("dot");
    check(cudaStreamSynchronize(s), "dot");
    return {host_[0], host_[1]};
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
void toeplitzPad(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* x, DComplex<T>* b, cudaStream_t s) {
    padKernel<<<blocksFor(count(big)), kThreads, 0, s>>>(shape(n, big), dev(x), dev(b), count(big));
    checkLaunch("toeplitzPad");
}
template <class T>
void toeplitzMultiply(const DComplex<T>* spectrum, DComplex<T>* b, std::size_t n, cudaStream_t s) {
    spectrumKernel<<<blocksFor(n), kThreads, 0, s>>>(dev(spectrum), dev(b), n);
    checkLaunch("toeplitzMultiply");
}
template <class T>
void toeplitzCrop(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* b, DComplex<T>* y, cudaStream_t s) {
    cropKernel<<<blocksFor(count(n)), kThreads, 0, s>>>(shape(n, big), dev(b), dev(y), count(n));
    checkLaunch("toeplitzCrop");
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
    template std::complex<double> DotReducer::dot<T>(const DComplex<T>*, const DComplex<T>*, std::size_t,            \
                                                     cudaStream_t);                                                   \
    template void csrMultiply<T>(const DeviceCsr<T>&, const DComplex<T>*, DComplex<T>*, cudaStream_t);               \
    template void toeplitzPad<T>(std::array<int, 3>, std::array<int, 3>, const DComplex<T>*, DComplex<T>*,            \
                                 cudaStream_t);                                                                       \
    template void toeplitzMultiply<T>(const DComplex<T>*, DComplex<T>*, std::size_t, cudaStream_t);                  \
    template void toeplitzCrop<T>(std::array<int, 3>, std::array<int, 3>, const DComplex<T>*, DComplex<T>*,           \
                                  cudaStream_t);                                                                      \
    template void halfShift<T>(std::array<int, 3>, const DComplex<T>*, DComplex<T>*, bool, cudaStream_t);

RECON_LINALG_INSTANTIATE(float)
RECON_LINALG_INSTANTIATE(double)

}  // namespace recon::cuda
