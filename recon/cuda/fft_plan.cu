#include "recon/cuda/fft_plan.hpp"

#include <cufft.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/cuda/coil_map_args.cuh"
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

// One launch of a four-step kernel for L = 2^logL (A = 2^ceil(logL/2), B = 2^floor(logL/2)): `launch`
// is called with the kernel's factors as std::integral_constant values; `what` names the transform
// in the error for a length without a kernel.
template <class V, class Launch>
void withFourStepFactors(int logL, const char* what, Launch&& launch) {
    using std::integral_constant;
    switch (logL) {
        case 2: launch(integral_constant<int, 2>{}, integral_constant<int, 2>{}); break;
        case 3: launch(integral_constant<int, 4>{}, integral_constant<int, 2>{}); break;
        case 4: launch(integral_constant<int, 4>{}, integral_constant<int, 4>{}); break;
        case 5: launch(integral_constant<int, 8>{}, integral_constant<int, 4>{}); break;
        case 6: launch(integral_constant<int, 8>{}, integral_constant<int, 8>{}); break;
        case 7: launch(integral_constant<int, 16>{}, integral_constant<int, 8>{}); break;
        case 8: launch(integral_constant<int, 16>{}, integral_constant<int, 16>{}); break;
        case 9: launch(integral_constant<int, 32>{}, integral_constant<int, 16>{}); break;
        case 10:
            if constexpr (sizeof(V) == 8) {
                launch(integral_constant<int, 32>{}, integral_constant<int, 32>{});
                break;
            }
            [[fallthrough]];
        default: throw Error(std::string(what) + ": no kernel for length " + std::to_string(1 << logL));
    }
}

int log2Of(int n) {
    int k = 0;
    while ((1 << k) < n) ++k;
    return k;
}

template <class V>
void launchColumnConvolve(int logL, int logTile, std::size_t blocks, cudaStream_t s, V* data, const V* spectrum,
                          const V* twiddles, long long slice, int grids = 1, long long gridStride = 0) {
    const int tile = 1 << logTile;
    const std::size_t bytes = columnSharedBytes(1 << logL, tile, sizeof(V));
    blocks *= std::size_t(grids);
    if (blocks > 0x7fffffffu) throw Error("fused column transform: too many columns for one launch");
    withFourStepFactors<V>(logL, "fused column transform", [&](auto a, auto b) {
        constexpr int A = decltype(a)::value, B = decltype(b)::value;
        columnConvolveKernel<A, B><<<unsigned(blocks), unsigned(tile * A), bytes, s>>>(data, spectrum, twiddles, slice, logTile,
                                                                                    grids, gridStride);
    });
    checkLaunch("columnConvolve");
}

// ---- Every axis by our kernels: the faster axes pruned too ----
// The inner axes' cuFFT plans transform every line of the half grid, though the forward input is
// zero outside the image's quarter of each slice and the inverse is cropped back to it. The line
// kernels below transform only the lines that carry data (x: the image's rows, y: every column but
// only its first half read forward and written back inverse), and fuse the pad with the maps'
// product into the first and the crop with the conjugate maps' sum over the coils into the last.

// A line of L = A B points in shared memory, natural order, transformed in place by the four-step
// factorisation of columnConvolveKernel by its A threads (t); every thread of the block calls it
// (it synchronises). HalfIn: the input is zero from L/2 on (not read).
template <int A, int B, bool Inverse, bool HalfIn, class V>
__device__ inline void sharedLineDft(V* line, int t, const V* tw) {
    constexpr int L = A * B;
    V v[A];
    if (t < B) {  // thread t is b: a DFT of length A over x[B a + b]
#pragma unroll
        for (int a = 0; a < A; ++a) v[a] = !HalfIn || a < A / 2 ? line[B * a + t] : cmake<V>(0, 0);
        registerDft<A, Inverse>(v, tw, L);
    }
    __syncthreads();  // every input read
    if (t < B) {
#pragma unroll
        for (int k1 = 0; k1 < A; ++k1) {
            const V y = v[bitReverse<A>(k1)];
            line[k1 * B + t] = k1 == 0 ? y : cmul(Inverse ? cconj(tw[t * k1]) : tw[t * k1], y);
        }
    }
    __syncthreads();
    V u[B];  // thread t is k1: a DFT of length B over b
#pragma unroll
    for (int b = 0; b < B; ++b) u[b] = line[t * B + b];
    registerDft<B, Inverse>(u, tw, L);
    __syncthreads();
#pragma unroll
    for (int k2 = 0; k2 < B; ++k2) line[t + A * k2] = u[bitReverse<B>(k2)];
    __syncthreads();
}

