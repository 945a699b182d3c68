#include "recon/nufft/padded_convolution.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

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
    // Slabs slab + 8 apart in the work grids: a power-of-two distance maps a tile's column
    // (one value per slab) to one cache set, and its copies missed the L1 and L2 caches.
    std::size_t slab_stride = 1;
    int columns = 0;              // per tile of the fused stage
    std::size_t tiles = 0;
    fftw::Buffer<C> work;         // the N non-zero slabs of the 2N grid
    fftw::Buffer<T> spec;         // the (real) spectrum, column by column: [column][slow]
    // The fused stage's tile, transposed: its columns as contiguous lines `tstride` apart (2N_slow
    // + 8: a power-of-two distance would map the transposing copies to few cache sets), an input
    // tile whose slow >= N half stays zero and an output tile, one buffer per thread. Contiguous
    // lines out of place: FFTW's strided in-place plans copied each line to a buffer allocated at
    // every execution (256^2: 40 against 19 us per tile of 16 columns).
    std::size_t tstride = 0;
    mutable std::vector<fftw::Buffer<C>> tile_buffers;  // one per thread
    // Thread t's padded slab (rows: the N_y rows with input in 3D, the one row in 2D, each 2N_x
    // long, the N_x..2N_x padding zero from the start and never written) and the slab the first
    // axis's inverse writes. That axis runs out of place between them and the work grid: FFTW's
    // in-place plans of single lines copied each line to a buffer allocated at every execution.
    std::size_t slab_rows = 1;
    mutable std::vector<fftw::Buffer<C>> slab_in, slab_out;  // one per thread
    std::vector<typename F::Plan> slab_forward, slab_inverse;  // per slab axis, for slab 0 (run on any slab)
    typename F::Plan tile_forward = nullptr, tile_inverse = nullptr;

    // SENSE's threads over coils: the 3D grids and the partial sums of threads 1, 2, ... (thread
    // 0 uses `work` and the output), made on first use.
    mutable std::vector<fftw::Buffer<C>> coil_grids, partial_sums;
    // 2D on one thread (SENSE's products; apply on small grids): the y axis transformed as
    // contiguous lines of a transposed grid, [kx][y] with y padded to 2N_y, one plan per axis for
    // all lines. FFTW's strided column transforms cost about twice its row transforms, and one
    // plan for all rows half of one execution per row (256^2: 173 against 77 us, 38 against 78 us).
    // Rows forward (out of place: the input's zero padding stays), rows inverse (in place),
    // columns forward (out of place, likewise), columns inverse (in place).
    mutable std::vector<typename F::Plan> line_plans;
    // Rows 2N_x + 8 apart (transposed columns: tstride), as the tiles' lines.
    mutable std::size_t rstride = 0;
    // Thread t's grids, one buffer: rows in and out (N_y x rstride each), transposed in and out
    // (2N_x x tstride each). The inputs' padding is zero from the start and never written.
    mutable std::vector<fftw::Buffer<C>> line_grids;  // one per thread, made on first use

    C* tileBuffer() const {
        const int t = omp_get_thread_num();
        return tile_buffers[std::size_t(t)].p;
    }
    void ensureThreadBuffers(int threads) const;  // tile and slab buffers for this many threads
    // Slab z of `grid` := pad(map .* x) (x alone without a map), transformed along the slab's axes
    // (thread t's slab buffers).
    void padSlab(int z, C* grid, const C* x, const C* map, int t) const;
    // map .* x (x alone without a map) into the first N_x of each row of slab z at s (1D: s[0]).
    void fillSlab(int z, C* s, const C* x, const C* map) const;
    // out = map .* x (x alone without a map) for `count` values.
    static void timesMap(C* out, const C* x, const C* map, std::size_t count);
    // The slowest axis of one tile of columns: forward, spectrum, inverse (buf: a tile buffer).
    void convolveTile(std::size_t tile, C* grid, C* buf) const;
    // Slab z inverse along the slab's axes, cropped into y: y = s, or y (+)= conj(map) .* s.
    void cropSlab(int z, C* grid, C* y, const C* map, bool accumulate, int t) const;
    void takeSlab(int z, const C* s, C* y, const C* map, bool accumulate) const;  // the cropping alone, of slab z at s
    // One product on `work`, each stage in parallel: y (+)= conj(map) .* T(map .* x), or y = T x.
    void productInParallel(const C* x, C* y, const C* map, bool accumulate) const;
    // One product on one thread: y (+)= conj(map) .* T(map .* x), or y = T x without a map. 3D on
    // `grid` (a half 2N grid) and thread t's tile buffer; 2D on thread t's line grids.
    void productOnThread(int t, C* grid, const C* x, C* y, const C* map, bool accumulate) const;
    C* lineGrids(int t) const;
    void ensureLines() const;  // line_plans, rstride and thread 0's line grids
    ~Impl() {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        for (auto p : slab_forward) F::destroy(p);
        for (auto p : slab_inverse) F::destroy(p);
        if (tile_forward) F::destroy(tile_forward);
        if (tile_inverse) F::destroy(tile_inverse);
        for (auto p : line_plans) F::destroy(p);
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
    m.tstride = std::size_t(slow2) + 8;
    m.slab_stride = m.L == 0 ? 1 : m.slab + 8;
    m.work = fftw::Buffer<std::complex<T>>(m.slab_stride * std::size_t(slow), "the Toeplitz product's 2N grid");
    m.spec = fftw::Buffer<T>(m.slab * std::size_t(slow2), "the Toeplitz spectrum");
    for (int z = 0; z < slow2; ++z)
        for (std::size_t c = 0; c < m.slab; ++c) m.spec.p[c * std::size_t(slow2) + std::size_t(z)] = spectrum[std::size_t(z) * m.slab + c];
    if (m.dims == 3) m.slab_rows = std::size_t(m.n[1]);
    m.ensureThreadBuffers(std::max(1, omp_get_max_threads()));

    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    fftw::prepare<T>();
    // Every plan runs single-threaded inside the engine's own OpenMP loops (over slabs or
    // tiles), on buffers aligned as the ones planned on (slabs start at multiples of the
    // slab stride, an even size; tile and slab buffers are FFTW's own).
    F::threads(1);
    auto* work = fftw::cpx(m.work.p);
    auto* tile = fftw::cpx(m.tile_buffers[0].p);
    // Slab axis a: lines along a; the other slab axes loop over their whole 2N where they
    // were transformed before a (c < a) and over the non-zero N where not yet (c > a). Axis 0
    // forward from the padded slab into the work grid, inverse from it into the output slab.
    std::array<int, 3> stride{1, m.b[0], m.b[0] * m.b[1]};
    for (int a = 0; a < m.L; ++a) {
        const fftw_iodim line{m.b[a], stride[a], stride[a]};
        std::vector<fftw_iodim> loops;
        for (int c = 0; c < m.L; ++c)
            if (c != a) loops.push_back({c < a ? m.b[c] : m.n[c], stride[c], stride[c]});
        auto* in = a == 0 ? fftw::cpx(m.slab_in[0].p) : work;
        auto* out = a == 0 ? fftw::cpx(m.slab_out[0].p) : work;
        // Measuring overwrites the buffers it plans on: they hold nothing yet (zeroed below).
        m.slab_forward.push_back(fftw::planned(m.slab, [&](unsigned flags) {
            return F::guru(line, int(loops.size()), loops.data(), in, work, FFTW_FORWARD, flags);
        }));
        m.slab_inverse.push_back(fftw::planned(m.slab, [&](unsigned flags) {
            return F::guru(line, int(loops.size()), loops.data(), work, out, FFTW_BACKWARD, flags);
        }));
        if (!m.slab_forward.back() || !m.slab_inverse.back()) throw Error("FFTW could not plan the Toeplitz product's transforms");
    }
    const fftw_iodim line{slow2, 1, 1};
    const fftw_iodim loop{m.columns, int(m.tstride), int(m.tstride)};
    const std::size_t tile_points = m.tstride * std::size_t(m.columns);
    auto* tile_out = tile + tile_points;
    m.tile_forward = fftw::planned(tile_points, [&](unsigned flags) { return F::guru(line, 1, &loop, tile, tile_out, FFTW_FORWARD, flags); });
    m.tile_inverse = fftw::planned(tile_points, [&](unsigned flags) { return F::guru(line, 1, &loop, tile_out, tile_out, FFTW_BACKWARD, flags); });
    if (!m.tile_forward || !m.tile_inverse) throw Error("FFTW could not plan the Toeplitz product's transforms");
    std::fill(m.work.p, m.work.p + m.work.n, std::complex<T>(0));
    for (auto* buffer : {&m.tile_buffers[0], &m.slab_in[0]}) std::fill(buffer->p, buffer->p + buffer->n, std::complex<T>(0));
    fftw::savePlans();
}

