#include "recon/nufft/nufft.hpp"

#include "recon/nufft/fftw_planner.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

namespace recon {
namespace {
inline int wrap(int i, int n) {
    if (i >= 0 && i < n) return i;  // most calls: no division
    if (i < 0 && i >= -n) return i + n;
    i %= n;
    return i < 0 ? i + n : i;
}
}  // namespace

template <class T>
NufftPlan<T>::NufftPlan(const Trajectory& t, const SampleGrid& grid, const SpreadKernel& kernel, bool deapodize)
    : grid_(grid), kernel_(kernel), deapodize_(deapodize), dims_(grid.dims), M_(t.samples()) {
    for (int a = 0; a < dims_; ++a) {
        // At least as long as the kernel is wide, so that a sample's footprint never wraps onto
        // itself (small grids at a low sigma; more oversampling only lowers the error).
        G_[a] = std::max(oversampledLength(grid.size[a], kernel.sigma), grid.size[a] > 1 ? oversampledLength(kernel.width, 1.0) : 1);
        W_[a] = std::min(kernel.width, G_[a]);
    }
    pos_.resize(3 * M_);
    start_.resize(3 * M_);
    const int slow = dims_ - 1;
    bucket_.assign(std::size_t(G_[slow]), {});
    for (std::size_t m = 0; m < M_; ++m) {
        for (int a = 0; a < 3; ++a) {
            if (a >= dims_) {
                pos_[3 * m + a] = 0;
                start_[3 * m + a] = 0;
                continue;
            }
            // u = k * spacing in cycles per grid step; its cell on the fine grid, wrapped.
            double u = t.k[3 * m + a] * grid.spacing[a];
            double p = u * G_[a];
            p -= std::floor(p / G_[a]) * G_[a];
            pos_[3 * m + a] = p;
            start_[3 * m + a] = int(std::ceil(p - 0.5 * W_[a]));
        }
        bucket_[std::size_t(wrap(start_[3 * m + slow], G_[slow]))].push_back(std::uint32_t(m));
    }
    if (deapodize_) {
        for (int a = 0; a < dims_; ++a) deapod_[a] = kernel_.deapodization(grid.size[a], G_[a]);
    }
}

template <class T>
const FftPlan<T>& NufftPlan<T>::forwardFft() const {
    if (!fwd_) fwd_ = std::make_unique<FftPlan<T>>(G_, dims_, FftDirection::Forward);
    return *fwd_;
}

template <class T>
const CroppedFft<T>& NufftPlan<T>::adjointFft() const {
    if (!adj_) adj_ = std::make_unique<CroppedFft<T>>(G_, grid_.size, dims_, false);
    return *adj_;
}

// The W cells a sample touches per axis: wrapped fine-grid offsets (already
// multiplied by the axis stride) and kernel weights, so the W^d loop only adds.
struct Footprint {
    int w[3];
    std::size_t offset[3][32];
    double weight[3][32];
};

template <class T>
template <class F>
void NufftPlan<T>::forEachWeight(std::size_t m, F&& f) const {
    Footprint fp;
    const std::size_t stride[3] = {1, std::size_t(G_[0]), std::size_t(G_[0]) * G_[1]};
    for (int a = 0; a < 3; ++a) {
        fp.w[a] = W_[a];
        if (a >= dims_) {
            fp.offset[a][0] = 0;
            fp.weight[a][0] = 1.0;
            continue;
        }
        const int st = start_[3 * m + a];
        const double* kept = weights_.empty() ? nullptr : &weights_[(3 * m + std::size_t(a)) * std::size_t(weights_stride_)];
        int c = wrap(st, G_[a]);
        for (int i = 0; i < W_[a]; ++i) {
            fp.offset[a][i] = std::size_t(c) * stride[a];
            fp.weight[a][i] = kept ? kept[i] : kernel_.value(st + i - pos_[3 * m + a]);
            if (++c == G_[a]) c = 0;
        }
    }
    f(fp);
}

template <class T>
void NufftPlan<T>::keepKernelWeights() {
    if (!weights_.empty()) return;
    const int stride = *std::max_element(W_.begin(), W_.end());
    std::vector<double> w(3 * M_ * std::size_t(stride), 0.0);
    // In blocks of samples, one batch evaluation each (SpreadKernel::values); the unused slots
    // (axes beyond dims, cells beyond W) get an offset outside the kernel's support: weight 0.
    constexpr std::int64_t kBlock = 128;
    const std::int64_t blocks = (std::int64_t(M_) + kBlock - 1) / kBlock;
#pragma omp parallel
    {
        std::vector<double> offsets(std::size_t(3 * kBlock) * std::size_t(stride));
#pragma omp for schedule(static)
        for (std::int64_t blk = 0; blk < blocks; ++blk) {
            const std::size_t m0 = std::size_t(blk * kBlock), m1 = std::min(M_, m0 + std::size_t(kBlock));
            std::fill(offsets.begin(), offsets.end(), double(kernel_.width));
            for (std::size_t m = m0; m < m1; ++m)
                for (int a = 0; a < dims_; ++a) {
                    double* o = &offsets[(3 * (m - m0) + std::size_t(a)) * std::size_t(stride)];
                    for (int i = 0; i < W_[a]; ++i) o[i] = double(start_[3 * m + std::size_t(a)] + i) - pos_[3 * m + std::size_t(a)];
                }
            kernel_.values(offsets.data(), 3 * (m1 - m0) * std::size_t(stride), &w[3 * m0 * std::size_t(stride)]);
        }
    }
    weights_ = std::move(w);
    weights_stride_ = stride;
}

template <class T>
void NufftPlan<T>::spread(const C* c, C* fine, const Progress& progress) const {
    spreadValues(c, fine, progress);
}

template <class T>
void NufftPlan<T>::spread(const T* c, T* fine, const Progress& progress) const {
    spreadValues(c, fine, progress);
}

template <class T>
template <class V>
void NufftPlan<T>::spreadValues(const V* c, V* fine, const Progress& progress) const {
    std::memset(static_cast<void*>(fine), 0, sizeof(V) * fineSize());
    const int slow = dims_ - 1;
    const int Gs = G_[slow], Ws = W_[slow];
    const std::size_t sy = std::size_t(G_[0]), sz = std::size_t(G_[0]) * std::size_t(G_[1]);
    const int wx = W_[0], wy = W_[1], wz = W_[2];
    const std::size_t per_sample = std::size_t(wx) + (dims_ > 1 ? std::size_t(wy) : 0) + (dims_ > 2 ? std::size_t(wz) : 0);
    // Kernel weights are evaluated for a chunk of samples at once (one vectorised loop), unless kept.
    constexpr std::size_t kChunk = 64;
    // Each thread owns a slab of the slow axis and writes only there: no atomics,
    // and the sum does not depend on the thread count's scheduling.
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), tid = omp_get_thread_num();
        int lo = int(std::int64_t(Gs) * tid / nt), hi = int(std::int64_t(Gs) * (tid + 1) / nt);
        if (lo < hi) {
            std::vector<int> buckets;
            if (hi - lo + Ws - 1 >= Gs) {
                for (int b = 0; b < Gs; ++b) buckets.push_back(b);
            } else {
                for (int d = -(Ws - 1); d < hi - lo; ++d) buckets.push_back(wrap(lo + d, Gs));
            }
            std::vector<double> offsets(weights_.empty() ? kChunk * per_sample : 0), computed(offsets.size());
            const double one = 1.0;
            for (int b : buckets) {
                if (progress.cancelled()) break;  // one bucket is a few thousand samples at most
                const std::vector<std::uint32_t>& samples = bucket_[std::size_t(b)];
                for (std::size_t s0 = 0; s0 < samples.size(); s0 += kChunk) {
                    const std::size_t n = std::min(kChunk, samples.size() - s0);
                    if (weights_.empty()) {
                        std::size_t k = 0;
                        for (std::size_t j = 0; j < n; ++j) {
                            const std::size_t m = samples[s0 + j];
                            for (int a = 0; a < dims_; ++a) {
                                const int st = start_[3 * m + std::size_t(a)];
                                const double p = pos_[3 * m + std::size_t(a)];
                                for (int i = 0; i < W_[a]; ++i) offsets[k++] = double(st + i) - p;
                            }
                        }
                        kernel_.values(offsets.data(), k, computed.data());
                    }
                    for (std::size_t j = 0; j < n; ++j) {
                        const std::size_t m = samples[s0 + j];
                        const V v = c[m];
                        // Per axis: the weights and the first cell, wrapped; then the cells row by row
                        // (a row is contiguous unless it wraps), each adding T(w_z w_y w_x) v.
                        const double* w[3] = {&one, &one, &one};
                        int first[3] = {0, 0, 0};
                        // This chunk's computed values, or the plan's kept ones (computed is empty then:
                        // no pointer into it is formed).
                        const double* mine = weights_.empty() ? computed.data() + j * per_sample : nullptr;
                        for (int a = 0; a < dims_; ++a) {
                            if (mine) {
                                w[a] = mine;
                                mine += W_[a];
                            } else {
                                w[a] = &weights_[(3 * m + std::size_t(a)) * std::size_t(weights_stride_)];
                            }
                            first[a] = wrap(start_[3 * m + std::size_t(a)], G_[a]);
                        }
                        for (int iz = 0, cz = first[2]; iz < wz; ++iz, cz = cz + 1 == G_[2] ? 0 : cz + 1) {
                            if (slow == 2 && (cz < lo || cz >= hi)) continue;
                            for (int iy = 0, cy = first[1]; iy < wy; ++iy, cy = cy + 1 == G_[1] ? 0 : cy + 1) {
                                if (slow == 1 && (cy < lo || cy >= hi)) continue;
                                const double wyz = w[2][iz] * w[1][iy];
                                V* row = fine + std::size_t(cy) * sy + std::size_t(cz) * sz;
                                const int cx = first[0];
                                if (slow != 0 && cx + wx <= G_[0]) {
                                    V* out = row + cx;
                                    for (int ix = 0; ix < wx; ++ix) out[ix] += T(wyz * w[0][ix]) * v;
                                } else {
                                    for (int ix = 0, x = cx; ix < wx; ++ix, x = x + 1 == G_[0] ? 0 : x + 1)
                                        if (slow != 0 || (x >= lo && x < hi)) row[x] += T(wyz * w[0][ix]) * v;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    progress.check();
}

template <class T>
void NufftPlan<T>::interpolate(const C* fine, C* c, const Progress& progress) const {
    // An OpenMP loop cannot be left early: once cancelled, the remaining samples are skipped.
    std::atomic<bool> stop{false};
#pragma omp parallel for schedule(dynamic, 256)
    for (std::int64_t m = 0; m < std::int64_t(M_); ++m) {
        if (m % 256 == 0 && progress.cancelled()) stop.store(true, std::memory_order_relaxed);
        if (stop.load(std::memory_order_relaxed)) continue;
        std::complex<double> acc = 0;
        forEachWeight(std::size_t(m), [&](const Footprint& fp) {
            for (int iz = 0; iz < fp.w[2]; ++iz)
                for (int iy = 0; iy < fp.w[1]; ++iy) {
                    const C* base = fine + fp.offset[1][iy] + fp.offset[2][iz];
                    std::complex<double> row = 0;
                    for (int ix = 0; ix < fp.w[0]; ++ix) row += fp.weight[0][ix] * std::complex<double>(base[fp.offset[0][ix]]);
                    acc += fp.weight[2][iz] * fp.weight[1][iy] * row;
                }
        });
        c[m] = C(acc);
    }
    progress.check();
}

template <class T>
void NufftPlan<T>::adjoint(const C* c, C* out, const Progress& progress) const {
    fftw::Buffer<C> fine(fineSize(), "the NUFFT's oversampled grid");  // aligned as the cropped FFT was planned on
    spread(c, fine.p, progress);
    progress.update(0.5);
    adjointFft().execute(fine.p, out, progress);  // the output grid's modes only, in its order
    if (deapodize_) {
        const auto& S = grid_.size;
#pragma omp parallel for
        for (int z = 0; z < S[2]; ++z)
            for (int y = 0; y < S[1]; ++y) {
                double dyz = 1.0;
                if (dims_ > 1) dyz *= deapod_[1][std::size_t(y)];
                if (dims_ > 2) dyz *= deapod_[2][std::size_t(z)];
                C* row = out + (std::size_t(z) * S[1] + y) * S[0];
                for (int x = 0; x < S[0]; ++x) row[x] /= T(deapod_[0][std::size_t(x)] * dyz);
            }
    }
    progress.update(1.0);
}

template <class T>
void NufftPlan<T>::forward(const C* f, C* out, const Progress& progress) const {
    std::vector<C> fine(fineSize());
    const auto& S = grid_.size;
    const std::size_t sy = std::size_t(G_[0]), sz = std::size_t(G_[0]) * G_[1];
#pragma omp parallel for
    for (int z = 0; z < S[2]; ++z)
        for (int y = 0; y < S[1]; ++y)
            for (int x = 0; x < S[0]; ++x) {
                int fx = wrap(x - S[0] / 2, G_[0]);
                int fy = dims_ > 1 ? wrap(y - S[1] / 2, G_[1]) : 0;
                int fz = dims_ > 2 ? wrap(z - S[2] / 2, G_[2]) : 0;
                double d = 1.0;
                if (deapodize_) {
                    d = deapod_[0][x];
                    if (dims_ > 1) d *= deapod_[1][y];
                    if (dims_ > 2) d *= deapod_[2][z];
                }
                fine[fx + fy * sy + fz * sz] = f[(std::size_t(z) * S[1] + y) * S[0] + x] / T(d);
            }
    forwardFft().execute(fine.data(), progress);
    progress.update(0.5);
    interpolate(fine.data(), out, progress);
    progress.update(1.0);
}

template class NufftPlan<float>;
template class NufftPlan<double>;

}  // namespace recon
