#include "recon/cuda/ct_dd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace recon::cuda {
namespace {

// The geometry's tables as the kernels read them (float32; dd_tables.hpp says what each is).
// η is stored at the middle slice, η_m(i) = eta_mid + eta1 · (i − (n_a − 1)/2), so that
// float32 keeps its digits where the footprints fall.
struct DeviceTables {
    int n[3];
    int nu, nv, views, planar;
    const float* cos_beta;
    const float* sin_beta;
    const float* eta_mid;
    const float* eta1;
    const float* tc0;
    const float* tc1;
    const float* len_scale;
    const float* len_inplane2;
    const float* vz;
    const float* row_height;
    const int* axis;  // per view: the slicing axis a
    float z0, pv_over_dz, vz0_over_pvdz;
    float dso, dsd, u_first_edge, pixel_u;
    float edge[3], voxel[3];
};

// Per slicing axis a, the integral images are stored slice after slice, η fastest:
// node (j, k) of slice i at (i · (n_z + 1) + k) · (n_b + 1) + j. The weighted v integrals
// of the projections (for the adjoint) are view after view, u fastest: (view · (n_v + 1) + c) · n_u + iu.
__device__ __forceinline__ float softBilinear(const float* img, int nb, int nz, int i, float eta, float zeta) {
    eta = fminf(fmaxf(eta, 0.0f), float(nb));
    zeta = fminf(fmaxf(zeta, 0.0f), float(nz));
    const int j = min(int(eta), nb - 1), k = min(int(zeta), nz - 1);
    const float fj = eta - float(j), fk = zeta - float(k);
    const float* p = img + (std::size_t(i) * (nz + 1) + k) * (nb + 1) + j;
    const float a = fmaf(fj, __ldg(p + 1) - __ldg(p), __ldg(p));
    const float b = fmaf(fj, __ldg(p + nb + 2) - __ldg(p + nb + 1), __ldg(p + nb + 1));
    return fmaf(fk, b - a, a);
}

template <bool Hardware>
__device__ __forceinline__ float sampleImage(cudaTextureObject_t tex, const float* img, int nb, int nz, int i, float eta,
                                             float zeta) {
    if constexpr (Hardware)
        return tex3D<float>(tex, eta + 0.5f, zeta + 0.5f, float(i) + 0.5f);  // texel centres at +½; clamped edges
    else
        return softBilinear(img, nb, nz, i, eta, zeta);
}

// Linear interpolation along a line of nodes node(0 … n) at positions that mostly rise by
// about one node per sample (neighbouring detector or voxel boundaries): the two nodes
// around the last position stay in registers, so each node is read about once instead of
// twice. Same operations, same result, as interpolating each sample afresh.
struct NodeWalk {
    int k = -2;
    float lo = 0.0f, hi = 0.0f;
    template <class Node>
    __device__ __forceinline__ float at(float x, int n, Node node) {
        x = fminf(fmaxf(x, 0.0f), float(n));
        const int kk = min(int(x), n - 1);
        if (kk != k) {
            if (kk == k + 1) lo = hi;
            else lo = node(kk);
            hi = node(kk + 1);
            k = kk;
        }
        return fmaf(x - float(kk), hi - lo, lo);
    }
};

// Rows of detector cells one thread accumulates: neighbouring cells in a column share
// their v boundary, so kCells cells take 2 (kCells + 1) samples per slice instead of 4 kCells.
// The texture path keeps 4: its unrolled fetches hold more registers, and 8 spills there.
template <bool Hardware>
constexpr int kCellsFor = Hardware ? 4 : 8;

template <bool Hardware, int A, bool Walk = false, int kCells = kCellsFor<Hardware>>
__global__ void __launch_bounds__(128) projectKernel(DeviceTables t, const int* views, cudaTextureObject_t tex,
                                                     const float* img, float* proj) {
    const int iu = blockIdx.x * blockDim.x + threadIdx.x;
    const int iv0 = (blockIdx.y * blockDim.y + threadIdx.y) * kCells;
    const int view = views[blockIdx.z];
    if (iu >= t.nu || iv0 >= t.nv) return;
    const int na = t.n[A], nb = t.n[1 - A], nz = t.n[2];
    const std::size_t m = std::size_t(view) * (t.nu + 1) + iu, col = std::size_t(view) * t.nu + iu;
    const float lo_mid = t.eta_mid[m], lo_slope = t.eta1[m], hi_mid = t.eta_mid[m + 1], hi_slope = t.eta1[m + 1];
    const float tc0 = t.tc0[col], tc1 = t.tc1[col];
    float vz[kCells + 1];
    for (int c = 0; c <= kCells; ++c) vz[c] = t.vz[min(iv0 + c, t.nv)];
    float acc[kCells] = {};
    const float mid = 0.5f * float(na - 1);
    for (int i = 0; i < na; ++i) {
        const float di = float(i) - mid;
        const float ea = fmaf(lo_slope, di, lo_mid), eb = fmaf(hi_slope, di, hi_mid);
        const float tc = fmaf(tc1, float(i), tc0);
        const float dzeta = t.planar ? 1.0f : tc * t.pv_over_dz;
        const float norm = 1.0f / ((eb - ea) * dzeta);
        float previous = 0.0f;
        if constexpr (Walk && !Hardware) {
            // Software interpolation, the samples of each footprint edge walking up the slice's
            // rows: first along η (fixed for the slice), then along ζ (softBilinear's operations).
            auto line = [&](float eta) {
                eta = fminf(fmaxf(eta, 0.0f), float(nb));
                const int j = min(int(eta), nb - 1);
                return std::pair<const float*, float>(img + std::size_t(i) * (nz + 1) * (nb + 1) + j, eta - float(j));
            };
            const auto [pa, fa] = line(ea);
            const auto [pb, fb] = line(eb);
            auto nodeA = [&](int k) {
                const float* q = pa + std::size_t(k) * (nb + 1);
                return fmaf(fa, __ldg(q + 1) - __ldg(q), __ldg(q));
            };
            auto nodeB = [&](int k) {
                const float* q = pb + std::size_t(k) * (nb + 1);
                return fmaf(fb, __ldg(q + 1) - __ldg(q), __ldg(q));
            };
            NodeWalk wa, wb;
#pragma unroll
            for (int c = 0; c <= kCells; ++c) {
                const float z = t.planar ? float(c) : fmaf(tc, vz[c], -t.z0);
                const float e = wb.at(z, nz, nodeB) - wa.at(z, nz, nodeA);
                if (c > 0) acc[c - 1] = fmaf(e - previous, norm, acc[c - 1]);
                previous = e;
            }
        } else {
#pragma unroll
            for (int c = 0; c <= kCells; ++c) {
                const float z = t.planar ? float(c) : fmaf(tc, vz[c], -t.z0);
                const float e = sampleImage<Hardware>(tex, img, nb, nz, i, eb, z) - sampleImage<Hardware>(tex, img, nb, nz, i, ea, z);
                if (c > 0) acc[c - 1] = fmaf(e - previous, norm, acc[c - 1]);
                previous = e;
            }
        }
    }
    const float scale = t.len_scale[col], inplane2 = t.len_inplane2[col];
#pragma unroll
    for (int c = 0; c < kCells; ++c) {
        const int iv = iv0 + c;
        if (iv >= t.nv) break;
        const float h = t.row_height[iv];
        proj[(std::size_t(view) * t.nv + iv) * t.nu + iu] = scale * sqrtf(fmaf(h, h, inplane2)) * acc[c];
    }
}

// Centred running sums along lines, accumulated in float64: out[m] = Σ_{m' < m} w_m' in[m'] − (the same
// at m = n/2), m = 0 … n. Line (p, q) starts at in_base + p ip + q iq and out_base + p op + q oq. The
// constant subtracted cancels in every difference the samplers take; it keeps the stored values small.
// Weighted: w = the ray length per slice of view q, column p, row m (the adjoint's integral along v).
struct Lines {
    int P, Q, n;
    int q0;  // Weighted: line q belongs to view q0 + q
    std::size_t ip, iq, op, oq, in_base, out_base, in_step, out_step;
};
template <bool Weighted>
__global__ void centredPrefixKernel(Lines l, const float* in, float* out, DeviceTables t) {
    const std::size_t id = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= std::size_t(l.P) * l.Q) return;
    const int p = int(id % l.P), q = int(id / l.P);
    const float* src = in + l.in_base + p * l.ip + q * l.iq;
    float* dst = out + l.out_base + p * l.op + q * l.oq;
    float scale = 1.0f, inplane2 = 0.0f;
    if (Weighted) {
        const std::size_t col = std::size_t(l.q0 + q) * t.nu + p;
        scale = t.len_scale[col];
        inplane2 = t.len_inplane2[col];
    }
    auto value = [&](int m) {
        const float v = src[m * l.in_step];
        if (!Weighted) return double(v);
        const float h = t.row_height[m];
        return double(v) * double(scale * sqrtf(fmaf(h, h, inplane2)));
    };
    double centre = 0.0;
    for (int m = 0; m < l.n / 2; ++m) centre += value(m);
    double run = 0.0;
    // In place (out rows one behind in's) is safe: row m is written after in[m − 1] was read.
    for (int m = 0; m <= l.n; ++m) {
        const double next = m < l.n ? value(m) : 0.0;
        dst[m * l.out_step] = float(run - centre);
        run += next;
    }
}

