#include "recon/cuda/ct_dd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
    float dso, dsd, u_first_edge, inv_pixel_u;
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

// Rows of detector cells one thread accumulates: neighbouring cells in a column share
// their v boundary, so kCells cells take 2 (kCells + 1) samples per slice instead of 4 kCells.
// The texture path keeps 4: its unrolled fetches hold more registers, and 8 spills there.
template <bool Hardware>
constexpr int kCellsFor = Hardware ? 4 : 8;

template <bool Hardware, int A>
__global__ void __launch_bounds__(128) projectKernel(DeviceTables t, const int* views, cudaTextureObject_t tex,
                                                     const float* img, float* proj) {
    constexpr int kCells = kCellsFor<Hardware>;
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
#pragma unroll
        for (int c = 0; c <= kCells; ++c) {
            const float z = t.planar ? float(c) : fmaf(tc, vz[c], -t.z0);
            const float e = sampleImage<Hardware>(tex, img, nb, nz, i, eb, z) - sampleImage<Hardware>(tex, img, nb, nz, i, ea, z);
            if (c > 0) acc[c - 1] = fmaf(e - previous, norm, acc[c - 1]);
            previous = e;
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
// Pairs: out holds float2 (node m, node m + 1) per line position m < n (out_base, op, oq and
// out_step count float2s), so that one 8-byte load brings both nodes of a linear interpolation.
template <bool Weighted, bool Pairs = false>
__global__ void centredPrefixKernel(Lines l, const float* in, float* out, DeviceTables t) {
    const std::size_t id = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= std::size_t(l.P) * l.Q) return;
    const int p = int(id % l.P), q = int(id / l.P);
    const float* src = in + l.in_base + p * l.ip + q * l.iq;
    float* dst = Pairs ? nullptr : out + l.out_base + p * l.op + q * l.oq;
    float2* pairs = Pairs ? reinterpret_cast<float2*>(out) + l.out_base + p * l.op + q * l.oq : nullptr;
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
        const float node = float(run - centre);
        if constexpr (Pairs) {
            if (m < l.n) pairs[m * l.out_step].x = node;
            if (m > 0) pairs[(m - 1) * l.out_step].y = node;
        } else {
            dst[m * l.out_step] = node;
        }
        run += next;
    }
}

// The adjoint's integral of view `view`, column iu, at γ (cell units): the texture's
// linear filtering over the scalar table, or the software interpolation over node pairs
// (one 8-byte load for both nodes).
__device__ __forceinline__ float textureLinear(cudaTextureObject_t tex, int view, int iu, float gamma) {
    return tex3D<float>(tex, float(iu) + 0.5f, gamma + 0.5f, float(view) + 0.5f);
}
__device__ __forceinline__ float pairLinear(const float2* r, int nu, int nv, int view, int iu, float gamma) {
    gamma = fminf(fmaxf(gamma, 0.0f), float(nv));
    const int c = min(int(gamma), nv - 1);
    const float2 q = __ldg(r + (std::size_t(view) * nv + c) * nu + iu);
    return fmaf(gamma - float(c), q.y - q.x, q.x);
}

// z voxels one backprojection thread accumulates: neighbouring voxels of a column share
// their z boundary, so kStrip voxels take kStrip + 1 samples per detector column.
constexpr int kStrip = 16;

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
//
// 8 blocks of 128 threads per multiprocessor on the software path (at most 64 registers, no
// spills): more warps in flight than with the 72 registers it takes unbounded (at 512^3 on
// an H100, 334 ms against 355 ms).
template <bool Hardware>
__global__ void __launch_bounds__(128, Hardware ? 6 : 8)
    backprojectKernel(DeviceTables t, int v0, int v1, int strip0, cudaTextureObject_t tex, const float2* pairs,
                      float* volume, bool accumulate) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    const int k0 = (strip0 + int(blockIdx.z)) * kStrip;
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
            const int m = min(max(int(floorf((u - t.u_first_edge) * t.inv_pixel_u)), 0), nu - 1);
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
            auto sample = [&](float g) {
                if constexpr (Hardware) return textureLinear(tex, view, c, g);
                else return pairLinear(pairs, nu, t.nv, view, c, g);
            };
            float previous = sample(gamma(k0));
