#include "recon/nufft/padded_convolution.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>

#include "recon/core/errors.hpp"
#include "recon/nufft/fftw_planner.hpp"

namespace recon {
namespace {

// Columns per tile of the fused stage: a power of two (whole cache lines) whose tile of
// 2N_slow values fits in about 64 KiB (L1/L2), between 4 and 64.
template <class T>
int defaultTileColumns(int slow2) {
    int t = 64;
    while (t > 4 && std::size_t(t) * std::size_t(slow2) * sizeof(std::complex<T>) > (64u << 10)) t /= 2;
    return t;
}

}  // namespace

template <class T>
struct PaddedConvolution<T>::Impl {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    Grid g;
    int dims = 0, L = 0;          // L: the slowest axis
    std::array<int, 3> n{}, b{};  // N and 2N per axis
    std::size_t slab = 1;         // points of one slab of the 2N grid (all axes but L)
    int columns = 0;              // per tile of the fused stage
    std::size_t tiles = 0;
    fftw::Buffer<C> work;         // the N non-zero slabs of the 2N grid
    fftw::Buffer<T> spec;         // the (real) spectrum, tile by tile: [tile][slow][column]
    mutable std::vector<fftw::Buffer<C>> tile_buffers;  // one per thread
    std::vector<typename F::Plan> slab_forward, slab_inverse;  // per slab axis, for slab 0 (run on any slab)
    typename F::Plan tile_forward = nullptr, tile_inverse = nullptr;