template <class T>
PaddedConvolution<T>::~PaddedConvolution() = default;

// The three stages on one work grid, so the product of one image (stages in parallel over
// slabs and tiles) and the products of several coils (threads over coils, each stage
// serial on a thread's own grid) run the same code.
template <class T>
void PaddedConvolution<T>::Impl::padSlab(int z, C* grid, const C* x, const C* map, int t) const {
    C* s = grid + std::size_t(z) * slab_stride;
    if (slab_forward.empty()) return fillSlab(z, s, x, map);  // 1D
    C* in = slab_in[std::size_t(t)].p;
    fillSlab(z, in, x, map);
    F::run(slab_forward[0], fftw::cpx(in), fftw::cpx(s));
    std::fill(s + slab_rows * std::size_t(b[0]), s + slab, C(0));  // 3D: the rows y >= N_y
    for (std::size_t a = 1; a < slab_forward.size(); ++a) F::run(slab_forward[a], fftw::cpx(s));
}

template <class T>
void PaddedConvolution<T>::Impl::timesMap(C* out, const C* x, const C* map, std::size_t count) {
    if (!map) {
        std::memcpy(static_cast<void*>(out), x, count * sizeof(C));
        return;
    }
    // In real arithmetic: std::complex's product with its NaN check does not vectorise.
    const T* pm = reinterpret_cast<const T*>(map);
    const T* px = reinterpret_cast<const T*>(x);
    T* po = reinterpret_cast<T*>(out);
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) {
        const T mr = pm[2 * i], mi = pm[2 * i + 1], xr = px[2 * i], xi = px[2 * i + 1];
        po[2 * i] = mr * xr - mi * xi;
        po[2 * i + 1] = mr * xi + mi * xr;
    }
}