#pragma unroll
            for (int q = 0; q < kStrip; ++q) {
                const float next = sample(gamma(k0 + q + 1));
                acc[q] = fmaf(w, next - previous, acc[q]);
                previous = next;
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

// The host calls move the projections in pieces of views: about an eighth of the scan each,
// so that the copies of one overlap the kernels of another while each backprojection pass
// still sums many views in registers, and the end of the pipeline that waits on the host
// (the projection's last pieces, the backprojection's first) in halves down to a 64th, so
// that little is left to copy after the kernels, or to copy before them. Returns the
// pieces' first views and, last, the number of views.
std::vector<int> viewPieces(int views, bool small_first) {
    const int big = std::max(1, (views + 7) / 8);
    std::vector<int> sizes;
    int rest = views;
    for (int piece : {big / 8, big / 8, big / 4, big / 2}) {  // the small end, smallest first
        if (piece < 1 || piece > rest) continue;
        sizes.push_back(piece);
        rest -= piece;
    }
    const int body = (rest + big - 1) / big;
    for (int b = 0; b < body; ++b) sizes.push_back(rest / body + (b < rest % body ? 1 : 0));
    if (!small_first) std::reverse(sizes.begin(), sizes.end());
    std::vector<int> starts{0};
    for (int n : sizes) starts.push_back(starts.back() + n);
    return starts;
}

// The same pieces in samples (per_view a view's samples).
std::vector<std::size_t> sampleStarts(const std::vector<int>& views, std::size_t per_view) {
    std::vector<std::size_t> starts;
    for (int v : views) starts.push_back(std::size_t(v) * per_view);
    return starts;
}

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
    // The adjoint's weighted integrals along v: node after node for the texture path (copied
    // into its array), node pairs for the software path.
    DeviceBuffer<float> columns;
    FilteredArray columns_array;
    DeviceBuffer<float2> column_pairs;
    bool hw = false;

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
    // The volume's pieces in the host calls: slabs of whole backprojection strips along z,
    // about an eighth of the volume (returned as first voxels and, last, the voxel count).
    std::vector<std::size_t> volumePieces() const {
        const std::size_t plane = std::size_t(host.n[0]) * host.n[1];
        const int slabs = std::max(1, (host.n[2] + 8 * kStrip - 1) / (8 * kStrip)) * kStrip;
        std::vector<std::size_t> starts;
        for (int z = 0; z < host.n[2]; z += slabs) starts.push_back(std::size_t(z) * plane);
        starts.push_back(std::size_t(host.n[2]) * plane);
        return starts;
    }

    void buildImages(const float* volume, cudaStream_t s);
    void projectViews(float* projections, int v0, int v1, cudaStream_t s);
    // The adjoint's integrals of views [v0, v1), then their gather into (with `accumulate`,
    // onto) the volume's slices [z0, z1) (whole strips, or up to the end).
    void integrateViews(const float* projections, int v0, int v1, cudaStream_t s);
    void gatherViews(float* volume, int v0, int v1, int z0, int z1, bool accumulate, cudaStream_t s);
    void prepareHostCall(cudaStream_t compute);
    template <class Arrived>
    void upload(const float* host_in, float* dev, const std::vector<std::size_t>& starts, cudaStream_t compute,
                Arrived arrived);
    template <class Produce>
    void download(const float* dev, float* host_out, const std::vector<std::size_t>& starts, cudaStream_t compute,
                  Produce produce);
};

CudaDdProjector::CudaDdProjector(const ct::CtGeometry& geometry, ct::DdInterpolation interpolation, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()), interpolation_(interpolation), stream_(stream) {
    Impl& d = *impl_;
    d.hw = interpolation == ct::DdInterpolation::Hardware;
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
    t.inv_pixel_u = float(1.0 / h.pixel_u);
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
    if (d.hw) d.columns = DeviceBuffer<float>(std::size_t(h.views) * h.nu * (h.nv + 1), "CT DD projection integrals");
    else d.column_pairs = DeviceBuffer<float2>(std::size_t(h.views) * h.nu * h.nv, "CT DD projection integrals");
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
        const dim3 grid(blocksFor(t.nu, block.x), blocksFor(blocksFor(t.nv, hw ? kCellsFor<true> : kCellsFor<false>), block.y), unsigned(count));
        const cudaTextureObject_t tex = hw ? image_array[a].texture() : 0;
        const float* img = image[a].data();
        if (a == 0) {
            if (hw) projectKernel<true, 0><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else projectKernel<false, 0><<<grid, block, 0, s>>>(t, v, tex, img, projections);
        } else {
            if (hw) projectKernel<true, 1><<<grid, block, 0, s>>>(t, v, tex, img, projections);
            else projectKernel<false, 1><<<grid, block, 0, s>>>(t, v, tex, img, projections);
        }
        checkLaunch("CT DD projection");
    }
}

