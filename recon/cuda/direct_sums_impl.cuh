// The exact-sum kernels and DirectSum<T>, compiled once per precision: the
// including translation unit defines RECON_DIRECT_REAL (float or double) because
// each precision needs its own 64 KiB constant bank for the scan-data tiles.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <cstdio>
#include <type_traits>

#include "recon/cuda/device_math.cuh"
#include "recon/cuda/direct_sums.hpp"

#ifndef RECON_DIRECT_REAL
#error "define RECON_DIRECT_REAL before including direct_sums_impl.cuh"
#endif

namespace recon::cuda {
namespace {

using Real = RECON_DIRECT_REAL;
constexpr int kScanValues = 5;  // kx, ky, kz, Re c, Im c per scan point (the paper's layout)
constexpr int kMaxTile = sizeof(Real) == 4 ? 2048 : 1024;
constexpr int kPaperTile = 256;  // Base .. FastTrig: 256 scan points per tile, 256 threads per block

// The tile of scan data the ConstMem, FastTrig and Tune kernels read; all threads
// of a warp read the same scan point at once, which the constant cache broadcasts.
__constant__ Real c_tile[kScanValues * kMaxTile];

// Scan data layouts, packed per call (c changes; k does not).
enum Layout { kArrayOfStructs = 0, kStructOfArrays = 1, kRecurrence = 2, kSharedTile = 3 };
// Recurrence layout: kx, ky, kz, Re c, Im c, cos D, sin D, 2 cos D with D = 2 pi kx dx.
// Shared-tile layout (Tune): 2 pi kx, 2 pi ky, 2 pi kz, Re c, Im c, 0, 0, 0.
constexpr int kRecValues = 8;

template <class T>
__global__ void packScan(const T* k, const T* rot, const cx_t<T>* c, std::size_t M, int layout, T* out) {
    std::size_t m = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (m >= M) return;
    const T kx = k[3 * m], ky = k[3 * m + 1], kz = k[3 * m + 2];
    const cx_t<T> v = c[m];
    if (layout == kArrayOfStructs) {
        T* s = out + kScanValues * m;
        s[0] = kx, s[1] = ky, s[2] = kz, s[3] = v.x, s[4] = v.y;
    } else if (layout == kStructOfArrays) {
        out[m] = kx, out[M + m] = ky, out[2 * M + m] = kz, out[3 * M + m] = v.x, out[4 * M + m] = v.y;
    } else if (layout == kRecurrence) {
        T* s = out + kRecValues * m;
        s[0] = kx, s[1] = ky, s[2] = kz, s[3] = v.x, s[4] = v.y;
        s[5] = rot[3 * m], s[6] = rot[3 * m + 1], s[7] = rot[3 * m + 2];
    } else {
        // 2 pi folded into k once per sample, so a pair's argument costs three FMAs.
        T* s = out + kRecValues * m;
        const T w = T(kTwoPiD);
        s[0] = w * kx, s[1] = w * ky, s[2] = w * kz, s[3] = v.x, s[4] = v.y, s[5] = 0, s[6] = 0, s[7] = 0;
    }
}

struct GridGeom {
    int sx, sy, sz;
    double hx, hy, hz;
};

template <class T>
__device__ inline T coord(int i, int s, double h) {
    return T(double(i - s / 2) * h);
}

template <class T>
__global__ void voxelCoordinates(GridGeom g, std::size_t begin, std::size_t n, T* x, T* y, T* z) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    std::size_t j = begin + i;
    int ix = int(j % g.sx);
    int iy = int((j / g.sx) % g.sy);
    int iz = int(j / (std::size_t(g.sx) * g.sy));
    x[i] = coord<T>(ix, g.sx, g.hx);
    y[i] = coord<T>(iy, g.sy, g.hy);
    z[i] = coord<T>(iz, g.sz, g.hz);
}

// GPU.Base (Fig. 5a): one thread per voxel; voxel coordinates, the output and the
// scan data (array of structs, the same element for every thread) all in global
// memory, read and written every iteration; library sin/cos. `out` may alias the
// inputs as far as the compiler knows, so every access really goes to memory.
template <class T>
__global__ void fhdBase(const T* scan, int m0, int len, const T* x, const T* y, const T* z, cx_t<T>* out,
                        std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
#pragma unroll 1
    for (int m = m0; m < m0 + len; ++m) {
        const T* s = scan + kScanValues * std::size_t(m);
        T arg = T(kTwoPiD) * (s[0] * x[i] + s[1] * y[i] + s[2] * z[i]);
        T sn, cs;
        SoftTrig::sc(arg, sn, cs);
        out[i].x += s[3] * cs - s[4] * sn;
        out[i].y += s[4] * cs + s[3] * sn;
    }
}

// GPU.RegAlloc (Fig. 5b): the voxel's coordinates and accumulators live in registers.
template <class T>
__global__ void fhdRegAlloc(const T* scan, int m0, int len, const T* x, const T* y, const T* z, cx_t<T>* out,
                            std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const T xr = x[i], yr = y[i], zr = z[i];
    T re = out[i].x, im = out[i].y;
#pragma unroll 1
    for (int m = m0; m < m0 + len; ++m) {
        const T* s = scan + kScanValues * std::size_t(m);
        T arg = T(kTwoPiD) * (s[0] * xr + s[1] * yr + s[2] * zr);
        T sn, cs;
        SoftTrig::sc(arg, sn, cs);
        re += s[3] * cs - s[4] * sn;
        im += s[4] * cs + s[3] * sn;
    }
    out[i] = cmake<cx_t<T>>(re, im);
}

// GPU.Coalesce (Fig. 5c): scan data as separate arrays, and each thread walks the
// tile starting at its own lane, so a warp's 32 loads of one field are 32
// consecutive words (a coalesced access in the G80's sense) instead of 32 loads
// of one address.
template <class T>
__global__ void fhdCoalesce(const T* soa, std::size_t M, int m0, int len, const T* x, const T* y, const T* z,
                            cx_t<T>* out, std::size_t n) {
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const T *kx = soa, *ky = soa + M, *kz = soa + 2 * M, *cr = soa + 3 * M, *ci = soa + 4 * M;
    const T xr = x[i], yr = y[i], zr = z[i];
    T re = out[i].x, im = out[i].y;
    int m = m0 + int(threadIdx.x % 32u) % len;
#pragma unroll 1
    for (int j = 0; j < len; ++j) {
        T arg = T(kTwoPiD) * (kx[m] * xr + ky[m] * yr + kz[m] * zr);
        T sn, cs;
        SoftTrig::sc(arg, sn, cs);
        re += cr[m] * cs - ci[m] * sn;
        im += ci[m] * cs + cr[m] * sn;
        if (++m == m0 + len) m = m0;
    }
    out[i] = cmake<cx_t<T>>(re, im);
}

// GPU.ConstMem, GPU.FastTrig and GPU.Tune (Fig. 5d, 5e): the current tile of scan
// data sits in constant memory; Trig picks library or SFU sin/cos; UNROLL and the
// launch's threads per block and tile length are Tune's parameters.
template <class T, class Trig, int UNROLL>
__global__ void fhdConst(int len, const T* x, const T* y, const T* z, cx_t<T>* out, std::size_t n) {
    static_assert(std::is_same<T, Real>::value, "one precision per translation unit");
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const T xr = x[i], yr = y[i], zr = z[i];
    T re = out[i].x, im = out[i].y;
#pragma unroll UNROLL
    for (int m = 0; m < len; ++m) {
        const T* s = c_tile + kScanValues * m;
        T arg = T(kTwoPiD) * (s[0] * xr + s[1] * yr + s[2] * zr);
        T sn, cs;
        Trig::sc(arg, sn, cs);
        re += s[3] * cs - s[4] * sn;
        im += s[4] * cs + s[3] * sn;
    }
    out[i] = cmake<cx_t<T>>(re, im);
}

// GPU.Tune's shared-memory placement: one launch over all scan data; each block
// stages `tile` scan points (8 values each, two 16-byte loads per point) in
// shared memory, all threads then read the same point (a broadcast).
template <class T>
struct ScanPoint {
    T kx, ky, kz, re, im;
};
__device__ inline ScanPoint<float> loadPoint(const float* p) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float b = p[4];
    return {a.x, a.y, a.z, a.w, b};
}
__device__ inline ScanPoint<double> loadPoint(const double* p) {
    const double2 a = reinterpret_cast<const double2*>(p)[0], b = reinterpret_cast<const double2*>(p)[1];
    return {a.x, a.y, b.x, b.y, p[4]};
}

