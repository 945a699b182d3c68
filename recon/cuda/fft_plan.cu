#include "recon/cuda/fft_plan.hpp"

#include <cufft.h>

#include <cmath>
#include <string>
#include <type_traits>

#include <vector>

#include "recon/core/errors.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/device_math.cuh"
#include "recon/cuda/linalg.hpp"

namespace recon::cuda {
namespace {

void checkFft(cufftResult r, const char* what, std::size_t bytes) {
    if (r == CUFFT_SUCCESS) return;
    if (r == CUFFT_ALLOC_FAILED) throw OutOfMemory(std::string("cuFFT ") + what, bytes);
    throw Error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}

template <class T>
void execC2C(int handle, std::complex<T>* data, int direction) {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle), p, p, direction), "FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle), p, p, direction), "FFT", 0);
    }
}

}  // namespace

template <class T>
GpuFft<T>::GpuFft(std::array<int, 3> shape, int dims, cudaStream_t stream) {
    size_ = std::size_t(shape[0]) * shape[1] * shape[2];
    const cufftType type = std::is_same<T, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    cufftHandle h = 0;
    // cuFFT's dimensions are slowest first; ours are x fastest.
    const std::size_t work = size_ * sizeof(std::complex<T>);
    if (dims == 3)
        checkFft(cufftPlan3d(&h, shape[2], shape[1], shape[0], type), "3D plan", work);
    else if (dims == 2)
        checkFft(cufftPlan2d(&h, shape[1], shape[0], type), "2D plan", work);
    else
        checkFft(cufftPlan1d(&h, shape[0], type, 1), "1D plan", work);
    handle_ = int(h);
    checkFft(cufftSetStream(h, stream), "set stream", 0);
}

template <class T>
GpuFft<T>::~GpuFft() {
    cufftDestroy(cufftHandle(handle_));
}

template <class T>
void GpuFft<T>::forward(std::complex<T>* data) const {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle_), p, p, CUFFT_FORWARD), "forward FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle_), p, p, CUFFT_FORWARD), "forward FFT", 0);
    }
}

template <class T>
void GpuFft<T>::inverse(std::complex<T>* data) const {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle_), p, p, CUFFT_INVERSE), "inverse FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle_), p, p, CUFFT_INVERSE), "inverse FFT", 0);
    }
}

