#include "recon/cuda/ct_dd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
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

// Rows of detector cells one thread accumulates: neighbouring cells in a column share
// their v boundary, so kCells cells take 2 (kCells + 1) samples per slice instead of 4 kCells.
constexpr int kCells = 4;

template <bool Hardware, int A>
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
        const std::size_t col = std::size_t(q) * t.nu + p;
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

// Exclusive prefix sum over the block (blockDim.x a multiple of 32, at most 1024).
__device__ float blockExclusiveScan(float v, float* warp_totals) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_totals[warp] = x;
    __syncthreads();
    if (warp == 0) {
        float w = lane < warps ? warp_totals[lane] : 0.0f;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const float y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        warp_totals[lane] = w;
    }
    __syncthreads();
    return (warp > 0 ? warp_totals[warp - 1] : 0.0f) + x - v;
}

constexpr int kBackThreads = 256;

// One block per (z row k, slice i) of axis A, over that axis's views; the voxels (i, ·, k)
// gather every view's contribution in shared memory and are written once.
template <bool Hardware, int A>
__global__ void __launch_bounds__(kBackThreads) backprojectKernel(DeviceTables t, const int* views, int view_count,
                                                                  cudaTextureObject_t tex, const float* r, float* volume,
                                                                  bool accumulate) {
    extern __shared__ float shared[];
    const int nu = t.nu, nb = t.n[1 - A], na = t.n[A];
    float* K = shared;          // nu + 1: the column sums' running total over u
    float* B = K + nu + 1;      // nb + 1: K at the voxel boundaries
    float* acc = B + nb + 1;    // nb
    float* warp_totals = acc + nb;  // 32
    const int k = blockIdx.x, i = blockIdx.y;
    for (int j = threadIdx.x; j < nb; j += blockDim.x) acc[j] = 0.0f;
    const float di = float(i) - 0.5f * float(na - 1);
    const float plane = t.edge[A] + (float(i) + 0.5f) * t.voxel[A];
    const int chunk = (nu + blockDim.x - 1) / blockDim.x;
    const int first = min(int(threadIdx.x) * chunk, nu), last = min(first + chunk, nu);
    for (int n = 0; n < view_count; ++n) {
        const int view = views[n];
        // (1) The weighted projection's integral over the voxel's z range, per column:
        // voxel boundaries k, k + 1 in the column's cell units γ = (ζ − ζ_0) / Δζ.
        float local = 0.0f;
        for (int iu = first; iu < last; ++iu) {
            const std::size_t col = std::size_t(view) * nu + iu;
            float g0 = 0.0f, g1 = 1.0f;
            if (!t.planar) {
                const float inv = 1.0f / (fmaf(t.tc1[col], float(i), t.tc0[col]) * t.pv_over_dz);
                g0 = fmaf(float(k) + t.z0, inv, -t.vz0_over_pvdz);
                g1 = fmaf(float(k + 1) + t.z0, inv, -t.vz0_over_pvdz);
            }
            const float h = sampleColumn<Hardware>(tex, r, nu, t.nv, view, iu, g1) -
                            sampleColumn<Hardware>(tex, r, nu, t.nv, view, iu, g0);
            K[iu + 1] = h;
            local += h;
        }
        float run = blockExclusiveScan(local, warp_totals);
        for (int iu = first; iu < last; ++iu) {
            run += K[iu + 1];
            K[iu + 1] = run;
        }
        if (threadIdx.x == 0) K[0] = 0.0f;
        __syncthreads();
        // (2) The running total at each in-plane voxel boundary, mapped onto the detector's
        // cell coordinate μ (piecewise linear through μ(η_m) = m, exact within each cell).
        const std::size_t m0 = std::size_t(view) * (nu + 1);
        const float cb = t.cos_beta[view], sb = t.sin_beta[view];
        const float sign = (fmaf(t.eta1[m0 + nu], di, t.eta_mid[m0 + nu]) >= fmaf(t.eta1[m0], di, t.eta_mid[m0])) ? 1.0f : -1.0f;
        for (int j = threadIdx.x; j <= nb; j += blockDim.x) {
            const float b = t.edge[1 - A] + float(j) * t.voxel[1 - A];
            const float x = A == 0 ? plane : b, y = A == 0 ? b : plane;
            const float xi = x * cb + y * sb, psi = y * cb - x * sb;
            const float u = psi * t.dsd / (t.dso - xi);
            const int m = min(max(int(floorf((u - t.u_first_edge) / t.pixel_u)), 0), nu - 1);
            const float em = fmaf(t.eta1[m0 + m], di, t.eta_mid[m0 + m]);
            const float em1 = fmaf(t.eta1[m0 + m + 1], di, t.eta_mid[m0 + m + 1]);
            const float mu = fminf(fmaxf(float(m) + (float(j) - em) / (em1 - em), 0.0f), float(nu));
            const int c = min(int(mu), nu - 1);
            B[j] = fmaf(mu - float(c), K[c + 1] - K[c], K[c]);
        }
        __syncthreads();
        for (int j = threadIdx.x; j < nb; j += blockDim.x) acc[j] += sign * (B[j + 1] - B[j]);
        __syncthreads();  // K and B are rewritten by the next view
    }
    for (int j = threadIdx.x; j < nb; j += blockDim.x) {
        const std::size_t at = A == 0 ? i + std::size_t(t.n[0]) * (j + std::size_t(t.n[1]) * k)
                                      : j + std::size_t(t.n[0]) * (i + std::size_t(t.n[1]) * k);
        volume[at] = accumulate ? volume[at] + acc[j] : acc[j];
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
    // Copies a linear device array of the same extent (x fastest) in, on `stream`.
    void fill(const float* linear, cudaStream_t stream) {
        cudaMemcpy3DParms p{};
        p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(linear), extent_.width * sizeof(float), extent_.width, extent_.height);
        p.dstArray = array_;
        p.extent = extent_;
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

}  // namespace

struct CudaDdProjector::Impl {
    ct::DdTables host;
    DeviceTables t{};
    std::vector<DeviceBuffer<float>> tables;
    DeviceBuffer<int> views[2];  // the views that slice across x, across y
    int view_count[2] = {0, 0};
    DeviceBuffer<float> image[2];   // integral images per slicing axis
    FilteredArray image_array[2];
    DeviceBuffer<float> columns;    // the adjoint's weighted integrals along v
    FilteredArray columns_array;
    DeviceBuffer<float> host_volume, host_projections;  // device sides of the host calls

    std::size_t imageNodes(int a) const {
        return std::size_t(host.n[1 - a] + 1) * (host.n[2] + 1) * host.n[a];
    }
};

CudaDdProjector::CudaDdProjector(const ct::CtGeometry& geometry, ct::DdInterpolation interpolation, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()), interpolation_(interpolation), stream_(stream) {
    Impl& d = *impl_;
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
    for (int a = 0; a < 2; ++a) {
        std::vector<int> list;
        for (int v = 0; v < h.views; ++v)
            if (h.axis[v] == a) list.push_back(v);
        d.view_count[a] = int(list.size());
        if (list.empty()) continue;
        d.views[a] = DeviceBuffer<int>(list.size(), "CT DD view lists");
        check(cudaMemcpy(d.views[a].data(), list.data(), list.size() * sizeof(int), cudaMemcpyHostToDevice), "CT DD view lists");
        d.image[a] = DeviceBuffer<float>(d.imageNodes(a), "CT DD integral images");
        if (interpolation == ct::DdInterpolation::Hardware)
            d.image_array[a] = FilteredArray(h.n[1 - a] + 1, h.n[2] + 1, h.n[a], "CT DD integral-image texture");
    }
    d.columns = DeviceBuffer<float>(std::size_t(h.views) * h.nu * (h.nv + 1), "CT DD projection integrals");
    if (interpolation == ct::DdInterpolation::Hardware)
        d.columns_array = FilteredArray(h.nu, h.nv + 1, h.views, "CT DD projection-integral texture");
}

CudaDdProjector::~CudaDdProjector() = default;

std::size_t CudaDdProjector::voxels() const {
    return std::size_t(impl_->host.n[0]) * impl_->host.n[1] * impl_->host.n[2];
}
std::size_t CudaDdProjector::samples() const {
    return std::size_t(impl_->host.views) * impl_->host.nu * impl_->host.nv;
}

void CudaDdProjector::project(const float* volume, float* projections) {
    Impl& d = *impl_;
    const DeviceTables& t = d.t;
    const bool hw = interpolation_ == ct::DdInterpolation::Hardware;
    const int nx = t.n[0], ny = t.n[1], nz = t.n[2];
    for (int a = 0; a < 2; ++a) {
        if (!d.view_count[a]) continue;
        const int na = t.n[a], nb = t.n[1 - a];
        float* img = d.image[a].data();
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
        centredPrefixKernel<false><<<blocksFor(std::size_t(na) * nz, 128), 128, 0, stream_>>>(rows, volume, img, t);
        checkLaunch("CT DD integral images (rows)");
        Lines cols{};
        cols.P = nb + 1;
        cols.Q = na;
        cols.n = nz;
        cols.ip = cols.op = 1;
        cols.iq = cols.oq = std::size_t(nz + 1) * (nb + 1);
        cols.in_base = std::size_t(nb + 1);
        cols.in_step = cols.out_step = std::size_t(nb + 1);
        centredPrefixKernel<false><<<blocksFor(std::size_t(nb + 1) * na, 128), 128, 0, stream_>>>(cols, img, img, t);
        checkLaunch("CT DD integral images (columns)");
        if (hw) d.image_array[a].fill(img, stream_);
        const dim3 block(32, 4);
        const dim3 grid(blocksFor(t.nu, block.x), blocksFor(blocksFor(t.nv, kCells), block.y), unsigned(d.view_count[a]));
        const cudaTextureObject_t tex = hw ? d.image_array[a].texture() : 0;
        if (a == 0) {
            if (hw) projectKernel<true, 0><<<grid, block, 0, stream_>>>(t, d.views[0].data(), tex, img, projections);
            else projectKernel<false, 0><<<grid, block, 0, stream_>>>(t, d.views[0].data(), tex, img, projections);
        } else {
            if (hw) projectKernel<true, 1><<<grid, block, 0, stream_>>>(t, d.views[1].data(), tex, img, projections);
            else projectKernel<false, 1><<<grid, block, 0, stream_>>>(t, d.views[1].data(), tex, img, projections);
        }
        checkLaunch("CT DD projection");
    }
}

void CudaDdProjector::backproject(const float* projections, float* volume) {
    Impl& d = *impl_;
    const DeviceTables& t = d.t;
    const bool hw = interpolation_ == ct::DdInterpolation::Hardware;
    Lines v{};
    v.P = t.nu;
    v.Q = t.views;
    v.n = t.nv;
    v.ip = v.op = 1;
    v.iq = std::size_t(t.nu) * t.nv;
    v.oq = std::size_t(t.nu) * (t.nv + 1);
    v.in_step = v.out_step = std::size_t(t.nu);
    centredPrefixKernel<true><<<blocksFor(std::size_t(t.nu) * t.views, 128), 128, 0, stream_>>>(v, projections,
                                                                                              d.columns.data(), t);
    checkLaunch("CT DD projection integrals");
    if (hw) d.columns_array.fill(d.columns.data(), stream_);
    const cudaTextureObject_t tex = hw ? d.columns_array.texture() : 0;
    bool accumulate = false;
    for (int a = 0; a < 2; ++a) {
        if (!d.view_count[a]) continue;
        const int nb = t.n[1 - a];
        const std::size_t shared = (std::size_t(t.nu) + 1 + 2 * std::size_t(nb) + 1 + 32) * sizeof(float);
        auto launch = [&](auto kernel) {
            check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                  "CT DD backprojection shared memory");
            kernel<<<dim3(unsigned(t.n[2]), unsigned(t.n[a])), kBackThreads, shared, stream_>>>(
                t, d.views[a].data(), d.view_count[a], tex, d.columns.data(), volume, accumulate);
        };
        if (a == 0) {
            if (hw) launch(backprojectKernel<true, 0>);
            else launch(backprojectKernel<false, 0>);
        } else {
            if (hw) launch(backprojectKernel<true, 1>);
            else launch(backprojectKernel<false, 1>);
        }
        checkLaunch("CT DD backprojection");
        accumulate = true;
    }
}

void CudaDdProjector::projectHost(const float* volume, float* projections) {
    Impl& d = *impl_;
    if (d.host_volume.size() != voxels()) d.host_volume = DeviceBuffer<float>(voxels(), "CT volume");
    if (d.host_projections.size() != samples()) d.host_projections = DeviceBuffer<float>(samples(), "CT projections");
    d.host_volume.upload(volume, voxels(), stream_);
    project(d.host_volume.data(), d.host_projections.data());
    d.host_projections.download(projections, samples(), stream_);
}

void CudaDdProjector::backprojectHost(const float* projections, float* volume) {
    Impl& d = *impl_;
    if (d.host_volume.size() != voxels()) d.host_volume = DeviceBuffer<float>(voxels(), "CT volume");
    if (d.host_projections.size() != samples()) d.host_projections = DeviceBuffer<float>(samples(), "CT projections");
    d.host_projections.upload(projections, samples(), stream_);
    backproject(d.host_projections.data(), d.host_volume.data());
    d.host_volume.download(volume, voxels(), stream_);
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