    C* tileBuffer() const {
        const int t = omp_get_thread_num();
        return tile_buffers[std::size_t(t)].p;
    }
    ~Impl() {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        for (auto p : slab_forward) F::destroy(p);
        for (auto p : slab_inverse) F::destroy(p);
        if (tile_forward) F::destroy(tile_forward);
        if (tile_inverse) F::destroy(tile_inverse);
    }
};

template <class T>
PaddedConvolution<T>::PaddedConvolution(const Grid& g, const std::vector<T>& spectrum, int tile_columns)
    : impl_(new Impl) {
    using F = fftw::Api<T>;
    Impl& m = *impl_;
    m.g = g;
    m.dims = g.dims;
    m.L = g.dims - 1;
    const Grid big = g.doubled();
    if (spectrum.size() != big.voxels())
        throw InputError("the Toeplitz spectrum has " + std::to_string(spectrum.size()) + " values, not " + big.describe());
    for (int a = 0; a < 3; ++a) {
        m.n[a] = a < m.dims ? g.n[a] : 1;
        m.b[a] = a < m.dims ? big.n[a] : 1;
    }
    for (int a = 0; a < m.L; ++a) m.slab *= std::size_t(m.b[a]);
    const int slow = m.n[m.L], slow2 = m.b[m.L];
    m.columns = tile_columns > 0 ? tile_columns : defaultTileColumns<T>(slow2);
    m.tiles = (m.slab + std::size_t(m.columns) - 1) / std::size_t(m.columns);
    m.work = fftw::Buffer<std::complex<T>>(m.slab * std::size_t(slow), "the Toeplitz product's 2N grid");
    m.spec = fftw::Buffer<T>(m.tiles * std::size_t(slow2) * std::size_t(m.columns), "the Toeplitz spectrum");
    for (std::size_t tile = 0; tile < m.tiles; ++tile)
        for (int z = 0; z < slow2; ++z)
            for (int t = 0; t < m.columns; ++t) {
                const std::size_t c = tile * std::size_t(m.columns) + std::size_t(t);
                if (c < m.slab)
                    m.spec.p[(tile * std::size_t(slow2) + std::size_t(z)) * std::size_t(m.columns) + std::size_t(t)] =
                        spectrum[std::size_t(z) * m.slab + c];
            }
    for (int i = 0; i < std::max(1, omp_get_max_threads()); ++i) m.tile_buffers.emplace_back(std::size_t(slow2) * std::size_t(m.columns));

    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    fftw::prepare();
    // Every plan runs single-threaded inside the engine's own OpenMP loops (over slabs or
    // tiles), on buffers aligned as the ones planned on (slabs start at multiples of the
    // slab's even size; tile buffers are FFTW's own).
    F::threads(1);
    auto* work = fftw::cpx(m.work.p);
    auto* tile = fftw::cpx(m.tile_buffers[0].p);
    // Slab axis a: lines along a; the other slab axes loop over their whole 2N where they
    // were transformed before a (c < a) and over the non-zero N where not yet (c > a).
    std::array<int, 3> stride{1, m.b[0], m.b[0] * m.b[1]};
    for (int a = 0; a < m.L; ++a) {
        const fftw_iodim line{m.b[a], stride[a], stride[a]};
        std::vector<fftw_iodim> loops;
        for (int c = 0; c < m.L; ++c)
            if (c != a) loops.push_back({c < a ? m.b[c] : m.n[c], stride[c], stride[c]});
        // Measuring overwrites the buffer it plans on: the work buffer holds nothing yet.
        for (int sign : {FFTW_FORWARD, FFTW_BACKWARD})
            (sign == FFTW_FORWARD ? m.slab_forward : m.slab_inverse).push_back(fftw::planned(m.slab, [&](unsigned flags) {
                return F::guru(line, int(loops.size()), loops.data(), work, work, sign, flags);
            }));
        if (!m.slab_forward.back() || !m.slab_inverse.back()) throw Error("FFTW could not plan the Toeplitz product's transforms");
    }
    const fftw_iodim line{slow2, m.columns, m.columns};
    const fftw_iodim loop{m.columns, 1, 1};
    const std::size_t tile_points = std::size_t(slow2) * std::size_t(m.columns);
    m.tile_forward = fftw::planned(tile_points, [&](unsigned flags) { return F::guru(line, 1, &loop, tile, tile, FFTW_FORWARD, flags); });
    m.tile_inverse = fftw::planned(tile_points, [&](unsigned flags) { return F::guru(line, 1, &loop, tile, tile, FFTW_BACKWARD, flags); });
    if (!m.tile_forward || !m.tile_inverse) throw Error("FFTW could not plan the Toeplitz product's transforms");
    std::fill(m.work.p, m.work.p + m.work.n, std::complex<T>(0));
    fftw::savePlans();
}

template <class T>
PaddedConvolution<T>::~PaddedConvolution() = default;

template <class T>
void PaddedConvolution<T>::apply(const std::complex<T>* x, std::complex<T>* y) const {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    const Impl& m = *impl_;
    const int slow = m.n[m.L], slow2 = m.b[m.L];
    const std::size_t rows = m.dims == 3 ? std::size_t(m.n[1]) : 1;  // input rows per slab
    const std::size_t nx = std::size_t(m.n[0]), bx = std::size_t(m.b[0]);
    const bool lines = m.L > 0;  // in 1D the only axis is the slowest
    while (int(m.tile_buffers.size()) < omp_get_max_threads())  // more threads than at planning
        m.tile_buffers.emplace_back(std::size_t(slow2) * std::size_t(m.columns));

    // 1. Pad each non-zero slab and transform it along its axes (pruned).
#pragma omp parallel for schedule(static)
    for (int z = 0; z < slow; ++z) {
        C* s = m.work.p + std::size_t(z) * m.slab;
        if (lines) {
            for (std::size_t r = 0; r < rows; ++r) {
                std::memcpy(static_cast<void*>(s + r * bx), x + (std::size_t(z) * rows + r) * nx, nx * sizeof(C));
                std::fill(s + r * bx + nx, s + (r + 1) * bx, C(0));
            }
            std::fill(s + rows * bx, s + m.slab, C(0));
        } else {
            s[0] = x[z];
        }
        for (auto p : m.slab_forward) F::run(p, fftw::cpx(s));
    }

    // 2. The slowest axis, tile by tile: gather the non-zero half, forward, product, inverse,
    //    scatter the half that is kept.
    const std::size_t cols = std::size_t(m.columns);
#pragma omp parallel for schedule(static)
    for (std::size_t tile = 0; tile < m.tiles; ++tile) {
        C* buf = m.tileBuffer();
        const std::size_t c0 = tile * cols, w = std::min(cols, m.slab - c0);
        for (int z = 0; z < slow; ++z)
            std::memcpy(static_cast<void*>(buf + std::size_t(z) * cols), m.work.p + std::size_t(z) * m.slab + c0, w * sizeof(C));
        std::fill(buf + std::size_t(slow) * cols, buf + std::size_t(slow2) * cols, C(0));
        F::run(m.tile_forward, fftw::cpx(buf));
        // A real spectrum (Q is Hermitian): two real products per value, half the reads.
        T* pb = reinterpret_cast<T*>(buf);
        const T* ps = m.spec.p + tile * std::size_t(slow2) * cols;
        const std::size_t count = std::size_t(slow2) * cols;
#pragma omp simd
        for (std::size_t i = 0; i < count; ++i) {
            pb[2 * i] *= ps[i];
            pb[2 * i + 1] *= ps[i];
        }
        F::run(m.tile_inverse, fftw::cpx(buf));
        for (int z = 0; z < slow; ++z)
            std::memcpy(static_cast<void*>(m.work.p + std::size_t(z) * m.slab + c0), buf + std::size_t(z) * cols, w * sizeof(C));
    }

    // 3. Inverse along the slab's axes (pruned as the forward), then the crop.
#pragma omp parallel for schedule(static)
    for (int z = 0; z < slow; ++z) {
        C* s = m.work.p + std::size_t(z) * m.slab;
        for (auto it = m.slab_inverse.rbegin(); it != m.slab_inverse.rend(); ++it) F::run(*it, fftw::cpx(s));
        if (lines) {
            for (std::size_t r = 0; r < rows; ++r)
                std::memcpy(static_cast<void*>(y + (std::size_t(z) * rows + r) * nx), s + r * bx, nx * sizeof(C));
        } else {
            y[z] = s[0];
        }
    }
}

template <class T>
std::vector<T> PaddedConvolution<T>::spectrum() const {
    const Impl& m = *impl_;
    const int slow2 = m.b[m.L];
    const std::size_t cols = std::size_t(m.columns);
    std::vector<T> out(m.slab * std::size_t(slow2));
    for (std::size_t tile = 0; tile < m.tiles; ++tile)
        for (int z = 0; z < slow2; ++z)
            for (std::size_t t = 0; t < cols && tile * cols + t < m.slab; ++t)
                out[std::size_t(z) * m.slab + tile * cols + t] = m.spec.p[(tile * std::size_t(slow2) + std::size_t(z)) * cols + t];
    return out;
}

template class PaddedConvolution<float>;
template class PaddedConvolution<double>;

}  // namespace recon