template <class T, int UNROLL, int V>
__global__ void fhdShared(const T* scan, int M, int tile, const T* x, const T* y, const T* z, cx_t<T>* out,
                          std::size_t n) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* s = reinterpret_cast<T*>(smem);
    // V voxels per thread, blockDim apart (coalesced): each scan point read from shared memory serves V pairs.
    const std::size_t i0 = blockIdx.x * std::size_t(blockDim.x) * V + threadIdx.x;
    T xr[V], yr[V], zr[V], re[V], im[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
        const std::size_t i = i0 + std::size_t(v) * blockDim.x;
        const bool active = i < n;
        xr[v] = active ? x[i] : T(0);
        yr[v] = active ? y[i] : T(0);
        zr[v] = active ? z[i] : T(0);
        re[v] = im[v] = 0;
    }
    for (int m0 = 0; m0 < M; m0 += tile) {
        const int len = min(tile, M - m0);
        __syncthreads();
        for (int v = threadIdx.x; v < len * 8; v += blockDim.x) s[v] = scan[std::size_t(m0) * 8 + v];
        __syncthreads();
#pragma unroll UNROLL
        for (int m = 0; m < len; ++m) {
            const ScanPoint<T> p = loadPoint(s + 8 * m);
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const T arg = p.kx * xr[v] + p.ky * yr[v] + p.kz * zr[v];  // k already carries 2 pi
                T sn, cs;
                HardTrig::sc(arg, sn, cs);
                re[v] += p.re * cs - p.im * sn;
                im[v] += p.im * cs + p.re * sn;
            }
        }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
        const std::size_t i = i0 + std::size_t(v) * blockDim.x;
        if (i < n) out[i] = cmake<cx_t<T>>(re[v], im[v]);
    }
}