template <bool Hardware>
__device__ __forceinline__ float sampleColumn(cudaTextureObject_t tex, const float* r, int nu, int nv, int view, int iu,
                                              float gamma) {
    if constexpr (Hardware) {
        return tex3D<float>(tex, float(iu) + 0.5f, gamma + 0.5f, float(view) + 0.5f);
    } else {
        gamma = fminf(fmaxf(gamma, 0.0f), float(nv));
        const int c = min(int(gamma), nv - 1);
        const float f = gamma - float(c);
        const float* p = r + (std::size_t(view) * (nv + 1) + c) * nu + iu;
        return fmaf(f, __ldg(p + nu) - __ldg(p), __ldg(p));
    }
}

// z voxels one backprojection thread accumulates: neighbouring voxels of a column share
// their z boundary, so kStrip voxels take kStrip + 1 samples per detector column.
constexpr int kStripDefault = 16;

// The adjoint, gathered voxel by voxel without atomics or barriers. One thread per (x, y)
// and kStrip voxels along z loops over the views [v0, v1), its sums in registers, and
// writes each voxel once. Per view it computes what the projector's transpose gives the
// voxel (i, j, k) of that view's slicing axis:
//   Σ_c w_c · H(c, k),   H(c, k) = R(c, γ_c(k + 1)) − R(c, γ_c(k)),
// R being column c's integral along v of the projection weighted by L (the `columns`
// table), γ_c(k) the voxel boundary k in column c's cell units, and w_c the length of
// column c's η range that voxel j's in-plane extent covers, per unit of the column:
// with μ(j) the detector cell coordinate of boundary j (piecewise linear through the
// cells' u edges, exact within each cell) and K(μ) = Σ_{c < ⌊μ⌋} H(c) + frac(μ) H(⌊μ⌋),
// the voxel takes K(μ(j + 1)) − K(μ(j)); only the 2 or 3 columns between μ(j) and
// μ(j + 1) have non-zero weights, so no scan over the detector row is needed.
template <bool Hardware, bool Walk = false, int kStrip = kStripDefault>
__global__ void __launch_bounds__(128) backprojectKernel(DeviceTables t, int v0, int v1, cudaTextureObject_t tex,
                                                         const float* r, float* volume, bool accumulate) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    const int k0 = blockIdx.z * kStrip;
    if (x >= t.n[0] || y >= t.n[1]) return;
    const int nu = t.nu;
    float acc[kStrip] = {};
    for (int view = v0; view < v1; ++view) {
        // The view's slicing axis a is the same for every thread (no divergence): slice i
        // along a, in-slice index j along b.
        const int a = __ldg(t.axis + view);
        const int i = a == 0 ? x : y, j = a == 0 ? y : x;
        const float di = float(i) - 0.5f * float(a == 0 ? t.n[0] - 1 : t.n[1] - 1);
        const float plane = a == 0 ? fmaf(float(i) + 0.5f, t.voxel[0], t.edge[0]) : fmaf(float(i) + 0.5f, t.voxel[1], t.edge[1]);
        const float edge_b = a == 0 ? t.edge[1] : t.edge[0], voxel_b = a == 0 ? t.voxel[1] : t.voxel[0];
        const std::size_t m0 = std::size_t(view) * (nu + 1);
        const float cb = __ldg(t.cos_beta + view), sb = __ldg(t.sin_beta + view);
        // μ at in-plane voxel boundary jb: its detector u (the ray from the source), the cell m
        // holding it, then linear in η within that cell.
        auto muAt = [&](int jb) {
            const float b = edge_b + float(jb) * voxel_b;
            const float px = a == 0 ? plane : b, py = a == 0 ? b : plane;
            const float xi = px * cb + py * sb, psi = py * cb - px * sb;
            const float u = psi * t.dsd / (t.dso - xi);
            const int m = min(max(int(floorf((u - t.u_first_edge) / t.pixel_u)), 0), nu - 1);
            const float em = fmaf(__ldg(t.eta1 + m0 + m), di, __ldg(t.eta_mid + m0 + m));
            const float em1 = fmaf(__ldg(t.eta1 + m0 + m + 1), di, __ldg(t.eta_mid + m0 + m + 1));
            return fminf(fmaxf(float(m) + (float(jb) - em) / (em1 - em), 0.0f), float(nu));
        };
        float mu0 = muAt(j), mu1 = muAt(j + 1);
        // The projector's orientation: η falls with u on some views, and then so does μ with j.
        float s = (fmaf(__ldg(t.eta1 + m0 + nu), di, __ldg(t.eta_mid + m0 + nu)) >=
                   fmaf(__ldg(t.eta1 + m0), di, __ldg(t.eta_mid + m0)))
                      ? 1.0f
                      : -1.0f;
        if (mu1 < mu0) {
            const float swap = mu0;
            mu0 = mu1;
            mu1 = swap;
            s = -s;
        }
        const int c0 = min(int(mu0), nu - 1), c1 = min(int(mu1), nu - 1);
        const float f0 = mu0 - float(c0), f1 = mu1 - float(c1);
        for (int c = c0; c <= c1; ++c) {
            const float w = s * ((c < c1 ? 1.0f : f1) - (c == c0 ? f0 : 0.0f));
            float inv = 0.0f;
            if (!t.planar) {
                const std::size_t col = std::size_t(view) * nu + c;
                inv = 1.0f / (fmaf(__ldg(t.tc1 + col), float(i), __ldg(t.tc0 + col)) * t.pv_over_dz);
            }
            // Boundary k in column c's cell units (the planar case: the slice's whole height).
            auto gamma = [&](int k) { return t.planar ? float(k) : fmaf(float(k) + t.z0, inv, -t.vz0_over_pvdz); };
            if constexpr (Walk && !Hardware) {
                // The column's rows read once each, walking up with the voxel boundaries.
                const float* p = r + std::size_t(view) * (t.nv + 1) * nu + c;
                auto node = [&](int row) { return __ldg(p + std::size_t(row) * nu); };
                NodeWalk walk;
                float previous = walk.at(gamma(k0), t.nv, node);
#pragma unroll
                for (int q = 0; q < kStrip; ++q) {
                    const float next = walk.at(gamma(k0 + q + 1), t.nv, node);
                    acc[q] = fmaf(w, next - previous, acc[q]);
                    previous = next;
                }
            } else {
                float previous = sampleColumn<Hardware>(tex, r, nu, t.nv, view, c, gamma(k0));
#pragma unroll
                for (int q = 0; q < kStrip; ++q) {
                    const float next = sampleColumn<Hardware>(tex, r, nu, t.nv, view, c, gamma(k0 + q + 1));
                    acc[q] = fmaf(w, next - previous, acc[q]);
                    previous = next;
                }
            }
        }
    }