template <class T>
void PaddedConvolution<T>::Impl::fillSlab(int z, C* s, const C* x, const C* map) const {
    const std::size_t rows = dims == 3 ? std::size_t(n[1]) : 1;  // input rows per slab
    const std::size_t nx = std::size_t(n[0]), bx = std::size_t(b[0]);
    if (L == 0) {  // 1D: the only axis is the slowest
        s[0] = map ? map[z] * x[z] : x[z];
        return;
    }
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t first = (std::size_t(z) * rows + r) * nx;
        timesMap(s + r * bx, x + first, map ? map + first : nullptr, nx);
    }
}

template <class T>
void PaddedConvolution<T>::Impl::convolveTile(std::size_t tile, C* grid, C* buf) const {
    const int slow = n[L], slow2 = b[L];
    const std::size_t cols = std::size_t(columns), ts = tstride;
    const std::size_t c0 = tile * cols, w = std::min(cols, slab - c0);
    C* out = buf + ts * cols;
    // The columns into lines (a remainder tile's unused lines hold an earlier tile's: transformed,
    // never read); the lines' slow >= N halves stay zero.
    for (int z = 0; z < slow; ++z) {
        const C* row = grid + std::size_t(z) * slab_stride + c0;
        for (std::size_t t = 0; t < w; ++t) std::memcpy(static_cast<void*>(buf + t * ts + std::size_t(z)), row + t, sizeof(C));
    }
    F::run(tile_forward, fftw::cpx(buf), fftw::cpx(out));
    // A real spectrum (Q is Hermitian): two real products per value, half the reads.
    for (std::size_t t = 0; t < w; ++t) {
        T* pb = reinterpret_cast<T*>(out + t * ts);
        const T* ps = spec.p + (c0 + t) * std::size_t(slow2);
#pragma omp simd
        for (int i = 0; i < slow2; ++i) {
            pb[2 * i] *= ps[i];
            pb[2 * i + 1] *= ps[i];
        }
    }
    F::run(tile_inverse, fftw::cpx(out));
    for (int z = 0; z < slow; ++z) {
        C* row = grid + std::size_t(z) * slab_stride + c0;
        for (std::size_t t = 0; t < w; ++t) std::memcpy(static_cast<void*>(row + t), out + t * ts + std::size_t(z), sizeof(C));
    }
}

template <class T>
void PaddedConvolution<T>::Impl::cropSlab(int z, C* grid, C* y, const C* map, bool accumulate, int t) const {
    C* s = grid + std::size_t(z) * slab_stride;
    if (slab_inverse.empty()) return takeSlab(z, s, y, map, accumulate);  // 1D
    for (std::size_t a = slab_inverse.size() - 1; a > 0; --a) F::run(slab_inverse[a], fftw::cpx(s));
    C* out = slab_out[std::size_t(t)].p;
    F::run(slab_inverse[0], fftw::cpx(s), fftw::cpx(out));
    takeSlab(z, out, y, map, accumulate);
}

