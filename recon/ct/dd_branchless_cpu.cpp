#include "recon/ct/dd_branchless_cpu.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

namespace recon::ct {
namespace {

// Slice i across axis a of an x-fastest volume: the strides of a, of the in-slice axis b, and of z.
struct SliceLayout {
    std::size_t stride_a, stride_b, stride_z;
    int nb, nz;
    std::size_t nodes() const { return std::size_t(nb + 1) * (nz + 1); }
};

SliceLayout layoutFor(const DdTables& t, int a) {
    const std::size_t sx = 1, sy = std::size_t(t.n[0]), sz = std::size_t(t.n[0]) * t.n[1];
    return a == 0 ? SliceLayout{sx, sy, sz, t.n[1], t.n[2]} : SliceLayout{sy, sx, sz, t.n[0], t.n[2]};
}

// The integral image of slice i on its (nb + 1) × (nz + 1) voxel-corner nodes (η fastest):
// S(j, k) = Σ_{j' < j, k' < k} f, centred on the middle node (the separable terms that
// centring subtracts cancel in every four-corner difference, and the stored values stay
// a quarter as large).
void integralImage(const float* volume, const SliceLayout& l, int i, std::vector<double>& row, double* s) {
    const int nb = l.nb, nz = l.nz, jc = nb / 2, kc = nz / 2;
    const float* slice = volume + std::size_t(i) * l.stride_a;
    std::fill(s, s + nb + 1, 0.0);
    for (int k = 0; k < nz; ++k) {
        double run = 0.0;
        row[0] = 0.0;
        for (int j = 0; j < nb; ++j) row[j + 1] = run += slice[j * l.stride_b + k * l.stride_z];
        const double centre = row[jc];
        double* prev = s + std::size_t(k) * (nb + 1);
        double* next = prev + (nb + 1);
        for (int j = 0; j <= nb; ++j) next[j] = prev[j] + (row[j] - centre);
    }
    const std::vector<double> middle(s + std::size_t(kc) * (nb + 1), s + std::size_t(kc + 1) * (nb + 1));
    for (int k = 0; k <= nz; ++k)
        for (int j = 0; j <= nb; ++j) s[std::size_t(k) * (nb + 1) + j] -= middle[j];
}

// Bilinear interpolation of the node grid at (η, ζ), clamped to the grid: beyond the
// volume an integral image is constant, so clamping keeps it exact.
struct Bilinear {
    std::size_t at;  // node (j, k)
    double w00, w10, w01, w11;
};
inline Bilinear bilinear(int nb, int nz, double eta, double zeta) {
    eta = std::clamp(eta, 0.0, double(nb));
    zeta = std::clamp(zeta, 0.0, double(nz));
    const int j = std::min(int(eta), nb - 1), k = std::min(int(zeta), nz - 1);
    const double fj = eta - j, fk = zeta - k;
    return {std::size_t(k) * (nb + 1) + j, (1 - fj) * (1 - fk), fj * (1 - fk), (1 - fj) * fk, fj * fk};
}
inline double gather(const double* s, int nb, const Bilinear& w) {
    const double* p = s + w.at;
    return w.w00 * p[0] + w.w10 * p[1] + w.w01 * p[nb + 1] + w.w11 * p[nb + 2];
}
inline void scatter(double* g, int nb, const Bilinear& w, double value) {
    double* p = g + w.at;
    p[0] += w.w00 * value;
    p[1] += w.w10 * value;
    p[nb + 1] += w.w01 * value;
    p[nb + 2] += w.w11 * value;
}

// Detector cell (iu, ·) at slice i: the footprint's η edges, the centre ray's t, and
// ζ of v boundary c (the planar case: the whole slice height).
struct ColumnAtSlice {
    double eta_lo, eta_hi, tc, dzeta;
    double zeta(const DdTables& t, int c) const { return t.planar ? double(c) : tc * t.vz[c] - t.z0; }
};
inline ColumnAtSlice columnAt(const DdTables& t, int view, int iu, int i) {
    const std::size_t m = t.boundary(view, iu), col = t.column(view, iu);
    ColumnAtSlice c;
    c.eta_lo = t.eta0[m] + t.eta1[m] * i;
    c.eta_hi = t.eta0[m + 1] + t.eta1[m + 1] * i;
    c.tc = t.tc0[col] + t.tc1[col] * i;
    c.dzeta = t.planar ? 1.0 : c.tc * t.pv_over_dz;
    return c;
}
inline double rayLength(const DdTables& t, int view, int iu, int iv) {
    const std::size_t col = t.column(view, iu);
    const double h = t.row_height_mm[iv];
    return t.len_scale[col] * std::sqrt(t.len_inplane2[col] + h * h);
}

int threadCount(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

}  // namespace

BranchlessDdCpu::BranchlessDdCpu(const CtGeometry& geometry) : tables_(makeDdTables(geometry)) {}

// Columns one task of the projection handles: views × column blocks keep every core busy
// even for a few views, and a block's samples along one v boundary lie along one row of
// the integral image (cache lines, not strides).
constexpr int kColumnBlock = 64;

void BranchlessDdCpu::project(const float* volume, float* projections, int threads, const Progress& progress) const {
    const DdTables& t = tables_;
    const int nthreads = threadCount(threads);
    std::vector<double> images[2];
    for (int a = 0; a < 2; ++a) {
        if (std::find(t.axis.begin(), t.axis.end(), a) == t.axis.end()) continue;
        const SliceLayout l = layoutFor(t, a);
        images[a].resize(l.nodes() * t.n[a]);
#pragma omp parallel num_threads(nthreads)
        {
            std::vector<double> row(std::size_t(l.nb) + 1);
#pragma omp for schedule(static)
            for (int i = 0; i < t.n[a]; ++i) integralImage(volume, l, i, row, images[a].data() + l.nodes() * i);
        }
    }
    progress.check();
    const int nu = t.nu, nv = t.nv;
    const int blocks = (nu + kColumnBlock - 1) / kColumnBlock;
    const int tasks = t.views * blocks;
    std::atomic<int> done{0};
    std::atomic<bool> cancelled{false};
#pragma omp parallel num_threads(nthreads)
    {
        std::vector<double> acc(std::size_t(kColumnBlock) * nv), previous(kColumnBlock);
        std::vector<ColumnAtSlice> cols(kColumnBlock);
        std::vector<double> norm(kColumnBlock);
#pragma omp for schedule(dynamic)
        for (int task = 0; task < tasks; ++task) {
            if (cancelled.load(std::memory_order_relaxed)) continue;
            const int view = task / blocks, u0 = (task % blocks) * kColumnBlock, width = std::min(kColumnBlock, nu - u0);
            const int a = t.axis[view];
            const SliceLayout l = layoutFor(t, a);
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int i = 0; i < t.n[a]; ++i) {
                const double* s = images[a].data() + l.nodes() * i;
                for (int w = 0; w < width; ++w) {
                    cols[w] = columnAt(t, view, u0 + w, i);
                    norm[w] = 1.0 / ((cols[w].eta_hi - cols[w].eta_lo) * cols[w].dzeta);
                }
                // The η-difference at each v boundary; a cell's mean is the difference of its
                // two boundaries' (neighbouring cells in a column share one).
                for (int c = 0; c <= nv; ++c)
                    for (int w = 0; w < width; ++w) {
                        const double z = cols[w].zeta(t, c);
                        const double e = gather(s, l.nb, bilinear(l.nb, l.nz, cols[w].eta_hi, z)) -
                                         gather(s, l.nb, bilinear(l.nb, l.nz, cols[w].eta_lo, z));
                        if (c > 0) acc[std::size_t(c - 1) * kColumnBlock + w] += (e - previous[w]) * norm[w];
                        previous[w] = e;
                    }
            }
            float* out = projections + std::size_t(view) * nu * nv;
            for (int iv = 0; iv < nv; ++iv)
                for (int w = 0; w < width; ++w)
                    out[std::size_t(iv) * nu + u0 + w] =
                        float(rayLength(t, view, u0 + w, iv) * acc[std::size_t(iv) * kColumnBlock + w]);
            const int finished = ++done;
            if (progress.cancelled()) cancelled = true;
            if (omp_get_thread_num() == 0 && progress.report) progress.report(double(finished) / tasks);
        }
    }
    progress.check();
}

void BranchlessDdCpu::backproject(const float* projections, float* volume, int threads, const Progress& progress) const {
    const DdTables& t = tables_;
    const int nthreads = threadCount(threads);
    const int nu = t.nu, nv = t.nv;
    std::fill(volume, volume + voxels(), 0.0f);
    const int total_slices = (std::find(t.axis.begin(), t.axis.end(), 0) != t.axis.end() ? t.n[0] : 0) +
                             (std::find(t.axis.begin(), t.axis.end(), 1) != t.axis.end() ? t.n[1] : 0);
    std::atomic<int> done{0};
    std::atomic<bool> cancelled{false};
    for (int a = 0; a < 2; ++a) {
        std::vector<int> views;
        for (int v = 0; v < t.views; ++v)
            if (t.axis[v] == a) views.push_back(v);
        if (views.empty()) continue;
        const SliceLayout l = layoutFor(t, a);
#pragma omp parallel num_threads(nthreads)
        {
            std::vector<double> g(l.nodes()), weight(std::size_t(nu) * nv), suffix(std::size_t(l.nb) + 1);
            std::vector<ColumnAtSlice> cols(nu);
#pragma omp for schedule(dynamic)
            for (int i = 0; i < t.n[a]; ++i) {
                if (cancelled.load(std::memory_order_relaxed)) continue;
                std::fill(g.begin(), g.end(), 0.0);
                // Transpose of the differences and of the bilinear samples: every sample's
                // weight goes to its four nodes.
                for (int view : views) {
                    const float* p = projections + std::size_t(view) * nu * nv;
                    for (int iu = 0; iu < nu; ++iu) {
                        cols[iu] = columnAt(t, view, iu, i);
                        const double norm = 1.0 / ((cols[iu].eta_hi - cols[iu].eta_lo) * cols[iu].dzeta);
                        for (int iv = 0; iv < nv; ++iv)
                            weight[std::size_t(iv) * nu + iu] = rayLength(t, view, iu, iv) * norm * p[std::size_t(iv) * nu + iu];
                    }
                    for (int c = 0; c <= nv; ++c)
                        for (int iu = 0; iu < nu; ++iu) {
                            const double w = (c > 0 ? weight[std::size_t(c - 1) * nu + iu] : 0.0) -
                                             (c < nv ? weight[std::size_t(c) * nu + iu] : 0.0);
                            const double z = cols[iu].zeta(t, c);
                            scatter(g.data(), l.nb, bilinear(l.nb, l.nz, cols[iu].eta_hi, z), w);
                            scatter(g.data(), l.nb, bilinear(l.nb, l.nz, cols[iu].eta_lo, z), -w);
                        }
                }
                // Transpose of the integral image S(j, k) = Σ_{j' < j, k' < k} f(j', k'):
                // f(j', k') = Σ_{j > j', k > k'} G(j, k), summed from the far corner.
                std::fill(suffix.begin(), suffix.end(), 0.0);
                float* slice = volume + std::size_t(i) * l.stride_a;
                for (int k = l.nz - 1; k >= 0; --k) {
                    const double* gk = g.data() + std::size_t(k + 1) * (l.nb + 1);
                    for (int j = 0; j <= l.nb; ++j) suffix[j] += gk[j];  // Σ_{k'' > k} G(j, k'')
                    double run = 0.0;
                    for (int j = l.nb - 1; j >= 0; --j) {
                        run += suffix[j + 1];
                        slice[j * l.stride_b + k * l.stride_z] += float(run);
                    }
                }
                const int finished = ++done;
                if (progress.cancelled()) cancelled = true;
                if (omp_get_thread_num() == 0 && progress.report) progress.report(double(finished) / total_slices);
            }
        }
        progress.check();
    }
}

// ---------------------------------------------------------------- as an operator

namespace {

class BranchlessDdOperator final : public LinearOperator {
public:
    BranchlessDdOperator(VectorSpace& space, const CtGeometry& geometry, int threads)
        : LinearOperator(space, geometry.volume.voxels(), geometry.beam.samples(), "branchless DD projector (CPU)"),
          dd_(geometry), threads_(threads) {}

private:
    // The projector is real: the real and imaginary parts go through it alike
    // (the imaginary part only when it is not all zero).
    template <class Apply>
    void applyParts(const Vector& in, Vector& out, std::size_t n_out, Apply apply) const {
        ComplexArray host;
        space().download(in, host);
        std::vector<float> part(host.size()), re(n_out), im(n_out, 0.0f);
        for (std::size_t k = 0; k < host.size(); ++k) part[k] = float(host[k].real());
        apply(part.data(), re.data());
        const bool complex = std::any_of(host.begin(), host.end(), [](const cdouble& z) { return z.imag() != 0.0; });
        if (complex) {
            for (std::size_t k = 0; k < host.size(); ++k) part[k] = float(host[k].imag());
            apply(part.data(), im.data());
        }
        ComplexArray result(n_out);
        for (std::size_t k = 0; k < n_out; ++k) result[k] = cdouble(re[k], im[k]);
        space().upload(result, out);
    }
    void applyForward(const Vector& x, Vector& y) const override {
        applyParts(x, y, outSize(), [&](const float* v, float* p) { dd_.project(v, p, threads_); });
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        applyParts(y, x, inSize(), [&](const float* p, float* v) { dd_.backproject(p, v, threads_); });
    }

    BranchlessDdCpu dd_;
    int threads_;
};

}  // namespace

LinearOperatorPtr branchlessDdOperator(VectorSpace& space, const CtGeometry& geometry, int threads) {
    return std::make_shared<BranchlessDdOperator>(space, geometry, threads);
}

}  // namespace recon::ct