// Where the image's rows (y, z) lie: row r = y + ny z holds image values r H .. r H + H - 1 (H = L/2,
// the image's x length) and the 2N grid's line at z slice + y row (its first H values the image's).
struct RowLayout {
    int rows, ny;
    long long row, slice, coil;  // strides in the 2N half grids: a y step, a z step, a coil
    __device__ long long at(int r) const { return (r / ny) * slice + (r % ny) * row; }
};

// The line kernels' blocks: kLineTile<L, V> lines of L points, A threads each (columnTile's budget).
// Every thread issues all its global loads before it stores any into shared memory: one load at a
// time per thread left the memory system idle (about half of cuFFT's bandwidth, measured by ncu).
template <int L, class V>
constexpr int kLineTile = columnTile(L, sizeof(V));
// Blocks a multiprocessor should hold at once for the column passes (registers capped to fit them),
// float32 up to 2N = 256: uncapped, the inverse pass held two 256-thread blocks (24 % occupancy at
// 2N = 256, ncu). The row pass's coil sum is left uncapped: at two blocks it spills.
template <int L, class V>
constexpr int kColumnMinBlocks = sizeof(V) == 8 && L <= 256 ? 3 : 1;

// Forward along x with the pad fused in: the 2N grid's lines of the image's rows of coil
// blockIdx.y (maps null: x itself) = FFT of [S_c x row, zeros].
template <int A, int B, class V>
__global__ void __launch_bounds__(kLineTile<A * B, V> * A)
rowsForwardKernel(const V* x, CoilMapArgs<V> maps, RowLayout g, V* work, const V* twiddles) {
    constexpr int L = A * B, H = L / 2, kTile = kLineTile<L, V>, kThreads = kTile * A;
    extern __shared__ unsigned char sharedBytes[];
    V* tw = reinterpret_cast<V*>(sharedBytes);
    V* lines = tw + L;
    __shared__ long long lineAt[kTile];  // each row's line in the coil's half grid
    const int r0 = int(blockIdx.x) * kTile, coil = int(blockIdx.y);
    const V* map = coilMap(maps, coil);
    V in[B / 2];  // kTile H values, B / 2 a thread
#pragma unroll
    for (int k = 0; k < B / 2; ++k) {
        const int i = int(threadIdx.x) + k * kThreads, r = r0 + i / H;
        const long long p = (long long)r * H + i % H;
        in[k] = r < g.rows ? (map ? cmul(map[p], x[p]) : x[p]) : cmake<V>(0, 0);
    }
    if (threadIdx.x < kTile) lineAt[threadIdx.x] = g.at(r0 + int(threadIdx.x));
    for (int i = threadIdx.x; i < L; i += kThreads) tw[i] = twiddles[i];
#pragma unroll
    for (int k = 0; k < B / 2; ++k) {
        const int i = int(threadIdx.x) + k * kThreads;
        lines[(i / H) * (L + 1) + i % H] = in[k];
    }
    __syncthreads();
    const int c = threadIdx.x % kTile, t = threadIdx.x / kTile;
    sharedLineDft<A, B, false, true>(lines + c * (L + 1), t, tw);
    V* out = work + coil * g.coil;
#pragma unroll
    for (int k = 0; k < B; ++k) {  // kTile L values, B a thread
        const int i = int(threadIdx.x) + k * kThreads, j = i / L;
        if (r0 + j < g.rows) out[lineAt[j] + i % L] = lines[j * (L + 1) + i % L];
    }
}