#pragma unroll
    for (int q = 0; q < kStrip; ++q) {
        const int k = k0 + q;
        if (k >= t.n[2]) break;
        const std::size_t at = std::size_t(x) + std::size_t(t.n[0]) * (y + std::size_t(t.n[1]) * k);
        volume[at] = accumulate ? volume[at] + acc[q] : acc[q];
    }
}

// A float32 device copy of a host table.
DeviceBuffer<float> uploadFloats(const std::vector<double>& v, const char* what) {
    std::vector<float> f(v.begin(), v.end());
    DeviceBuffer<float> d(std::max<std::size_t>(f.size(), 1), what);
    if (!f.empty()) check(cudaMemcpy(d.data(), f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice), what);
    return d;
}

// A 3D CUDA array of float with a linear-filtering, edge-clamping texture over it.
class FilteredArray {
public:
    FilteredArray() = default;
    FilteredArray(int w, int h, int d, const char* what) {
        int max3d = 0;
        int device = 0;
        check(cudaGetDevice(&device), what);
        check(cudaDeviceGetAttribute(&max3d, cudaDevAttrMaxTexture3DWidth, device), what);
        if (w > max3d || h > max3d || d > max3d)
            throw InputError(std::string(what) + ": " + std::to_string(w) + " x " + std::to_string(h) + " x " +
                             std::to_string(d) + " exceeds the texture unit's 3D limit of " + std::to_string(max3d) +
                             " per axis; use software interpolation");
        extent_ = make_cudaExtent(std::size_t(w), std::size_t(h), std::size_t(d));
        const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
        const cudaError_t status = cudaMalloc3DArray(&array_, &format, extent_);
        if (status == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            throw OutOfMemory(what, std::size_t(w) * h * d * sizeof(float));
        }
        check(status, what);
        cudaResourceDesc resource{};
        resource.resType = cudaResourceTypeArray;
        resource.res.array.array = array_;
        cudaTextureDesc texture{};
        for (int a = 0; a < 3; ++a) texture.addressMode[a] = cudaAddressModeClamp;
        texture.filterMode = cudaFilterModeLinear;
        texture.readMode = cudaReadModeElementType;
        texture.normalizedCoords = 0;
        check(cudaCreateTextureObject(&tex_, &resource, &texture, nullptr), what);
    }
    ~FilteredArray() { reset(); }
    FilteredArray(FilteredArray&& o) noexcept { *this = std::move(o); }
    FilteredArray& operator=(FilteredArray&& o) noexcept {
        if (this != &o) {
            reset();
            std::swap(array_, o.array_);
            std::swap(tex_, o.tex_);
            extent_ = o.extent_;
        }
        return *this;
    }
    // Copies a linear device array (x fastest) into layers [z0, z0 + depth) (depth < 0: all), on `stream`.
    void fill(const float* linear, cudaStream_t stream, int z0 = 0, int depth = -1) {
        cudaMemcpy3DParms p{};
        p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(linear), extent_.width * sizeof(float), extent_.width, extent_.height);
        p.dstArray = array_;
        p.dstPos = make_cudaPos(0, 0, std::size_t(z0));
        p.extent = extent_;
        if (depth >= 0) p.extent.depth = std::size_t(depth);
        p.kind = cudaMemcpyDeviceToDevice;
        check(cudaMemcpy3DAsync(&p, stream), "copy into a texture array");
    }
    cudaTextureObject_t texture() const { return tex_; }