template <int U, int V>
void launchShared(int threads, int tile, cudaStream_t s, const Real* scan, int M, const Real* x, const Real* y,
                  const Real* z, cx_t<Real>* out, std::size_t n) {
    const unsigned blocks = unsigned((n + std::size_t(threads) * V - 1) / (std::size_t(threads) * V));
    fhdShared<Real, U, V><<<blocks, threads, std::size_t(tile) * 8 * sizeof(Real), s>>>(scan, M, tile, x, y, z, out, n);
}

template <int V>
void launchSharedUnrolled(int unroll, int threads, int tile, cudaStream_t s, const Real* scan, int M, const Real* x,
                          const Real* y, const Real* z, cx_t<Real>* out, std::size_t n) {
    switch (unroll) {
        case 1: launchShared<1, V>(threads, tile, s, scan, M, x, y, z, out, n); break;
        case 2: launchShared<2, V>(threads, tile, s, scan, M, x, y, z, out, n); break;
        case 4: launchShared<4, V>(threads, tile, s, scan, M, x, y, z, out, n); break;
        case 8: launchShared<8, V>(threads, tile, s, scan, M, x, y, z, out, n); break;
        default: throw InputError("shared-memory GPU.Tune takes unroll 1, 2, 4 or 8, not " + std::to_string(unroll));
    }
}