namespace {

// Lengths the fused kernel takes: 4 .. 1024 in float32, .. 512 in float64 (a
// 1024-point float64 column needs more registers than a thread has).
constexpr int kMinFusedLength = 4;
template <class T>
constexpr int kMaxFusedLength = sizeof(T) == 4 ? 1024 : 512;
constexpr std::size_t kColumnSharedBytes = 48 * 1024;  // the default limit: no opt-in needed

template <class V>
__device__ inline V cadd(V a, V b) { return cmake<V>(a.x + b.x, a.y + b.y); }
template <class V>
__device__ inline V csub(V a, V b) { return cmake<V>(a.x - b.x, a.y - b.y); }
template <class V>
__device__ inline V cconj(V a) { return cmake<V>(a.x, -a.y); }

constexpr std::size_t columnSharedBytes(int length, int tile, std::size_t value) {
    return (std::size_t(tile) * (length + 1) + length) * value;
}
// The widest power-of-two tile (<= 16 columns) that fits the shared-memory budget.
constexpr int columnTile(int length, std::size_t value) {
    int tile = 16;
    while (tile > 1 && columnSharedBytes(length, tile, value) > kColumnSharedBytes) tile /= 2;
    return tile;
}

constexpr int log2Exact(int n) { return n <= 1 ? 0 : 1 + log2Exact(n / 2); }

// i's log2(R) bits reversed (R <= 32). Straight-line, so once a loop over i is
// unrolled it folds to a constant and register arrays indexed by it stay in registers.
template <int R>
__host__ __device__ constexpr int bitReverse(int i) {
    static_assert(R >= 1 && R <= 32 && (R & (R - 1)) == 0, "bitReverse: R must be a power of two up to 32");
    constexpr int shift = 5 - log2Exact(R);
    return (((i & 1) << 4) | ((i & 2) << 2) | (i & 4) | ((i & 8) >> 2) | ((i & 16) >> 4)) >> shift;
}

// A DFT of R (a power of two) values held in registers: radix-2 decimation in
// frequency, natural order in, bit-reversed order out (result k in v[bitReverse<R>(k)]).
// tw[m] = exp(-2 pi i m / L), so W_R'^j = tw[j L / R'] for a sub-length R': one address for all threads.
template <int R, bool Inverse, class V>
__device__ inline void registerDft(V (&v)[R], const V* tw, int L) {
    // Counted loops only, so every one unrolls and every index is a constant.
#pragma unroll
    for (int stage = 0; stage < log2Exact(R); ++stage) {
        const int half = (R / 2) >> stage;  // the butterflies' span is 2 half
#pragma unroll
        for (int i = 0; i < R / 2; ++i) {
            const int j = i % half, lo = (i / half) * 2 * half + j;
            const V a = v[lo], b = v[lo + half];
            v[lo] = cadd(a, b);
            V d = csub(a, b);
            if (j != 0) d = cmul(Inverse ? cconj(tw[j * (L / (2 * half))]) : tw[j * (L / (2 * half))], d);
            v[lo + half] = d;
        }
    }
}

// Columns along the slowest axis, L = A B points each: forward FFT, product with
// the spectrum, inverse FFT, in registers and one shared-memory exchange per
// transform (the four-step factorisation: n = B a + b, k = k1 + A k2).
//   forward:  Y_b[k1] = DFT_A over a of x[B a + b];  X[k1 + A k2] = DFT_B over b of W_L^(b k1) Y_b[k1]
//   inverse:  Z_k1[n2] = IDFT_B over k2 of X'[k1 + A k2];  x'[n2 + B n1] = IDFT_A over k1 of W_L^(-k1 n2) Z_k1[n2]
// Only x[n < L/2] is read (the rest is the padding's zeros) and only x'[n < L/2]
// written (the crop's half). A block holds `tile` = 2^logTile neighbouring columns
// (threadIdx.x's low bits: global accesses coalesce across them) times A threads;
// columns sit L + 1 apart in shared memory so a tile's columns fall in different banks.
template <int A, int B, class V>
__global__ void __launch_bounds__(columnTile(A * B, sizeof(V)) * A)
columnConvolveKernel(V* data, const V* spectrum, const V* twiddles, long long slice, int logTile, int grids,
                     long long gridStride) {
    constexpr int L = A * B;
    extern __shared__ unsigned char sharedBytes[];
    V* tw = reinterpret_cast<V*>(sharedBytes);
    const int tile = 1 << logTile;
    const int c = threadIdx.x & (tile - 1), t = threadIdx.x >> logTile;
    // Several grids (SENSE's coils): neighbouring blocks take the same tile of columns of different
    // grids, so each spectrum column is fetched from memory once and from L2 for the others.
    data += (long long)(blockIdx.x % unsigned(grids)) * gridStride;
    const long long col = (long long)(blockIdx.x / unsigned(grids)) * tile + c;
    const bool live = col < slice;
    V* xs = tw + L + c * (L + 1);
    for (int i = threadIdx.x; i < L; i += blockDim.x) tw[i] = twiddles[i];
    __syncthreads();

    V v[A];
    if (t < B) {  // thread t is b
#pragma unroll
        for (int a = 0; a < A; ++a)
            v[a] = a < A / 2 && live ? data[(long long)(B * a + t) * slice + col] : cmake<V>(0, 0);
        registerDft<A, false>(v, tw, L);
#pragma unroll
        for (int k1 = 0; k1 < A; ++k1) {
            const V y = v[bitReverse<A>(k1)];
            xs[k1 * B + t] = k1 == 0 ? y : cmul(tw[t * k1], y);
        }
    }
    __syncthreads();
    V u[B];  // thread t is k1
#pragma unroll
    for (int b = 0; b < B; ++b) u[b] = xs[t * B + b];
    registerDft<B, false>(u, tw, L);
    V z[B];
#pragma unroll
    for (int k2 = 0; k2 < B; ++k2) {
        const V x = u[bitReverse<B>(k2)];
        z[k2] = live ? cmul(x, spectrum[(long long)(t + A * k2) * slice + col]) : x;
    }
    registerDft<B, true>(z, tw, L);
    __syncthreads();  // every thread has read xs
#pragma unroll
    for (int n2 = 0; n2 < B; ++n2) {
        const V y = z[bitReverse<B>(n2)];
        xs[n2 * A + t] = n2 == 0 ? y : cmul(cconj(tw[t * n2]), y);
    }
    __syncthreads();
    if (t < B) {  // thread t is n2
#pragma unroll
        for (int k1 = 0; k1 < A; ++k1) v[k1] = xs[t * A + k1];
        registerDft<A, true>(v, tw, L);
        if (live)
#pragma unroll
            for (int n1 = 0; n1 < A / 2; ++n1) data[(long long)(t + B * n1) * slice + col] = v[bitReverse<A>(n1)];
    }
}

// A = 2^ceil(k/2), B = 2^floor(k/2) for L = 2^k.
template <class V>
void launchColumnConvolve(int logL, int logTile, std::size_t blocks, cudaStream_t s, V* data, const V* spectrum,
                          const V* twiddles, long long slice, int grids = 1, long long gridStride = 0) {
    const int tile = 1 << logTile;
    const std::size_t bytes = columnSharedBytes(1 << logL, tile, sizeof(V));
    const int threadsPerColumn = 1 << ((logL + 1) / 2);
    blocks *= std::size_t(grids);
    if (blocks > 0x7fffffffu) throw Error("fused column transform: too many columns for one launch");
    const dim3 grid{unsigned(blocks)}, block{unsigned(tile * threadsPerColumn)};
    switch (logL) {
        case 2: columnConvolveKernel<2, 2><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 3: columnConvolveKernel<4, 2><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 4: columnConvolveKernel<4, 4><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 5: columnConvolveKernel<8, 4><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 6: columnConvolveKernel<8, 8><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 7: columnConvolveKernel<16, 8><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 8: columnConvolveKernel<16, 16><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 9: columnConvolveKernel<32, 16><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride); break;
        case 10:
            if constexpr (sizeof(V) == 8) {
                columnConvolveKernel<32, 32><<<grid, block, bytes, s>>>(data, spectrum, twiddles, slice, logTile, grids, gridStride);
                break;
            }
            [[fallthrough]];
        default: throw Error("fused column transform: no kernel for length " + std::to_string(1 << logL));
    }
    checkLaunch("columnConvolve");
}

}  // namespace