template <class T>
void PaddedConvolution<T>::Impl::takeSlab(int z, const C* s, C* y, const C* map, bool accumulate) const {
    const std::size_t rows = dims == 3 ? std::size_t(n[1]) : 1;
    const std::size_t nx = L == 0 ? 1 : std::size_t(n[0]), bx = std::size_t(b[0]);
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t first = L == 0 ? std::size_t(z) : (std::size_t(z) * rows + r) * nx;
        const C* in = s + r * bx;
        if (!map) {
            std::memcpy(static_cast<void*>(y + first), in, nx * sizeof(C));
            continue;
        }
        // y (+)= conj(S_c) .* the product, in real arithmetic as in padSlab.
        const T* pm = reinterpret_cast<const T*>(map + first);
        const T* pi = reinterpret_cast<const T*>(in);
        T* py = reinterpret_cast<T*>(y + first);
        if (accumulate) {
#pragma omp simd
            for (std::size_t i = 0; i < nx; ++i) {
                const T mr = pm[2 * i], mi = pm[2 * i + 1], vr = pi[2 * i], vi = pi[2 * i + 1];
                py[2 * i] += mr * vr + mi * vi;
                py[2 * i + 1] += mr * vi - mi * vr;
            }
        } else {
#pragma omp simd
            for (std::size_t i = 0; i < nx; ++i) {
                const T mr = pm[2 * i], mi = pm[2 * i + 1], vr = pi[2 * i], vi = pi[2 * i + 1];
                py[2 * i] = mr * vr + mi * vi;
                py[2 * i + 1] = mr * vi - mi * vr;
            }
        }
    }
}

template <class T>
void PaddedConvolution<T>::Impl::ensureThreadBuffers(int threads) const {
    while (int(tile_buffers.size()) < threads) tile_buffers.emplace_back(2 * tstride * std::size_t(columns), "the Toeplitz product's tiles");
    const std::size_t slab_points = slab_rows * std::size_t(b[0]);
    while (int(slab_in.size()) < threads) slab_in.emplace_back(slab_points, "the Toeplitz product's slabs");
    while (int(slab_out.size()) < threads) slab_out.emplace_back(slab_points, "the Toeplitz product's slabs");
}

template <class T>
void PaddedConvolution<T>::Impl::productInParallel(const C* x, C* y, const C* map, bool accumulate) const {
    const int slow = n[L];
    ensureThreadBuffers(omp_get_max_threads());  // more threads than at planning
#pragma omp parallel for schedule(static)
    for (int z = 0; z < slow; ++z) padSlab(z, work.p, x, map, omp_get_thread_num());
#pragma omp parallel for schedule(static)
    for (std::size_t tile = 0; tile < tiles; ++tile) convolveTile(tile, work.p, tileBuffer());
#pragma omp parallel for schedule(static)
    for (int z = 0; z < slow; ++z) cropSlab(z, work.p, y, map, accumulate, omp_get_thread_num());
}

// Made on first use (before any thread runs them): a large 2D grid's single products never
// use them, and their grids are about six times the half 2N grid (per thread).
template <class T>
void PaddedConvolution<T>::Impl::ensureLines() const {
    if (!line_plans.empty()) return;
    const int bx = b[0], by = b[1], ny = n[1];
    rstride = std::size_t(bx) + 8;
    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    fftw::prepare<T>();
    F::threads(1);
    C* grids = lineGrids(0);
    auto* rows_in = fftw::cpx(grids);
    auto* rows_out = rows_in + std::size_t(ny) * rstride;
    auto* cols_in = rows_out + std::size_t(ny) * rstride;
    auto* cols_out = cols_in + std::size_t(bx) * tstride;
    const int rs = int(rstride), ts = int(tstride);
    const fftw_iodim row{bx, 1, 1}, rows{ny, rs, rs}, col{by, 1, 1}, colsloop{bx, ts, ts};
    const std::size_t row_points = rstride * std::size_t(ny), col_points = std::size_t(bx) * tstride;
    std::vector<typename F::Plan> plans;
    plans.push_back(fftw::planned(row_points, [&](unsigned f) { return F::guru(row, 1, &rows, rows_in, rows_out, FFTW_FORWARD, f); }));
    plans.push_back(fftw::planned(row_points, [&](unsigned f) { return F::guru(row, 1, &rows, rows_out, rows_out, FFTW_BACKWARD, f); }));
    plans.push_back(fftw::planned(col_points, [&](unsigned f) { return F::guru(col, 1, &colsloop, cols_in, cols_out, FFTW_FORWARD, f); }));
    plans.push_back(fftw::planned(col_points, [&](unsigned f) { return F::guru(col, 1, &colsloop, cols_out, cols_out, FFTW_BACKWARD, f); }));
    for (auto p : plans)
        if (!p) {
            for (auto q : plans)
                if (q) F::destroy(q);
            throw Error("FFTW could not plan the Toeplitz product's transforms");
        }
    line_plans = plans;
    std::fill(grids, grids + line_grids[0].n, C(0));  // measuring wrote into it
    fftw::savePlans();
}