// Ours (exact-fast). Along a row of the grid the phase grows by D = 2 pi kx dx per
// voxel, so each thread takes a run of R voxels along x: one sin/cos for the run's
// first voxel (argument reduced to [-1/2, 1/2] cycles, then the SFU), one complex
// rotation by exp(iD) for the second, then the Chebyshev recurrence
//   e[r+1] = 2 cos(D) e[r] - e[r-1]
// (two FMAs per voxel, plus two adds to accumulate). cos D, sin D and 2 cos D are
// computed per sample in float64. The result is the exact sum up to rounding: the
// recurrence's error grows at most as r^2/2 ulps (|U_r(cos D)| <= r + 1 whatever
// D is): a few 1e-6 at R = 32 in float32, below float32's own phase rounding. The
// special-function work is cut R-fold. Scan data are staged through shared memory.
constexpr int kRecThreads = 128;
constexpr int kRecTile = 256;

// One scan point of the recurrence layout, read with 16-byte shared-memory loads.
template <class T>
struct RecPoint {
    T kx, ky, kz, re, im, cosD, sinD, twoCosD;
};
__device__ inline RecPoint<float> loadRecPoint(const float* p) {
    const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
    return {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
}
__device__ inline RecPoint<double> loadRecPoint(const double* p) {
    const double2* q = reinterpret_cast<const double2*>(p);
    const double2 a = q[0], b = q[1], c = q[2], d = q[3];
    return {a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y};
}

template <class T, int R>
__global__ void __launch_bounds__(kRecThreads) adjointRecurrence(const T* scan, int m0, int len, GridGeom g,
                                                                   std::size_t begin, std::size_t end,
                                                                   std::size_t row0, std::size_t rows,
                                                                   cx_t<T>* out, bool accumulate) {
    __shared__ __align__(16) T s[kRecValues * kRecTile];
    const int runs = (g.sx + R - 1) / R;
    const std::size_t tid = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const std::size_t row = row0 + tid / runs;
    const int x0 = int(tid % runs) * R;
    const bool active = row < row0 + rows;
    const int iy = int(row % g.sy), iz = int(row / g.sy);
    const T xc = coord<T>(x0, g.sx, g.hx), yc = coord<T>(iy, g.sy, g.hy), zc = coord<T>(iz, g.sz, g.hz);
    T ar[R], ai[R];
#pragma unroll
    for (int r = 0; r < R; ++r) ar[r] = ai[r] = 0;

    for (int t0 = 0; t0 < len; t0 += kRecTile) {
        const int n = min(kRecTile, len - t0);
        __syncthreads();
        for (int v = threadIdx.x; v < n * kRecValues; v += blockDim.x)
            s[v] = scan[std::size_t(m0 + t0) * kRecValues + v];
        __syncthreads();
#pragma unroll 2
        for (int j = 0; j < n; ++j) {
            const RecPoint<T> p = loadRecPoint(s + kRecValues * j);
            T t = fma(p.kx, xc, fma(p.ky, yc, p.kz * zc));
            cx_t<T> e0 = cmul(cis2piReduced(t), cmake<cx_t<T>>(p.re, p.im));
            cx_t<T> e1 = cmul(e0, cmake<cx_t<T>>(p.cosD, p.sinD));
            const T twoCos = p.twoCosD;
            ar[0] += e0.x;
            ai[0] += e0.y;
            ar[1] += e1.x;
            ai[1] += e1.y;
#pragma unroll
            for (int r = 2; r < R; ++r) {
                const cx_t<T> e2 = cmake<cx_t<T>>(fma(twoCos, e1.x, -e0.x), fma(twoCos, e1.y, -e0.y));
                ar[r] += e2.x;
                ai[r] += e2.y;
                e0 = e1;
                e1 = e2;
            }
        }
    }
    if (!active) return;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (x0 + r >= g.sx) break;
        std::size_t idx = row * g.sx + x0 + r;
        if (idx < begin || idx >= end) continue;
        cx_t<T>& o = out[idx - begin];
        o = accumulate ? cmake<cx_t<T>>(o.x + ar[r], o.y + ai[r]) : cmake<cx_t<T>>(ar[r], ai[r]);
    }
}

// Forward sums, one thread per sample, voxels staged through shared memory.
// Paper-style: one sin/cos per pair (Trig); exact-fast: the same recurrence along x.
constexpr int kFwdThreads = 128;
constexpr int kFwdTile = 1024;