private:
    void reset() {
        if (tex_) cudaDestroyTextureObject(tex_);
        if (array_) cudaFreeArray(array_);
        tex_ = 0;
        array_ = nullptr;
    }
    cudaArray_t array_ = nullptr;
    cudaTextureObject_t tex_ = 0;
    cudaExtent extent_{};
};

unsigned blocksFor(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

// Page-locked host memory: the copy engines read and write it while kernels run, which
// pageable memory does not allow (the driver stages that through its own buffer, in line).
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(std::size_t floats, const char* what) : n_(floats) {
        const cudaError_t status = cudaHostAlloc(&p_, floats * sizeof(float), cudaHostAllocDefault);
        if (status == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            p_ = nullptr;
            throw OutOfMemory(what, floats * sizeof(float));
        }
        check(status, what);
    }
    ~PinnedBuffer() {
        if (p_) cudaFreeHost(p_);
    }
    PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        return *this;
    }
    float* data() { return static_cast<float*>(p_); }
    std::size_t size() const { return n_; }

private:
    void* p_ = nullptr;
    std::size_t n_ = 0;
};

class Event {
public:
    Event() { check(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming), "CT DD: an event"); }
    ~Event() { cudaEventDestroy(e_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return e_; }

private:
    cudaEvent_t e_ = nullptr;
};

// memcpy on up to 8 host threads: one core moves pageable memory at a fraction of what
// the memory system and the PCIe link carry, and the host copies bound the whole calls.
void parallelCopy(float* dst, const float* src, std::size_t n) {
    constexpr std::size_t kPiece = std::size_t(1) << 20;  // floats worth a thread of its own
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t workers = std::min({std::size_t(8), hw, (n + kPiece - 1) / kPiece});
    if (workers <= 1) {
        std::memcpy(dst, src, n * sizeof(float));
        return;
    }
    const std::size_t share = (n + workers - 1) / workers;
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) {
        const std::size_t begin = std::min(n, w * share), count = std::min(n, begin + share) - begin;
        threads.emplace_back([=] { std::memcpy(dst + begin, src + begin, count * sizeof(float)); });
    }
    std::memcpy(dst, src, share * sizeof(float));
    for (std::thread& t : threads) t.join();
}