// Inverse along x with the crop fused in: y (+)= sum over the chunk's coils of conj(S_c) times the
// first H values of the inverse FFT of each image row's line (maps null: one grid, no map).
template <int A, int B, class V>
__global__ void __launch_bounds__(kLineTile<A * B, V> * A)
rowsInverseKernel(const V* work, CoilMapArgs<V> maps, int coils, RowLayout g, bool accumulate, V* y, const V* twiddles) {
    constexpr int L = A * B, H = L / 2, kTile = kLineTile<L, V>, kThreads = kTile * A;
    extern __shared__ unsigned char sharedBytes[];
    V* tw = reinterpret_cast<V*>(sharedBytes);
    V* lines = tw + L;
    __shared__ long long lineAt[kTile];
    const int r0 = int(blockIdx.x) * kTile;
    if (threadIdx.x < kTile) lineAt[threadIdx.x] = g.at(r0 + int(threadIdx.x));
    for (int i = threadIdx.x; i < L; i += kThreads) tw[i] = twiddles[i];
    __syncthreads();  // lineAt before the first coil's load
    const int c = threadIdx.x % kTile, t = threadIdx.x / kTile;
    V acc[B / 2];  // kTile H outputs, B / 2 a thread
#pragma unroll
    for (int k = 0; k < B / 2; ++k) acc[k] = cmake<V>(0, 0);
    for (int coil = 0; coil < coils; ++coil) {
        const V* src = work + coil * g.coil;
        V in[B];  // kTile L values, B a thread
#pragma unroll
        for (int k = 0; k < B; ++k) {
            const int i = int(threadIdx.x) + k * kThreads, j = i / L;
            in[k] = r0 + j < g.rows ? src[lineAt[j] + i % L] : cmake<V>(0, 0);
        }
#pragma unroll
        for (int k = 0; k < B; ++k) {
            const int i = int(threadIdx.x) + k * kThreads;
            lines[(i / L) * (L + 1) + i % L] = in[k];
        }
        __syncthreads();
        sharedLineDft<A, B, true, false>(lines + c * (L + 1), t, tw);
        const V* map = coilMap(maps, coil);
#pragma unroll
        for (int k = 0; k < B / 2; ++k) {
            const int i = int(threadIdx.x) + k * kThreads, j = i / H, e = i % H, r = r0 + j;
            if (r >= g.rows) continue;
            const V v = lines[j * (L + 1) + e];
            if (map) {
                const V m = map[(long long)r * H + e];
                acc[k].x += m.x * v.x + m.y * v.y;  // conj(m) v
                acc[k].y += m.x * v.y - m.y * v.x;
            } else {
                acc[k].x += v.x;
                acc[k].y += v.y;
            }
        }
        __syncthreads();  // the lines are read before the next coil's are stored
    }
#pragma unroll
    for (int k = 0; k < B / 2; ++k) {
        const int i = int(threadIdx.x) + k * kThreads, r = r0 + i / H;
        if (r >= g.rows) continue;
        const long long p = (long long)r * H + i % H;
        y[p] = accumulate ? cadd(y[p], acc[k]) : acc[k];
    }
}