template <class T, class Trig>
__global__ void __launch_bounds__(kFwdThreads) forwardDirect(const T* k, std::size_t M, GridGeom g,
                                                               const cx_t<T>* f, std::size_t nvox, cx_t<T>* out) {
    __shared__ cx_t<T> fs[kFwdTile];
    __shared__ T xs[kFwdTile], ys[kFwdTile], zs[kFwdTile];
    const std::size_t m = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const bool active = m < M;
    const T kx = active ? k[3 * m] : T(0), ky = active ? k[3 * m + 1] : T(0), kz = active ? k[3 * m + 2] : T(0);
    T re = 0, im = 0;
    for (std::size_t v0 = 0; v0 < nvox; v0 += kFwdTile) {
        const int n = int(min(std::size_t(kFwdTile), nvox - v0));
        __syncthreads();
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            std::size_t j = v0 + v;
            fs[v] = f[j];
            xs[v] = coord<T>(int(j % g.sx), g.sx, g.hx);
            ys[v] = coord<T>(int((j / g.sx) % g.sy), g.sy, g.hy);
            zs[v] = coord<T>(int(j / (std::size_t(g.sx) * g.sy)), g.sz, g.hz);
        }
        __syncthreads();
        for (int v = 0; v < n; ++v) {
            T arg = T(kTwoPiD) * (kx * xs[v] + ky * ys[v] + kz * zs[v]);
            T sn, cs;
            Trig::sc(arg, sn, cs);
            re += fs[v].x * cs + fs[v].y * sn;  // f * exp(-i arg)
            im += fs[v].y * cs - fs[v].x * sn;
        }
    }
    if (active) out[m] = cmake<cx_t<T>>(re, im);
}

template <class T, int R>
__global__ void __launch_bounds__(kFwdThreads) forwardRecurrence(const T* k, const T* rot, std::size_t M, GridGeom g,
                                                                   const cx_t<T>* f, std::size_t nvox,
                                                                   cx_t<T>* out) {
    __shared__ cx_t<T> fs[kFwdTile];
    const std::size_t m = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const bool active = m < M;
    const T kx = active ? k[3 * m] : T(0), ky = active ? k[3 * m + 1] : T(0), kz = active ? k[3 * m + 2] : T(0);
    // exp(-i 2 pi kx dx): the conjugate of the adjoint's step.
    const cx_t<T> step = active ? cmake<cx_t<T>>(rot[3 * m], -rot[3 * m + 1]) : cmake<cx_t<T>>(1, 0);
    T re = 0, im = 0;
    for (std::size_t v0 = 0; v0 < nvox; v0 += kFwdTile) {
        const int n = int(min(std::size_t(kFwdTile), nvox - v0));
        __syncthreads();
        for (int v = threadIdx.x; v < n; v += blockDim.x) fs[v] = f[v0 + v];
        __syncthreads();
        int v = 0;
        while (v < n) {  // runs of at most R voxels inside one row; uniform across the block
            const std::size_t j = v0 + v;
            const int ix = int(j % g.sx);
            const std::size_t row = j / g.sx;
            const int runLen = min(R, min(g.sx - ix, n - v));
            T t = fma(kx, coord<T>(ix, g.sx, g.hx),
                      fma(ky, coord<T>(int(row % g.sy), g.sy, g.hy), kz * coord<T>(int(row / g.sy), g.sz, g.hz)));
            cx_t<T> e = cis2piReduced(-t);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (r < runLen) {
                    const cx_t<T> fv = fs[v + r];
                    re += fv.x * e.x - fv.y * e.y;
                    im += fv.x * e.y + fv.y * e.x;
                    e = cmul(e, step);
                }
            }
            v += runLen;
        }
    }
    if (active) out[m] = cmake<cx_t<T>>(re, im);
}


GridGeom geometry(const SampleGrid& g) {
    return GridGeom{g.size[0], g.size[1], g.size[2], g.spacing[0], g.spacing[1], g.spacing[2]};
}