void CudaDdProjector::Impl::integrateViews(const float* projections, int v0, int v1, cudaStream_t s) {
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
    if (!hw) {  // in float2s: node pairs (m, m + 1), m < n_v
        l.oq = nu * nv;
        l.out_base = std::size_t(v0) * nu * nv;
        centredPrefixKernel<true, true><<<blocksFor(nu * std::size_t(v1 - v0), 128), 128, 0, s>>>(
            l, projections, reinterpret_cast<float*>(column_pairs.data()), t);
    } else {
        centredPrefixKernel<true><<<blocksFor(nu * std::size_t(v1 - v0), 128), 128, 0, s>>>(l, projections, columns.data(), t);
    }
    checkLaunch("CT DD projection integrals");
    if (hw) columns_array.fill(columns.data() + l.out_base, s, v0, v1 - v0);
}

void CudaDdProjector::Impl::gatherViews(float* volume, int v0, int v1, int z0, int z1, bool accumulate, cudaStream_t s) {
    const cudaTextureObject_t tex = hw ? columns_array.texture() : 0;
    // Warps of 8 x 4 voxels in (x, y): a warp along x alone would hold 32 slices of the views
    // that slice across x, whose columns and rows spread over many cache lines; a square tile
    // reads few lines for either axis's views.
    const dim3 block(8, 16);
    const int strip0 = z0 / kStrip;
    const dim3 grid(blocksFor(t.n[0], block.x), blocksFor(t.n[1], block.y), blocksFor(std::size_t(z1), kStrip) - strip0);
    if (hw) backprojectKernel<true><<<grid, block, 0, s>>>(t, v0, v1, strip0, tex, nullptr, volume, accumulate);
    else backprojectKernel<false><<<grid, block, 0, s>>>(t, v0, v1, strip0, 0, column_pairs.data(), volume, accumulate);
    checkLaunch("CT DD backprojection");
}

void CudaDdProjector::project(const float* volume, float* projections) {
    impl_->buildImages(volume, stream_);
    impl_->projectViews(projections, 0, impl_->host.views, stream_);
}

void CudaDdProjector::backproject(const float* projections, float* volume) {
    impl_->integrateViews(projections, 0, impl_->host.views, stream_);
    impl_->gatherViews(volume, 0, impl_->host.views, 0, impl_->host.n[2], false, stream_);
}

// The first host call makes the copy stream, events and staging buffers; every call lets
// the copy stream start only after the work queued so far on the compute stream.
void CudaDdProjector::Impl::prepareHostCall(cudaStream_t compute) {
    const std::size_t nx = std::size_t(host.n[0]) * host.n[1] * host.n[2], ns = std::size_t(host.views) * viewSamples();
    if (host_volume.size() != nx) host_volume = DeviceBuffer<float>(nx, "CT volume");
    if (host_projections.size() != ns) host_projections = DeviceBuffer<float>(ns, "CT projections");
    if (!copy) {
        check(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "CT DD copy stream");
        std::size_t floats = std::size_t(1) << 20;
        for (bool small_first : {false, true}) {
            const std::vector<int> views = viewPieces(host.views, small_first);
            for (std::size_t p = 0; p + 1 < views.size(); ++p)
                floats = std::max(floats, std::size_t(views[p + 1] - views[p]) * viewSamples());
        }
        const std::vector<std::size_t> slabs = volumePieces();
        for (std::size_t p = 0; p + 1 < slabs.size(); ++p) floats = std::max(floats, slabs[p + 1] - slabs[p]);
        for (int b = 0; b < 2; ++b) {
            staging[b] = PinnedBuffer(floats, "CT DD page-locked staging");
            staged[b] = std::make_unique<Event>();
        }
        ready = std::make_unique<Event>();
    }
    check(cudaEventRecord(ready->get(), compute), "CT DD host call");
    check(cudaStreamWaitEvent(copy, ready->get(), 0), "CT DD host call");
}