// Views per piece of a host call's projections: a dozen pieces let the copies of one overlap
// the kernels of another, while each backprojection pass still sums many views in registers.
constexpr int kHostPieces = 12;

}  // namespace

struct CudaDdProjector::Impl {
    ct::DdTables host;
    DeviceTables t{};
    std::vector<DeviceBuffer<float>> tables;
    DeviceBuffer<int> axis;         // per view: its slicing axis
    std::vector<int> view_list[2];  // the views that slice across x, across y (ascending)
    DeviceBuffer<int> views[2];     // the same on the device
    DeviceBuffer<float> image[2];   // integral images per slicing axis
    FilteredArray image_array[2];
    DeviceBuffer<float> columns;    // the adjoint's weighted integrals along v
    FilteredArray columns_array;
    bool hw = false;
    int fp_variant = 0, bp_variant = 0;  // EXPERIMENT (RECONSTUDIO_CT_DD_VARIANT=fp,bp): kernel variants to compare

    // The host calls: device sides, a copy stream beside the compute stream, two page-locked
    // staging buffers used in turn, and the events that order them.
    DeviceBuffer<float> host_volume, host_projections;
    cudaStream_t copy = nullptr;
    PinnedBuffer staging[2];
    std::unique_ptr<Event> staged[2], ready;
    std::vector<std::unique_ptr<Event>> produced;

    ~Impl() {
        if (copy) cudaStreamDestroy(copy);
    }
    std::size_t imageNodes(int a) const {
        return std::size_t(host.n[1 - a] + 1) * (host.n[2] + 1) * host.n[a];
    }
    std::size_t viewSamples() const { return std::size_t(host.nu) * host.nv; }
    int pieceViews() const { return std::max(1, (host.views + kHostPieces - 1) / kHostPieces); }

    void buildImages(const float* volume, cudaStream_t s);
    void projectViews(float* projections, int v0, int v1, cudaStream_t s);
    void backprojectViews(const float* projections, float* volume, int v0, int v1, bool accumulate, cudaStream_t s);
    void prepareHostCall(cudaStream_t compute);
    template <class Arrived>
    void upload(const float* host_in, float* dev, std::size_t n, std::size_t piece, cudaStream_t compute, Arrived arrived);
    template <class Produce>
    void download(const float* dev, float* host_out, std::size_t n, std::size_t piece, cudaStream_t compute,
                  Produce produce);
};

CudaDdProjector::CudaDdProjector(const ct::CtGeometry& geometry, ct::DdInterpolation interpolation, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()), interpolation_(interpolation), stream_(stream) {
    Impl& d = *impl_;
    d.hw = interpolation == ct::DdInterpolation::Hardware;
    if (const char* v = std::getenv("RECONSTUDIO_CT_DD_VARIANT"); v && std::strlen(v) >= 3) {
        d.fp_variant = v[0] - '0';
        d.bp_variant = v[2] - '0';
    }
    d.host = ct::makeDdTables(geometry);
    const ct::DdTables& h = d.host;
    DeviceTables& t = d.t;
    for (int a = 0; a < 3; ++a) {
        t.n[a] = h.n[a];
        t.edge[a] = float(h.edge[a]);
        t.voxel[a] = float(h.voxel[a]);
    }
    t.nu = h.nu;
    t.nv = h.nv;
    t.views = h.views;
    t.planar = h.planar ? 1 : 0;
    t.z0 = float(h.z0);
    t.pv_over_dz = float(h.pv_over_dz);
    t.vz0_over_pvdz = float(h.vz[0] / h.pv_over_dz);
    t.dso = float(h.source_to_isocentre);
    t.dsd = float(h.source_to_detector);
    t.u_first_edge = float(h.u_first_edge);
    t.pixel_u = float(h.pixel_u);
    std::vector<double> eta_mid(h.eta0.size());
    for (int v = 0; v < h.views; ++v)
        for (int m = 0; m <= h.nu; ++m) {
            const std::size_t at = h.boundary(v, m);
            eta_mid[at] = h.eta0[at] + h.eta1[at] * 0.5 * (h.slices(v) - 1);
        }
    auto table = [&](const std::vector<double>& v, const char* what) {
        d.tables.push_back(uploadFloats(v, what));
        return d.tables.back().data();
    };
    t.cos_beta = table(h.cos_beta, "CT DD tables");
    t.sin_beta = table(h.sin_beta, "CT DD tables");
    t.eta_mid = table(eta_mid, "CT DD tables");
    t.eta1 = table(h.eta1, "CT DD tables");
    t.tc0 = table(h.tc0, "CT DD tables");
    t.tc1 = table(h.tc1, "CT DD tables");
    t.len_scale = table(h.len_scale, "CT DD tables");
    t.len_inplane2 = table(h.len_inplane2, "CT DD tables");
    t.vz = table(h.vz, "CT DD tables");
    t.row_height = table(h.row_height_mm, "CT DD tables");
    d.axis = DeviceBuffer<int>(std::size_t(h.views), "CT DD tables");
    check(cudaMemcpy(d.axis.data(), h.axis.data(), h.axis.size() * sizeof(int), cudaMemcpyHostToDevice), "CT DD tables");
    t.axis = d.axis.data();
    for (int a = 0; a < 2; ++a) {
        std::vector<int>& list = d.view_list[a];
        for (int v = 0; v < h.views; ++v)
            if (h.axis[v] == a) list.push_back(v);
        if (list.empty()) continue;
        d.views[a] = DeviceBuffer<int>(list.size(), "CT DD view lists");
        check(cudaMemcpy(d.views[a].data(), list.data(), list.size() * sizeof(int), cudaMemcpyHostToDevice), "CT DD view lists");
        d.image[a] = DeviceBuffer<float>(d.imageNodes(a), "CT DD integral images");
        if (d.hw) d.image_array[a] = FilteredArray(h.n[1 - a] + 1, h.n[2] + 1, h.n[a], "CT DD integral-image texture");
    }
    d.columns = DeviceBuffer<float>(std::size_t(h.views) * h.nu * (h.nv + 1), "CT DD projection integrals");
    if (d.hw) d.columns_array = FilteredArray(h.nu, h.nv + 1, h.views, "CT DD projection-integral texture");
}