// Along y, the 2N grid's columns of slice blockIdx.y (z < N) of coil blockIdx.z, kTile neighbouring
// x columns a block: forward reads the first half (the rows the x pass wrote) and writes every row;
// inverse reads every row and writes the first half (the rows the x pass reads back).
template <int A, int B, bool Inverse, class V>
__global__ void __launch_bounds__(kLineTile<A * B, V> * A, kColumnMinBlocks<A * B, V>)
columnsKernel(V* work, long long columns, long long row, long long slice, long long coil, const V* twiddles) {
    constexpr int L = A * B, kTile = kLineTile<L, V>, kThreads = kTile * A;
    constexpr int kIn = Inverse ? B : B / 2, kOut = Inverse ? B / 2 : B;  // values a thread: kTile L or kTile L / 2 in all
    extern __shared__ unsigned char sharedBytes[];
    V* tw = reinterpret_cast<V*>(sharedBytes);
    V* lines = tw + L;
    V* base = work + (long long)blockIdx.z * coil + (long long)blockIdx.y * slice;
    const long long x0 = (long long)blockIdx.x * kTile;
    V in[kIn];
#pragma unroll
    for (int k = 0; k < kIn; ++k) {  // neighbouring threads: neighbouring columns
        const int i = int(threadIdx.x) + k * kThreads, j = i % kTile;
        in[k] = x0 + j < columns ? base[(i / kTile) * row + x0 + j] : cmake<V>(0, 0);
    }
    for (int i = threadIdx.x; i < L; i += kThreads) tw[i] = twiddles[i];
#pragma unroll
    for (int k = 0; k < kIn; ++k) {
        const int i = int(threadIdx.x) + k * kThreads;
        lines[(i % kTile) * (L + 1) + i / kTile] = in[k];
    }
    __syncthreads();
    const int c = threadIdx.x % kTile, t = threadIdx.x / kTile;
    sharedLineDft<A, B, Inverse, !Inverse>(lines + c * (L + 1), t, tw);
#pragma unroll
    for (int k = 0; k < kOut; ++k) {
        const int i = int(threadIdx.x) + k * kThreads, j = i % kTile;
        if (x0 + j < columns) base[(i / kTile) * row + x0 + j] = lines[j * (L + 1) + i / kTile];
    }
}

// A length the column and line kernels take: a power of two, 4 .. 1024 in float32, .. 512 in float64.
template <class T>
bool fusedLength(int n) {
    return (n & (n - 1)) == 0 && n >= kMinFusedLength && n <= kMaxFusedLength<T>;
}