// host_in to dev in pieces [starts[p], starts[p + 1]): the host copies piece p + 1 into one
// staging buffer while the copy engine moves piece p from the other. After piece
// [begin, end) is queued, `compute` waits for it and arrived(p, begin, end) queues its work.
template <class Arrived>
void CudaDdProjector::Impl::upload(const float* host_in, float* dev, const std::vector<std::size_t>& starts,
                                   cudaStream_t compute, Arrived arrived) {
    for (std::size_t p = 0; p + 1 < starts.size(); ++p) {
        const int b = int(p % 2);
        const std::size_t begin = starts[p], count = starts[p + 1] - begin;
        check(cudaEventSynchronize(staged[b]->get()), "CT DD upload");  // its previous piece has left
        parallelCopy(staging[b].data(), host_in + begin, count);
        check(cudaMemcpyAsync(dev + begin, staging[b].data(), count * sizeof(float), cudaMemcpyHostToDevice, copy),
              "CT DD upload");
        check(cudaEventRecord(staged[b]->get(), copy), "CT DD upload");
        check(cudaStreamWaitEvent(compute, staged[b]->get(), 0), "CT DD upload");
        arrived(p, begin, begin + count);
    }
}

// dev to host_out in pieces [starts[p], starts[p + 1]): produce(p, begin, end) queues the
// work that writes piece p on `compute` (all of it first, so that the GPU runs ahead); each
// piece's copy waits for its own work only, and the host copies piece p out of its staging
// buffer while the copy engine brings piece p + 1.
template <class Produce>
void CudaDdProjector::Impl::download(const float* dev, float* host_out, const std::vector<std::size_t>& starts,
                                     cudaStream_t compute, Produce produce) {
    const std::size_t pieces = starts.size() - 1;
    while (produced.size() < pieces) produced.push_back(std::make_unique<Event>());
    for (std::size_t p = 0; p < pieces; ++p) {
        produce(p, starts[p], starts[p + 1]);
        check(cudaEventRecord(produced[p]->get(), compute), "CT DD download");
    }
    auto copyOut = [&](std::size_t p) {
        check(cudaEventSynchronize(staged[p % 2]->get()), "CT DD download");
        parallelCopy(host_out + starts[p], staging[p % 2].data(), starts[p + 1] - starts[p]);
    };
    for (std::size_t p = 0; p < pieces; ++p) {
        const int b = int(p % 2);  // free: its previous piece was copied out below, one turn ago
        check(cudaStreamWaitEvent(copy, produced[p]->get(), 0), "CT DD download");
        check(cudaMemcpyAsync(staging[b].data(), dev + starts[p], (starts[p + 1] - starts[p]) * sizeof(float),
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
    d.upload(volume, d.host_volume.data(), d.volumePieces(), stream_, [](std::size_t, std::size_t, std::size_t) {});
    d.buildImages(d.host_volume.data(), stream_);
    const std::vector<int> views = viewPieces(d.host.views, false);
    d.download(d.host_projections.data(), projections, sampleStarts(views, d.viewSamples()), stream_,
               [&](std::size_t p, std::size_t, std::size_t) {
                   d.projectViews(d.host_projections.data(), views[p], views[p + 1], stream_);
               });
}

// The last piece of views is gathered slab by slab as the volume goes down, so that only the
// last slab's copy follows the kernels.
void CudaDdProjector::backprojectHost(const float* projections, float* volume) {
    Impl& d = *impl_;
    d.prepareHostCall(stream_);
    const std::vector<int> views = viewPieces(d.host.views, true);
    const std::size_t last = views.size() - 2, plane = std::size_t(d.host.n[0]) * d.host.n[1];
    float* dev = d.host_volume.data();
    d.upload(projections, d.host_projections.data(), sampleStarts(views, d.viewSamples()), stream_,
             [&](std::size_t p, std::size_t, std::size_t) {
                 d.integrateViews(d.host_projections.data(), views[p], views[p + 1], stream_);
                 if (p < last) d.gatherViews(dev, views[p], views[p + 1], 0, d.host.n[2], p > 0, stream_);
             });
    d.download(dev, volume, d.volumePieces(), stream_, [&](std::size_t, std::size_t begin, std::size_t end) {
        d.gatherViews(dev, views[last], views[last + 1], int(begin / plane), int(end / plane), last > 0, stream_);
    });
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