template <class T>
std::complex<T>* PaddedConvolution<T>::Impl::lineGrids(int t) const {
    while (int(line_grids.size()) <= t)
        line_grids.emplace_back(2 * (std::size_t(n[1]) * rstride + std::size_t(b[0]) * tstride), "a thread's 2D Toeplitz grids");
    return line_grids[std::size_t(t)].p;
}

// Blocks of this many lines each way keep a transpose's reads and writes in the cache.
constexpr int kTransposeBlock = 16;

template <class T>
void PaddedConvolution<T>::Impl::productOnThread(int t, C* grid, const C* x, C* y, const C* map, bool accumulate) const {
    const int slow = n[L];
    if (dims != 2) {
        for (int z = 0; z < slow; ++z) padSlab(z, grid, x, map, t);
        C* buf = tile_buffers[std::size_t(t)].p;
        for (std::size_t tile = 0; tile < tiles; ++tile) convolveTile(tile, grid, buf);
        for (int z = 0; z < slow; ++z) cropSlab(z, grid, y, map, accumulate, t);
        return;
    }
    const int ny = n[1], nx = n[0], bx = b[0], by = b[1];
    const std::size_t rs = rstride, ts = tstride;
    C* rows_in = lineGrids(t);
    C* rows_out = rows_in + std::size_t(ny) * rs;
    C* cols_in = rows_out + std::size_t(ny) * rs;
    C* cols_out = cols_in + std::size_t(bx) * ts;
    // An element's copy as one move (std::complex's assignment copies its parts one by one).
    auto move = [](C* to, const C* from) { std::memcpy(static_cast<void*>(to), from, sizeof(C)); };
    // Rows: map .* x into the first N_x of each row (the rest stays zero), forward along x.
    for (int z = 0; z < ny; ++z) {
        const std::size_t first = std::size_t(z) * std::size_t(nx);
        timesMap(rows_in + std::size_t(z) * rs, x + first, map ? map + first : nullptr, std::size_t(nx));
    }
    F::run(line_plans[0], fftw::cpx(rows_in), fftw::cpx(rows_out));
    // Transpose to [kx][y] (the y >= N_y half stays zero).
    for (int k0 = 0; k0 < bx; k0 += kTransposeBlock)
        for (int y0 = 0; y0 < ny; y0 += kTransposeBlock) {
            const int k1 = std::min(bx, k0 + kTransposeBlock), y1 = std::min(ny, y0 + kTransposeBlock);
            for (int k = k0; k < k1; ++k)
                for (int yy = y0; yy < y1; ++yy) move(cols_in + std::size_t(k) * ts + std::size_t(yy), rows_out + std::size_t(yy) * rs + std::size_t(k));
        }
    // Columns: forward along y, the (real) spectrum, inverse.
    F::run(line_plans[2], fftw::cpx(cols_in), fftw::cpx(cols_out));
    for (int k = 0; k < bx; ++k) {
        T* pt = reinterpret_cast<T*>(cols_out + std::size_t(k) * ts);
        const T* ps = spec.p + std::size_t(k) * std::size_t(by);
#pragma omp simd
        for (int i = 0; i < by; ++i) {
            pt[2 * i] *= ps[i];
            pt[2 * i + 1] *= ps[i];
        }
    }
    F::run(line_plans[3], fftw::cpx(cols_out));
    // Back to rows (the kept y < N_y only), inverse along x, the crop.
    for (int y0 = 0; y0 < ny; y0 += kTransposeBlock)
        for (int k0 = 0; k0 < bx; k0 += kTransposeBlock) {
            const int k1 = std::min(bx, k0 + kTransposeBlock), y1 = std::min(ny, y0 + kTransposeBlock);
            for (int yy = y0; yy < y1; ++yy)
                for (int k = k0; k < k1; ++k) move(rows_out + std::size_t(yy) * rs + std::size_t(k), cols_out + std::size_t(k) * ts + std::size_t(yy));
        }
    F::run(line_plans[1], fftw::cpx(rows_out));
    for (int z = 0; z < ny; ++z) takeSlab(z, rows_out + std::size_t(z) * rs, y, map, accumulate);
}