CudaDdProjector::~CudaDdProjector() = default;

std::size_t CudaDdProjector::voxels() const {
    return std::size_t(impl_->host.n[0]) * impl_->host.n[1] * impl_->host.n[2];
}
std::size_t CudaDdProjector::samples() const {
    return std::size_t(impl_->host.views) * impl_->host.nu * impl_->host.nv;
}

// Both axes' integral images (each axis whose views exist).
void CudaDdProjector::Impl::buildImages(const float* volume, cudaStream_t s) {
    const int nx = t.n[0], ny = t.n[1], nz = t.n[2];
    for (int a = 0; a < 2; ++a) {
        if (view_list[a].empty()) continue;
        const int na = t.n[a], nb = t.n[1 - a];
        float* img = image[a].data();
        // Along b, into rows 1 … n_z of each slice (row 0 is written by the pass along z).
        Lines rows{};
        rows.P = na;
        rows.Q = nz;
        rows.n = nb;
        rows.ip = a == 0 ? 1 : std::size_t(nx);
        rows.iq = std::size_t(nx) * ny;
        rows.in_step = a == 0 ? std::size_t(nx) : 1;
        rows.op = std::size_t(nz + 1) * (nb + 1);
        rows.oq = std::size_t(nb + 1);
        rows.out_base = std::size_t(nb + 1);
        rows.out_step = 1;
        centredPrefixKernel<false><<<blocksFor(std::size_t(na) * nz, 128), 128, 0, s>>>(rows, volume, img, t);
        checkLaunch("CT DD integral images (rows)");
        Lines cols{};
        cols.P = nb + 1;
        cols.Q = na;
        cols.n = nz;
        cols.ip = cols.op = 1;
        cols.iq = cols.oq = std::size_t(nz + 1) * (nb + 1);
        cols.in_base = std::size_t(nb + 1);
        cols.in_step = cols.out_step = std::size_t(nb + 1);
        centredPrefixKernel<false><<<blocksFor(std::size_t(nb + 1) * na, 128), 128, 0, s>>>(cols, img, img, t);
        checkLaunch("CT DD integral images (columns)");
        if (hw) image_array[a].fill(img, s);
    }
}

// The projections of views [v0, v1) from the integral images.
void CudaDdProjector::Impl::projectViews(float* projections, int v0, int v1, cudaStream_t s) {
    for (int a = 0; a < 2; ++a) {
        const std::vector<int>& list = view_list[a];
        const auto first = std::lower_bound(list.begin(), list.end(), v0) - list.begin();
        const auto count = std::lower_bound(list.begin(), list.end(), v1) - list.begin() - first;
        if (count <= 0) continue;
        const int* v = views[a].data() + first;
        const dim3 block(32, 4);
        const int cells = hw ? kCellsFor<true> : fp_variant == 2 ? 16 : 8;
        const dim3 grid(blocksFor(t.nu, block.x), blocksFor(blocksFor(t.nv, cells), block.y), unsigned(count));
        const cudaTextureObject_t tex = hw ? image_array[a].texture() : 0;
        const float* img = image[a].data();
        if (a == 0) {
            if (hw) projectKernel<true, 0><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else if (fp_variant == 1) projectKernel<false, 0, true, 8><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else if (fp_variant == 2) projectKernel<false, 0, true, 16><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else projectKernel<false, 0><<<grid, block, 0, s>>>(t, v, tex, img, projections);
        } else {
            if (hw) projectKernel<true, 1><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else if (fp_variant == 1) projectKernel<false, 1, true, 8><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else if (fp_variant == 2) projectKernel<false, 1, true, 16><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else projectKernel<false, 1><<<grid, block, 0, s>>>(t, v, tex, img, projections);
        }
        checkLaunch("CT DD projection");
    }
}