unsigned blocksFor(std::size_t n, int threads) { return unsigned((n + threads - 1) / threads); }

template <class Trig, int U>
void launchConst(unsigned blocks, int threads, cudaStream_t s, int len, const Real* x, const Real* y,
                 const Real* z, cx_t<Real>* out, std::size_t n) {
    fhdConst<Real, Trig, U><<<blocks, threads, 0, s>>>(len, x, y, z, out, n);
}

template <class Trig>
void launchConstUnrolled(int unroll, unsigned blocks, int threads, cudaStream_t s, int len, const Real* x,
                         const Real* y, const Real* z, cx_t<Real>* out, std::size_t n) {
    switch (unroll) {
        case 1: launchConst<Trig, 1>(blocks, threads, s, len, x, y, z, out, n); break;
        case 2: launchConst<Trig, 2>(blocks, threads, s, len, x, y, z, out, n); break;
        case 3: launchConst<Trig, 3>(blocks, threads, s, len, x, y, z, out, n); break;
        case 4: launchConst<Trig, 4>(blocks, threads, s, len, x, y, z, out, n); break;
        case 5: launchConst<Trig, 5>(blocks, threads, s, len, x, y, z, out, n); break;
        case 6: launchConst<Trig, 6>(blocks, threads, s, len, x, y, z, out, n); break;
        case 7: launchConst<Trig, 7>(blocks, threads, s, len, x, y, z, out, n); break;
        case 8: launchConst<Trig, 8>(blocks, threads, s, len, x, y, z, out, n); break;
        default: throw InputError("unroll factor " + std::to_string(unroll) + " is outside 1..8");
    }
}

}  // namespace

template <class T>
DirectSum<T>::DirectSum(const Trajectory& t, const SampleGrid& grid, cudaStream_t stream)
    : grid_(grid), M_(t.samples()), stream_(stream) {
    if (M_ > std::size_t(INT32_MAX)) throw InputError("too many samples for the GPU direct sum (limit 2^31 - 1)");
    std::vector<Real> k(3 * M_), rot(3 * M_);
    for (std::size_t m = 0; m < M_; ++m) {
        for (int a = 0; a < 3; ++a) k[3 * m + a] = Real(t.k[3 * m + a]);
        const double phase = kTwoPiD * t.k[3 * m] * grid.spacing[0];
        rot[3 * m] = Real(std::cos(phase));
        rot[3 * m + 1] = Real(std::sin(phase));
        rot[3 * m + 2] = Real(2 * std::cos(phase));
    }
    k_ = DeviceBuffer<Real>(k.size(), "sample positions");
    rot_ = DeviceBuffer<Real>(rot.size(), "sample rotations");
    k_.upload(k.data(), k.size(), stream_);
    rot_.upload(rot.data(), rot.size(), stream_);
    check(cudaStreamSynchronize(stream_), "upload of the trajectory");
    chunk_ = grid_.points();
    run_ = sizeof(T) == 4 ? 32 : 16;
}

template <class T>
void DirectSum<T>::setRunLength(int voxels) {
    if (voxels != 16 && voxels != 32) throw InputError("recurrence runs are 16 or 32 voxels, not " + std::to_string(voxels));
    run_ = voxels;
}

template <class T>
void DirectSum<T>::packSamples(const C* c, int layout) {
    const std::size_t values = (layout >= kRecurrence ? kRecValues : kScanValues) * std::max<std::size_t>(M_, 1);
    if (packed_.size() != values) packed_ = DeviceBuffer<Real>(values, "packed scan data");
    if (M_ == 0) return;
    packScan<Real><<<blocksFor(M_, 256), 256, 0, stream_>>>(k_.data(), rot_.data(),
                                                             reinterpret_cast<const cx_t<Real>*>(c), M_, layout,
                                                             packed_.data());
    checkLaunch("packScan");
}