// exp(-2 pi i m / n), m < n, on the device.
template <class T>
std::complex<T>* uploadTwiddles(int n, cudaStream_t stream) {
    std::vector<std::complex<T>> w(static_cast<std::size_t>(n));
    for (int m = 0; m < n; ++m) {
        const double a = -kTwoPiD * m / n;  // in float64, rounded once
        w[std::size_t(m)] = std::complex<T>(T(std::cos(a)), T(std::sin(a)));
    }
    auto* d = static_cast<std::complex<T>*>(allocate(w.size() * sizeof(w[0]), "FFT twiddle factors"));
    check(cudaMemcpyAsync(d, w.data(), w.size() * sizeof(w[0]), cudaMemcpyHostToDevice, stream), "FFT twiddle factors");
    check(cudaStreamSynchronize(stream), "FFT twiddle factors");
    return d;
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

    if (fuse && fusedLength<T>(slow)) {
        tile_ = columnTile(slow, sizeof(std::complex<T>));
        twiddles_ = uploadTwiddles<T>(slow, stream);
        // The faster axes by the line kernels too, where their lengths allow.
        if (fusedLength<T>(big[0]) && (dims == 2 || fusedLength<T>(big[1]))) {
            row_twiddles_ = uploadTwiddles<T>(big[0], stream);
            if (dims == 3) column_twiddles_ = uploadTwiddles<T>(big[1], stream);
        }
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
    launchColumnConvolve<V>(log2Of(slow_), log2Of(tile_), std::size_t((slice_ + tile_ - 1) / tile_), stream_, reinterpret_cast<V*>(data),
                            reinterpret_cast<const V*>(spectrum), reinterpret_cast<const V*>(twiddles_), slice_, count,
                            (long long)halfSize());
    execC2C<T>(plan, data, CUFFT_INVERSE);
}

template <class T>
void PaddedFft<T>::coilSumConvolve(std::array<int, 3> n, const std::complex<T>* x, const std::complex<T>* const* maps, int count,
                                   std::complex<T>* work, const std::complex<T>* spectrum, bool accumulate,
                                   std::complex<T>* y) const {
    if (!prunesEveryAxis()) throw Error("PaddedFft::coilSumConvolve needs line kernels for every axis");
    if (!maps && count != 1) throw Error("PaddedFft::coilSumConvolve: several grids need their maps");
    for (int a = 0; a < dims_; ++a)
        if (2 * n[a] != big_[a]) throw Error("PaddedFft::coilSumConvolve: the image grid is not half the 2N grid");
    using V = cx_t<T>;
    const auto args = coilMapArgs<T>(count, maps, "PaddedFft::coilSumConvolve");
    const RowLayout rows{n[1] * (dims_ == 3 ? n[2] : 1), n[1], big_[0], dims_ == 3 ? slice_ : 0, (long long)halfSize()};
    V* w = reinterpret_cast<V*>(work);
    const V* rowTw = reinterpret_cast<const V*>(row_twiddles_);
    auto launchRows = [&](bool inverse) {
        withFourStepFactors<V>(log2Of(big_[0]), "line transform", [&](auto a, auto b) {
            constexpr int A = decltype(a)::value, B = decltype(b)::value, kTile = kLineTile<A * B, V>;
            const std::size_t bytes = columnSharedBytes(A * B, kTile, sizeof(V));
            const unsigned blocks = unsigned((rows.rows + kTile - 1) / kTile);
            if (inverse)
                rowsInverseKernel<A, B, V><<<blocks, unsigned(kTile * A), bytes, stream_>>>(w, args, count, rows, accumulate,
                                                                                          dev(y), rowTw);
            else
                rowsForwardKernel<A, B, V><<<dim3(blocks, unsigned(count)), unsigned(kTile * A), bytes, stream_>>>(
                    dev(x), args, rows, w, rowTw);
        });
        checkLaunch(inverse ? "rowsInverse" : "rowsForward");
    };
    auto launchColumns = [&](bool inverse) {
        const V* tw = reinterpret_cast<const V*>(column_twiddles_);
        withFourStepFactors<V>(log2Of(big_[1]), "line transform", [&](auto a, auto b) {
            constexpr int A = decltype(a)::value, B = decltype(b)::value, kTile = kLineTile<A * B, V>;
            const std::size_t bytes = columnSharedBytes(A * B, kTile, sizeof(V));
            const dim3 grid(unsigned((big_[0] + kTile - 1) / kTile), unsigned(n[2]), unsigned(count));
            if (inverse)
                columnsKernel<A, B, true, V><<<grid, unsigned(kTile * A), bytes, stream_>>>(w, big_[0], big_[0], slice_,
                                                                                           (long long)halfSize(), tw);
            else
                columnsKernel<A, B, false, V><<<grid, unsigned(kTile * A), bytes, stream_>>>(w, big_[0], big_[0], slice_,
                                                                                            (long long)halfSize(), tw);
        });
        checkLaunch(inverse ? "columnsInverse" : "columnsForward");
    };
    launchRows(false);
    if (dims_ == 3) launchColumns(false);
    launchColumnConvolve<V>(log2Of(slow_), log2Of(tile_), std::size_t((slice_ + tile_ - 1) / tile_), stream_, w,
                            reinterpret_cast<const V*>(spectrum), reinterpret_cast<const V*>(twiddles_), slice_, count,
                            (long long)halfSize());
    if (dims_ == 3) launchColumns(true);
    launchRows(true);
}

template <class T>
PaddedFft<T>::~PaddedFft() {
    for (const auto& [n, h] : batch_plans_) cufftDestroy(cufftHandle(h));
    cufftDestroy(cufftHandle(inner_));
    if (!fused()) cufftDestroy(cufftHandle(outer_));  // made only for the unfused path
    release(twiddles_);
    release(row_twiddles_);
    release(column_twiddles_);
}

template <class T>
void PaddedFft<T>::convolve(std::complex<T>* data, const std::complex<T>* spectrum) const {
    execC2C<T>(inner_, data, CUFFT_FORWARD);
    if (fused()) {
        using V = cx_t<T>;
        launchColumnConvolve<V>(log2Of(slow_), log2Of(tile_), std::size_t((slice_ + tile_ - 1) / tile_), stream_, reinterpret_cast<V*>(data),
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