// Views [v0, v1) backprojected into (or, with `accumulate`, added to) the volume: their
// weighted integrals along v, then one gathering pass over the whole volume.
void CudaDdProjector::Impl::backprojectViews(const float* projections, float* volume, int v0, int v1, bool accumulate,
                                             cudaStream_t s) {
    const std::size_t nu = std::size_t(t.nu), nv = std::size_t(t.nv);
    Lines l{};
    l.P = t.nu;
    l.Q = v1 - v0;
    l.n = t.nv;
    l.q0 = v0;
    l.ip = l.op = 1;
    l.iq = nu * nv;
    l.oq = nu * (nv + 1);
    l.in_base = std::size_t(v0) * nu * nv;
    l.out_base = std::size_t(v0) * nu * (nv + 1);
    l.in_step = l.out_step = nu;
    centredPrefixKernel<true><<<blocksFor(nu * std::size_t(v1 - v0), 128), 128, 0, s>>>(l, projections, columns.data(), t);
    checkLaunch("CT DD projection integrals");
    if (hw) columns_array.fill(columns.data() + l.out_base, s, v0, v1 - v0);
    const cudaTextureObject_t tex = hw ? columns_array.texture() : 0;
    // Warps of 8 x 4 voxels in (x, y): a warp along x alone would hold 32 slices of the views
    // that slice across x, whose columns and rows spread over many cache lines; a square tile
    // reads few lines for either axis's views.
    const dim3 block(8, 16);
    const int strip = !hw && bp_variant == 2 ? 32 : kStripDefault;
    const dim3 grid(blocksFor(t.n[0], block.x), blocksFor(t.n[1], block.y), blocksFor(t.n[2], strip));
    if (hw) backprojectKernel<true><<<grid, block, 0, s>>>(t, v0, v1, tex, columns.data(), volume, accumulate);
    else if (bp_variant == 1) backprojectKernel<false, true, 16><<<grid, block, 0, s>>>(t, v0, v1, tex, columns.data(), volume, accumulate);
    else if (bp_variant == 2) backprojectKernel<false, true, 32><<<grid, block, 0, s>>>(t, v0, v1, tex, columns.data(), volume, accumulate);
    else backprojectKernel<false><<<grid, block, 0, s>>>(t, v0, v1, tex, columns.data(), volume, accumulate);
    checkLaunch("CT DD backprojection");
}

void CudaDdProjector::project(const float* volume, float* projections) {
    impl_->buildImages(volume, stream_);
    impl_->projectViews(projections, 0, impl_->host.views, stream_);
}

void CudaDdProjector::backproject(const float* projections, float* volume) {
    impl_->backprojectViews(projections, volume, 0, impl_->host.views, false, stream_);
}

// The first host call makes the copy stream, events and staging buffers; every call lets
// the copy stream start only after the work queued so far on the compute stream.
void CudaDdProjector::Impl::prepareHostCall(cudaStream_t compute) {
    const std::size_t nx = std::size_t(host.n[0]) * host.n[1] * host.n[2], ns = std::size_t(host.views) * viewSamples();
    if (host_volume.size() != nx) host_volume = DeviceBuffer<float>(nx, "CT volume");
    if (host_projections.size() != ns) host_projections = DeviceBuffer<float>(ns, "CT projections");
    if (!copy) {
        check(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "CT DD copy stream");
        const std::size_t floats = std::max(std::size_t(pieceViews()) * viewSamples(), std::size_t(1) << 20);
        for (int b = 0; b < 2; ++b) {
            staging[b] = PinnedBuffer(floats, "CT DD page-locked staging");
            staged[b] = std::make_unique<Event>();
        }
        ready = std::make_unique<Event>();
    }
    check(cudaEventRecord(ready->get(), compute), "CT DD host call");
    check(cudaStreamWaitEvent(copy, ready->get(), 0), "CT DD host call");
}

// host_in[0, n) to dev in pieces of at most `piece` floats: the host copies piece p + 1 into
// one staging buffer while the copy engine moves piece p from the other. After piece
// [begin, end) is queued, `compute` waits for it and arrived(begin, end) queues its work.
template <class Arrived>
void CudaDdProjector::Impl::upload(const float* host_in, float* dev, std::size_t n, std::size_t piece,
                                   cudaStream_t compute, Arrived arrived) {
    piece = std::min(piece, staging[0].size());
    for (std::size_t begin = 0, p = 0; begin < n; begin += piece, ++p) {
        const int b = int(p % 2);
        const std::size_t count = std::min(piece, n - begin);
        check(cudaEventSynchronize(staged[b]->get()), "CT DD upload");  // its previous piece has left
        parallelCopy(staging[b].data(), host_in + begin, count);
        check(cudaMemcpyAsync(dev + begin, staging[b].data(), count * sizeof(float), cudaMemcpyHostToDevice, copy),
              "CT DD upload");
        check(cudaEventRecord(staged[b]->get(), copy), "CT DD upload");
        check(cudaStreamWaitEvent(compute, staged[b]->get(), 0), "CT DD upload");
        arrived(begin, begin + count);
    }
}