template <class T>
void DirectSum<T>::adjoint(DirectVersion v, const C* c, C* out, const TuneParams& tp, std::size_t begin,
                              std::size_t end, const Progress& progress) {
    end = std::min(end, grid_.points());
    if (begin >= end) return;
    const bool sharedTune = v == DirectVersion::Tune && tp.shared;
    if (v == DirectVersion::Tune &&
        (tp.tile < 1 || tp.tile > (tp.shared ? maxSharedTile(sizeof(Real) == 8) : kMaxTile) || tp.threads < 32 ||
         tp.threads > 1024))
        throw InputError("tuning parameters out of range: " + tp.describe());
    packSamples(c, v == DirectVersion::Coalesce                     ? kStructOfArrays
                   : v == DirectVersion::ExactFast ? kRecurrence
                   : sharedTune                    ? kSharedTile
                                                   : kArrayOfStructs);
    // Voxels go in chunks so that the per-chunk scratch (coordinates) fits; a chunk
    // that does not fit is halved, down to one block's worth, before giving up.
    std::size_t pos = begin;
    while (pos < end) {
        std::size_t n = std::min(chunk_, end - pos);
        try {
            adjointChunk(v, c, out + (pos - begin), tp, pos, pos + n, progress, double(pos - begin) / (end - begin),
                         double(n) / (end - begin));
            pos += n;
        } catch (const OutOfMemory&) {
            if (chunk_ <= 4096) throw;
            chunk_ = std::max<std::size_t>(4096, chunk_ / 2);
        }
    }
}

template <class T>
void DirectSum<T>::adjointChunk(DirectVersion v, const C* /*c*/, C* outC, const TuneParams& tp,
                                   std::size_t begin, std::size_t end, const Progress& progress, double done,
                                   double share) {
    const std::size_t n = end - begin;
    auto* out = reinterpret_cast<cx_t<Real>*>(outC);
    const GridGeom g = geometry(grid_);
    const int M = int(M_);
    auto report = [&](int m) {
        progress.update(done + share * double(m) / std::max(M, 1));
    };

    if (v == DirectVersion::ExactFast) {
        const std::size_t row0 = begin / g.sx, rows = (end - 1) / g.sx - row0 + 1;
        const int runs = (g.sx + run_ - 1) / run_;
        const unsigned blocks = blocksFor(rows * runs, kRecThreads);
        if (M == 0) check(cudaMemsetAsync(out, 0, n * sizeof(C), stream_), "clear output");
        // Launches of ~64k samples keep progress and cancel responsive.
        const int step = 65536;
        for (int m0 = 0; m0 < M; m0 += step) {
            if (run_ == 32)
                adjointRecurrence<Real, 32><<<blocks, kRecThreads, 0, stream_>>>(
                    packed_.data(), m0, std::min(step, M - m0), g, begin, end, row0, rows, out, m0 > 0);
            else
                adjointRecurrence<Real, 16><<<blocks, kRecThreads, 0, stream_>>>(
                    packed_.data(), m0, std::min(step, M - m0), g, begin, end, row0, rows, out, m0 > 0);
            checkLaunch("adjointRecurrence");
            if (progress.report || progress.cancel) {
                check(cudaStreamSynchronize(stream_), "adjointRecurrence");
                report(m0 + step);
            }
        }
        return;
    }

    DeviceBuffer<Real> xyz(3 * n, "voxel coordinates");
    Real *x = xyz.data(), *y = x + n, *z = y + n;
    voxelCoordinates<Real><<<blocksFor(n, 256), 256, 0, stream_>>>(g, begin, n, x, y, z);
    checkLaunch("voxelCoordinates");
    check(cudaMemsetAsync(out, 0, n * sizeof(C), stream_), "clear output");

    if (v == DirectVersion::Tune && tp.shared) {
        // One launch: the blocks stage the scan tiles themselves.
        if (tp.voxels == 2)
            launchSharedUnrolled<2>(tp.unroll, tp.threads, tp.tile, stream_, packed_.data(), M, x, y, z, out, n);
        else if (tp.voxels == 1)
            launchSharedUnrolled<1>(tp.unroll, tp.threads, tp.tile, stream_, packed_.data(), M, x, y, z, out, n);
        else
            throw InputError("shared-memory GPU.Tune takes 1 or 2 voxels per thread, not " + std::to_string(tp.voxels));
        checkLaunch("fhdShared");
        check(cudaStreamSynchronize(stream_), "F^H d kernel");
        progress.update(done + share);
        return;
    }
    const bool constant = v == DirectVersion::ConstMem || v == DirectVersion::FastTrig || v == DirectVersion::Tune;
    const int tile = v == DirectVersion::Tune ? tp.tile : kPaperTile;
    const int threads = v == DirectVersion::Tune ? tp.threads : kPaperTile;
    const unsigned blocks = blocksFor(n, threads);
    const int syncEvery = std::max(1, 65536 / tile);  // progress / cancel granularity
    int launches = 0;
    for (int m0 = 0; m0 < M; m0 += tile) {
        const int len = std::min(tile, M - m0);
        if (constant) {
            // The host loads each tile into constant memory before the launch (Kirk & Hwu Fig. 14.12).
            check(cudaMemcpyToSymbolAsync(c_tile, packed_.data() + std::size_t(m0) * kScanValues,
                                          std::size_t(len) * kScanValues * sizeof(Real), 0,
                                          cudaMemcpyDeviceToDevice, stream_),
                  "copy of a scan-data tile to constant memory");
            if (v == DirectVersion::ConstMem)
                launchConst<SoftTrig, 1>(blocks, threads, stream_, len, x, y, z, out, n);
            else if (v == DirectVersion::FastTrig)
                launchConst<HardTrig, 1>(blocks, threads, stream_, len, x, y, z, out, n);
            else
                launchConstUnrolled<HardTrig>(tp.unroll, blocks, threads, stream_, len, x, y, z, out, n);
        } else if (v == DirectVersion::Base) {
            fhdBase<Real><<<blocks, threads, 0, stream_>>>(packed_.data(), m0, len, x, y, z, out, n);
        } else if (v == DirectVersion::RegAlloc) {
            fhdRegAlloc<Real><<<blocks, threads, 0, stream_>>>(packed_.data(), m0, len, x, y, z, out, n);
        } else {
            fhdCoalesce<Real><<<blocks, threads, 0, stream_>>>(packed_.data(), M_, m0, len, x, y, z, out, n);
        }
        checkLaunch("F^H d kernel");
        if ((progress.report || progress.cancel) && ++launches % syncEvery == 0) {
            check(cudaStreamSynchronize(stream_), "F^H d kernel");
            report(m0 + len);
        }
    }
    // The coordinates are freed on return: wait for the kernels that read them.
    check(cudaStreamSynchronize(stream_), "F^H d kernel");
}

