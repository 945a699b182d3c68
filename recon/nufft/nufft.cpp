#include "recon/nufft/nufft.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace recon {
namespace {
inline int wrap(int i, int n) {
    i %= n;
    return i < 0 ? i + n : i;
}
}  // namespace

template <class T>
NufftPlan<T>::NufftPlan(const Trajectory& t, const SampleGrid& grid, const SpreadKernel& kernel, bool deapodize)
    : grid_(grid), kernel_(kernel), deapodize_(deapodize), dims_(grid.dims), M_(t.samples()) {
    for (int a = 0; a < dims_; ++a) {
        G_[a] = oversampledLength(grid.size[a], kernel.sigma);
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
    fwd_ = std::make_unique<FftPlan<T>>(G_, dims_, FftDirection::Forward);
    bwd_ = std::make_unique<FftPlan<T>>(G_, dims_, FftDirection::Backward);
}

// Calls f(fine_index_x, y, z, weight) for the W^d cells a sample touches.
template <class T>
template <class F>
void NufftPlan<T>::forEachWeight(std::size_t m, F&& f) const {
    double w[3][32];
    for (int a = 0; a < 3; ++a) {
        if (a >= dims_) {
            w[a][0] = 1.0;
            continue;
        }
        for (int i = 0; i < W_[a]; ++i) w[a][i] = kernel_.value(start_[3 * m + a] + i - pos_[3 * m + a]);
    }
    for (int iz = 0; iz < W_[2]; ++iz)
        for (int iy = 0; iy < W_[1]; ++iy)
            for (int ix = 0; ix < W_[0]; ++ix) f(ix, iy, iz, w[0][ix] * w[1][iy] * w[2][iz]);
}

template <class T>
void NufftPlan<T>::spread(const C* c, C* fine) const {
    std::memset(static_cast<void*>(fine), 0, sizeof(C) * fineSize());
    const int slow = dims_ - 1;
    const int Gs = G_[slow], Ws = W_[slow];
    const std::size_t sx = 1, sy = std::size_t(G_[0]), sz = std::size_t(G_[0]) * G_[1];
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
            for (int b : buckets) {
                for (std::uint32_t m : bucket_[std::size_t(b)]) {
                    const C v = c[m];
                    const int* st = &start_[3 * m];
                    forEachWeight(m, [&](int ix, int iy, int iz, double wt) {
                        int idx[3] = {ix, iy, iz};
                        int cs = wrap(st[slow] + idx[slow], Gs);
                        if (cs < lo || cs >= hi) return;
                        int cx = wrap(st[0] + ix, G_[0]);
                        int cy = dims_ > 1 ? wrap(st[1] + iy, G_[1]) : 0;
                        int cz = dims_ > 2 ? wrap(st[2] + iz, G_[2]) : 0;
                        fine[cx * sx + cy * sy + cz * sz] += T(wt) * v;
                    });
                }
            }
        }
    }
}

template <class T>
void NufftPlan<T>::interpolate(const C* fine, C* c) const {
    const std::size_t sy = std::size_t(G_[0]), sz = std::size_t(G_[0]) * G_[1];
#pragma omp parallel for schedule(dynamic, 256)
    for (std::int64_t m = 0; m < std::int64_t(M_); ++m) {
        const int* st = &start_[3 * m];
        std::complex<double> acc = 0;
        forEachWeight(std::size_t(m), [&](int ix, int iy, int iz, double wt) {
            int cx = wrap(st[0] + ix, G_[0]);
            int cy = dims_ > 1 ? wrap(st[1] + iy, G_[1]) : 0;
            int cz = dims_ > 2 ? wrap(st[2] + iz, G_[2]) : 0;
            acc += wt * std::complex<double>(fine[cx + cy * sy + cz * sz]);
        });
        c[m] = C(acc);
    }
}

template <class T>
void NufftPlan<T>::adjoint(const C* c, C* out, const Progress& progress) const {
    std::vector<C> fine(fineSize());
    spread(c, fine.data());
    progress.update(0.5);
    bwd_->execute(fine.data());
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
                out[(std::size_t(z) * S[1] + y) * S[0] + x] = fine[fx + fy * sy + fz * sz] / T(d);
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
    fwd_->execute(fine.data());
    progress.update(0.5);
    interpolate(fine.data(), out);
    progress.update(1.0);
}

template class NufftPlan<float>;
template class NufftPlan<double>;

}  // namespace recon