// dev[0, n) to host_out in pieces: produce(begin, end) queues the work that writes that
// piece on `compute` (all of it first, so that the GPU runs ahead); each piece's copy waits
// for its own work only, and the host copies piece p out of its staging buffer while the
// copy engine brings piece p + 1.
template <class Produce>
void CudaDdProjector::Impl::download(const float* dev, float* host_out, std::size_t n, std::size_t piece,
                                     cudaStream_t compute, Produce produce) {
    piece = std::min(piece, staging[0].size());
    const std::size_t pieces = (n + piece - 1) / piece;
    while (produced.size() < pieces) produced.push_back(std::make_unique<Event>());
    for (std::size_t p = 0; p < pieces; ++p) {
        produce(p * piece, std::min(n, (p + 1) * piece));
        check(cudaEventRecord(produced[p]->get(), compute), "CT DD download");
    }
    auto copyOut = [&](std::size_t p) {
        const int b = int(p % 2);
        check(cudaEventSynchronize(staged[b]->get()), "CT DD download");
        const std::size_t begin = p * piece;
        parallelCopy(host_out + begin, staging[b].data(), std::min(piece, n - begin));
    };
    for (std::size_t p = 0; p < pieces; ++p) {
        const int b = int(p % 2);  // free: its previous piece was copied out below, one turn ago
        const std::size_t begin = p * piece;
        check(cudaStreamWaitEvent(copy, produced[p]->get(), 0), "CT DD download");
        check(cudaMemcpyAsync(staging[b].data(), dev + begin, std::min(piece, n - begin) * sizeof(float),
                              cudaMemcpyDeviceToHost, copy),
              "CT DD download");
        check(cudaEventRecord(staged[b]->get(), copy), "CT DD download");
        if (p > 0) copyOut(p - 1);
    }
    if (pieces > 0) copyOut(pieces - 1);
}

void CudaDdProjector::projectHost(const float* volume, float* projections) {
    Impl& d = *impl_;
    d.prepareHostCall(stream_);
    d.upload(volume, d.host_volume.data(), voxels(), d.staging[0].size(), stream_, [](std::size_t, std::size_t) {});
    d.buildImages(d.host_volume.data(), stream_);
    const std::size_t per_view = d.viewSamples();
    d.download(d.host_projections.data(), projections, samples(), std::size_t(d.pieceViews()) * per_view, stream_,
               [&](std::size_t begin, std::size_t end) {
                   d.projectViews(d.host_projections.data(), int(begin / per_view), int(end / per_view), stream_);
               });
}

void CudaDdProjector::backprojectHost(const float* projections, float* volume) {
    Impl& d = *impl_;
    d.prepareHostCall(stream_);
    const std::size_t per_view = d.viewSamples();
    d.upload(projections, d.host_projections.data(), samples(), std::size_t(d.pieceViews()) * per_view, stream_,
             [&](std::size_t begin, std::size_t end) {
                 const int v0 = int(begin / per_view), v1 = int(end / per_view);
                 d.backprojectViews(d.host_projections.data(), d.host_volume.data(), v0, v1, v0 > 0, stream_);
             });
    d.download(d.host_volume.data(), volume, voxels(), d.staging[0].size(), stream_, [](std::size_t, std::size_t) {});
}

// ---------------------------------------------------------------- the operator's glue

namespace {

template <class T>
__global__ void partToFloatKernel(const T* z, int part, float* out, std::size_t n) {
    const std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) out[k] = float(z[2 * k + part]);
}
template <class T>
__global__ void floatsToComplexKernel(const float* re, const float* im, T* z, std::size_t n) {
    const std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) {
        z[2 * k] = T(re[k]);
        z[2 * k + 1] = im ? T(im[k]) : T(0);
    }
}
template <class T>
__global__ void anyImaginaryKernel(const T* z, std::size_t n, int* flag) {
    for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x)
        if (z[2 * k + 1] != T(0)) {
            *flag = 1;
            return;
        }
}

}  // namespace

namespace detail {

template <class T>
void complexPartToFloat(const std::complex<T>* z, bool imaginary, float* out, std::size_t n, cudaStream_t s) {
    if (!n) return;
    partToFloatKernel<T><<<blocksFor(n, 256), 256, 0, s>>>(reinterpret_cast<const T*>(z), imaginary ? 1 : 0, out, n);
    checkLaunch("CT DD: part of a complex vector");
}
template <class T>
void floatsToComplex(const float* re, const float* im, std::complex<T>* z, std::size_t n, cudaStream_t s) {
    if (!n) return;
    floatsToComplexKernel<T><<<blocksFor(n, 256), 256, 0, s>>>(re, im, reinterpret_cast<T*>(z), n);
    checkLaunch("CT DD: complex vector from parts");
}
template <class T>
bool anyImaginary(const std::complex<T>* z, std::size_t n, int* flag, cudaStream_t s) {
    if (!n) return false;
    check(cudaMemsetAsync(flag, 0, sizeof(int), s), "CT DD: imaginary-part flag");
    anyImaginaryKernel<T><<<std::min(blocksFor(n, 256), 1024u), 256, 0, s>>>(reinterpret_cast<const T*>(z), n, flag);
    checkLaunch("CT DD: imaginary-part flag");
    int h = 0;
    check(cudaMemcpyAsync(&h, flag, sizeof(int), cudaMemcpyDeviceToHost, s), "CT DD: imaginary-part flag");
    check(cudaStreamSynchronize(s), "CT DD: imaginary-part flag");
    return h != 0;
}

template void complexPartToFloat<float>(const std::complex<float>*, bool, float*, std::size_t, cudaStream_t);
template void complexPartToFloat<double>(const std::complex<double>*, bool, float*, std::size_t, cudaStream_t);
template void floatsToComplex<float>(const float*, const float*, std::complex<float>*, std::size_t, cudaStream_t);
template void floatsToComplex<double>(const float*, const float*, std::complex<double>*, std::size_t, cudaStream_t);
template bool anyImaginary<float>(const std::complex<float>*, std::size_t, int*, cudaStream_t);
template bool anyImaginary<double>(const std::complex<double>*, std::size_t, int*, cudaStream_t);

}  // namespace detail

}  // namespace recon::cuda