template <class T>
void DirectSum<T>::forward(DirectVersion v, const C* f, C* outC, const Progress& progress) {
    if (M_ == 0) return;
    const GridGeom g = geometry(grid_);
    auto* out = reinterpret_cast<cx_t<Real>*>(outC);
    const auto* fv = reinterpret_cast<const cx_t<Real>*>(f);
    const unsigned blocks = blocksFor(M_, kFwdThreads);
    switch (v) {
        case DirectVersion::ExactFast:
            forwardRecurrence<Real, 16><<<blocks, kFwdThreads, 0, stream_>>>(k_.data(), rot_.data(), M_, g, fv,
                                                                                  grid_.points(), out);
            break;
        case DirectVersion::FastTrig:
        case DirectVersion::Tune:
            forwardDirect<Real, HardTrig><<<blocks, kFwdThreads, 0, stream_>>>(k_.data(), M_, g, fv, grid_.points(),
                                                                               out);
            break;
        default:
            forwardDirect<Real, SoftTrig><<<blocks, kFwdThreads, 0, stream_>>>(k_.data(), M_, g, fv, grid_.points(),
                                                                               out);
    }
    checkLaunch("forward sum kernel");
    check(cudaStreamSynchronize(stream_), "forward sum kernel");
    progress.update(1.0);
}

template class DirectSum<Real>;

}  // namespace recon::cuda