template <class T>
void PaddedConvolution<T>::apply(const std::complex<T>* x, std::complex<T>* y) const {
    const Impl& m = *impl_;
    // A small 2D grid (ESPIRiT's calibration fit: 96 x 48) on one thread: forking a team for
    // each of its stages costs more than the stage.
    if (m.dims == 2 && m.slab * std::size_t(m.n[m.L]) * sizeof(std::complex<T>) <= kSerialGridBytes) {
        m.ensureLines();
        return m.productOnThread(0, m.work.p, x, y, nullptr, false);
    }
    m.productInParallel(x, y, nullptr, false);
}

template <class T>
void PaddedConvolution<T>::applyCoilSum(const std::vector<const std::complex<T>*>& maps, const std::complex<T>* x,
                                        std::complex<T>* y) const {
    using C = std::complex<T>;
    const Impl& m = *impl_;
    if (maps.empty()) throw InputError("the SENSE normal's product: no coil maps");
    const std::size_t voxels = m.g.voxels();
    const int slow = m.n[m.L];
    const std::size_t grid_bytes = m.slab_stride * std::size_t(slow) * sizeof(C);
    const int threads = int(std::min<std::size_t>(std::size_t(std::max(1, omp_get_max_threads())), maps.size()));
    if (grid_bytes > kCoilThreadGridBytes) {
        // Coil after coil, each product in parallel over its slabs and tiles.
        for (std::size_t c = 0; c < maps.size(); ++c) m.productInParallel(x, y, maps[c], c > 0);
        return;
    }
    if (m.dims == 2) m.ensureLines();
    if (threads < 2) {
        for (std::size_t c = 0; c < maps.size(); ++c) m.productOnThread(0, m.work.p, x, y, maps[c], c > 0);
        return;
    }
    // Threads over coils: each thread runs whole products on a grid of its own (no barrier
    // between the stages), thread 0 summing into y, the others into partial sums added at the end.
    m.ensureThreadBuffers(threads);
    if (m.dims == 2) m.lineGrids(threads - 1);  // made before the threads start
    while (int(m.partial_sums.size()) < threads - 1) {
        if (m.dims != 2) m.coil_grids.emplace_back(m.slab_stride * std::size_t(slow), "a thread's Toeplitz grid");
        m.partial_sums.emplace_back(voxels, "a thread's share of the SENSE normal");
    }
    const std::int64_t nv = std::int64_t(voxels);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        C* grid = t == 0 || m.dims == 2 ? m.work.p : m.coil_grids[std::size_t(t - 1)].p;  // 2D: unused
        C* sum = t == 0 ? y : m.partial_sums[std::size_t(t - 1)].p;
        bool first = true;
        // Static: coils >= threads, so every thread has a coil and its sum is written.
#pragma omp for schedule(static)
        for (std::size_t c = 0; c < maps.size(); ++c) {
            m.productOnThread(t, grid, x, sum, maps[c], !first);
            first = false;
        }  // the loop's barrier: every partial sum is complete
        T* py = reinterpret_cast<T*>(y);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < 2 * nv; ++i)
            for (int s = 0; s < threads - 1; ++s) py[i] += reinterpret_cast<const T*>(m.partial_sums[std::size_t(s)].p)[i];
    }
}

template <class T>
std::vector<T> PaddedConvolution<T>::spectrum() const {
    const Impl& m = *impl_;
    const int slow2 = m.b[m.L];
    std::vector<T> out(m.slab * std::size_t(slow2));
    for (int z = 0; z < slow2; ++z)
        for (std::size_t c = 0; c < m.slab; ++c) out[std::size_t(z) * m.slab + c] = m.spec.p[c * std::size_t(slow2) + std::size_t(z)];
    return out;
}

template class PaddedConvolution<float>;
template class PaddedConvolution<double>;

}  // namespace recon