template <class T>
PaddedFft<T>::PaddedFft(std::array<int, 3> big, int dims, cudaStream_t stream, bool fuse) : stream_(stream) {
    if (dims < 2) throw Error("PaddedFft needs a 2D or 3D grid");
    const cufftType type = std::is_same<T, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    const int slow = big[dims - 1];
    long long slice = 1;
    for (int a = 0; a < dims - 1; ++a) slice *= big[a];
    slow_ = slow;
    slice_ = slice;
    dims_ = dims;
    for (int a = 0; a < 3; ++a) big_[a] = big[a];
    const std::size_t bytes = std::size_t(slice) * slow * sizeof(std::complex<T>);
    // Inner: the faster axes (slowest first, as cuFFT wants), batched over the first half of the slices.
    long long n2[2] = {big[1], big[0]};
    long long n1[1] = {big[0]};
    cufftHandle h = 0;
    std::size_t work = 0;
    checkFft(cufftCreate(&h), "plan", bytes);
    inner_ = int(h);
    if (dims == 3)
        checkFft(cufftMakePlanMany64(h, 2, n2, nullptr, 1, slice, nullptr, 1, slice, type, slow / 2, &work), "inner plan",
                 bytes);
    else
        checkFft(cufftMakePlanMany64(h, 1, n1, nullptr, 1, slice, nullptr, 1, slice, type, slow / 2, &work), "inner plan",
                 bytes);
    checkFft(cufftSetStream(h, stream), "set stream", 0);

    const bool powerOfTwo = (slow & (slow - 1)) == 0;
    if (fuse && powerOfTwo && slow >= kMinFusedLength && slow <= kMaxFusedLength<T>) {
        const int tile = columnTile(slow, sizeof(std::complex<T>));
        std::vector<std::complex<T>> w(static_cast<std::size_t>(slow));
        for (int m = 0; m < slow; ++m) {
            const double a = -kTwoPiD * m / slow;  // in float64, rounded once
            w[std::size_t(m)] = std::complex<T>(T(std::cos(a)), T(std::sin(a)));
        }
        twiddles_ = static_cast<std::complex<T>*>(allocate(w.size() * sizeof(w[0]), "FFT twiddle factors"));
        check(cudaMemcpyAsync(twiddles_, w.data(), w.size() * sizeof(w[0]), cudaMemcpyHostToDevice, stream),
              "FFT twiddle factors");
        check(cudaStreamSynchronize(stream), "FFT twiddle factors");
        tile_ = tile;
        return;
    }
    // Outer: 1D along the slowest axis for every point of a slice (stride = slice).
    long long ns[1] = {slow};
    checkFft(cufftCreate(&h), "plan", bytes);
    outer_ = int(h);
    checkFft(cufftMakePlanMany64(h, 1, ns, ns, slice, 1, ns, slice, 1, type, slice, &work), "outer plan", bytes);
    checkFft(cufftSetStream(h, stream), "set stream", 0);
}

template <class T>
int PaddedFft<T>::batchPlan(int count) const {
    for (const auto& [n, h] : batch_plans_)
        if (n == count) return h;
    const cufftType type = std::is_same<T, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    const std::size_t bytes = halfSize() * std::size_t(count) * sizeof(std::complex<T>);
    long long n2[2] = {big_[1], big_[0]};
    long long n1[1] = {big_[0]};
    cufftHandle h = 0;
    std::size_t work = 0;
    checkFft(cufftCreate(&h), "batched plan", bytes);
    // The halves lie one after another, so the batch is simply count times as many slices.
    const cufftResult r = dims_ == 3 ? cufftMakePlanMany64(h, 2, n2, nullptr, 1, slice_, nullptr, 1, slice_, type,
                                                           (long long)(slow_ / 2) * count, &work)
                                     : cufftMakePlanMany64(h, 1, n1, nullptr, 1, slice_, nullptr, 1, slice_, type,
                                                           (long long)(slow_ / 2) * count, &work);
    if (r != CUFFT_SUCCESS) cufftDestroy(h);
    checkFft(r, "batched inner plan", bytes);
    checkFft(cufftSetStream(h, stream_), "set stream", 0);
    batch_plans_.emplace_back(count, int(h));
    return int(h);
}

template <class T>
void PaddedFft<T>::convolveBatch(std::complex<T>* data, int count, const std::complex<T>* spectrum) const {
    if (!fused()) throw Error("PaddedFft::convolveBatch needs the fused column kernel");
    if (count < 1) return;
    if (count == 1) return convolve(data, spectrum);
    const int plan = batchPlan(count);
    execC2C<T>(plan, data, CUFFT_FORWARD);
    using V = cx_t<T>;
    int logL = 0, logTile = 0;
    while ((1 << logL) < slow_) ++logL;
    while ((1 << logTile) < tile_) ++logTile;
    launchColumnConvolve<V>(logL, logTile, std::size_t((slice_ + tile_ - 1) / tile_), stream_, reinterpret_cast<V*>(data),
                            reinterpret_cast<const V*>(spectrum), reinterpret_cast<const V*>(twiddles_), slice_, count,
                            (long long)halfSize());
    execC2C<T>(plan, data, CUFFT_INVERSE);
}

template <class T>
PaddedFft<T>::~PaddedFft() {
    for (const auto& [n, h] : batch_plans_) cufftDestroy(cufftHandle(h));
    cufftDestroy(cufftHandle(inner_));
    if (!fused()) cufftDestroy(cufftHandle(outer_));  // made only for the unfused path
    release(twiddles_);
}

template <class T>
void PaddedFft<T>::convolve(std::complex<T>* data, const std::complex<T>* spectrum) const {
    execC2C<T>(inner_, data, CUFFT_FORWARD);
    if (fused()) {
        using V = cx_t<T>;
        int logL = 0, logTile = 0;
        while ((1 << logL) < slow_) ++logL;
        while ((1 << logTile) < tile_) ++logTile;
        launchColumnConvolve<V>(logL, logTile, std::size_t((slice_ + tile_ - 1) / tile_), stream_, reinterpret_cast<V*>(data),
                                reinterpret_cast<const V*>(spectrum), reinterpret_cast<const V*>(twiddles_), slice_);
    } else {
        execC2C<T>(outer_, data, CUFFT_FORWARD);
        toeplitzMultiply<T>(spectrum, data, std::size_t(slice_) * slow_, stream_);
        execC2C<T>(outer_, data, CUFFT_INVERSE);
    }
    execC2C<T>(inner_, data, CUFFT_INVERSE);
}

template class GpuFft<float>;
template class GpuFft<double>;
template class PaddedFft<float>;
template class PaddedFft<double>;

}  // namespace recon::cuda
