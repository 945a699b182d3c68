#include "recon/nufft/cropped_fft.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "recon/nufft/fftw_planner.hpp"

namespace recon {
namespace {

inline int wrap(int i, int n) {
    i %= n;
    return i < 0 ? i + n : i;
}

}  // namespace

template <class T>
struct CroppedFft<T>::Impl {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    std::array<int, 3> G{1, 1, 1}, S{1, 1, 1};
    int dims = 0, L = 0;      // L: the slowest axis, transformed last, tile by tile
    bool real = false;
    int xout = 0;             // values per line after the x transform (G_x, or G_x/2+1 for a real input)
    int ox = 0;               // kept x values: S_x, or S_x/2+1 for a real input
    int rows = 1;             // x lines per slab (G_y in 3D, 1 in 2D)
    std::size_t slab_in = 0;  // input values per slab of the slowest axis
    std::size_t columns = 0;  // kept values per slab: the slowest axis's columns
    int tile = 0;             // columns per tile of the last stage
    int sign = FFTW_BACKWARD;
    int planned_alignment = 0;
    // Per axis, the fine-grid index of each kept output index.
    std::vector<int> from[3];
    typename F::Plan px = nullptr, py = nullptr, pz = nullptr;
    mutable typename F::Plan px_unaligned = nullptr;  // for an input aligned otherwise than planned (made when needed)
    mutable std::once_flag unaligned_once;

    typename F::Plan planX(void* in, C* out, unsigned flags) const {
        const fftw_iodim line{G[0], 1, 1};
        const fftw_iodim loop_in{rows, G[0], xout};
        if (real) return F::guruR2C(line, 1, &loop_in, static_cast<T*>(in), fftw::cpx(out), flags);
        return F::guru(line, 1, &loop_in, fftw::cpx(static_cast<C*>(in)), fftw::cpx(out), sign, flags);
    }
    ~Impl() {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        for (auto p : {px, py, pz, px_unaligned})
            if (p) F::destroy(p);
    }
};

template <class T>
CroppedFft<T>::CroppedFft(std::array<int, 3> fine, std::array<int, 3> kept, int dims, bool real_input) : impl_(new Impl) {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    Impl& m = *impl_;
    if (dims != 2 && dims != 3) throw InputError("the cropped FFT takes 2D or 3D grids, not " + std::to_string(dims) + "D");
    m.dims = dims;
    m.L = dims - 1;
    m.real = real_input;
    for (int a = 0; a < dims; ++a) {
        if (kept[a] < 1 || fine[a] < kept[a])
            throw InputError("the cropped FFT keeps " + std::to_string(kept[a]) + " of " + std::to_string(fine[a]) + " points on an axis");
        m.G[a] = fine[a];
        m.S[a] = kept[a];
    }
    m.sign = m.real ? FFTW_FORWARD : FFTW_BACKWARD;  // a real input: the forward transform, conjugated at the end
    m.xout = m.real ? m.G[0] / 2 + 1 : m.G[0];
    m.ox = m.real ? m.S[0] / 2 + 1 : m.S[0];
    if (m.ox > m.xout) throw InputError("the cropped FFT of a real input keeps more x frequencies than it has");
    m.rows = dims == 3 ? m.G[1] : 1;
    m.slab_in = std::size_t(m.G[0]) * std::size_t(m.rows);
    m.columns = std::size_t(m.ox) * std::size_t(dims == 3 ? m.S[1] : 1);
    for (int a = 0; a < dims; ++a)
        for (int j = 0; j < (a == 0 ? m.ox : m.S[a]); ++j)
            m.from[a].push_back(a == 0 && m.real ? j : wrap(j - m.S[a] / 2, m.G[a]));
    const int GL = m.G[m.L];
    m.tile = 64;
    while (m.tile > 4 && std::size_t(m.tile) * std::size_t(GL) * sizeof(C) > (64u << 10)) m.tile /= 2;

    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    fftw::prepare<T>();
    F::threads(1);  // every plan runs inside the engine's OpenMP loops
    // Measuring overwrites the buffers planned on: scratch ones, aligned as FFTW's own.
    fftw::Buffer<C> in(m.slab_in), b1(std::size_t(m.rows) * std::size_t(m.xout)), b2(std::size_t(m.rows) * std::size_t(m.ox)),
        tl(std::size_t(GL) * std::size_t(m.tile));
    m.planned_alignment = F::alignmentOf(in.p);
    m.px = fftw::planned(m.slab_in, [&](unsigned flags) { return m.planX(in.p, b1.p, flags); });
    if (dims == 3) {
        const fftw_iodim line{m.G[1], m.ox, m.ox};
        const fftw_iodim loop{m.ox, 1, 1};
        m.py = fftw::planned(b2.n, [&](unsigned flags) {
            return F::guru(line, 1, &loop, fftw::cpx(b2.p), fftw::cpx(b2.p), m.sign, flags);
        });
    }
    const fftw_iodim line{GL, m.tile, m.tile};
    const fftw_iodim loop{m.tile, 1, 1};
    m.pz = fftw::planned(tl.n, [&](unsigned flags) { return F::guru(line, 1, &loop, fftw::cpx(tl.p), fftw::cpx(tl.p), m.sign, flags); });
    if (!m.px || (dims == 3 && !m.py) || !m.pz) throw Error("FFTW could not plan the NUFFT's cropped transform");
    fftw::savePlans();
}

template <class T>
CroppedFft<T>::~CroppedFft() = default;

template <class T>
std::array<int, 3> CroppedFft<T>::outShape() const {
    std::array<int, 3> s = impl_->S;
    s[0] = impl_->ox;
    return s;
}

template <class T>
std::size_t CroppedFft<T>::outSize() const {
    const auto s = outShape();
    return std::size_t(s[0]) * std::size_t(s[1]) * std::size_t(s[2]);
}

template <class T>
void CroppedFft<T>::execute(const void* fine, std::complex<T>* out, const Progress& progress) const {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    const Impl& m = *impl_;
    const int GL = m.G[m.L], SL = m.S[m.L];
    const std::size_t value = m.real ? sizeof(T) : sizeof(C);
    const auto* base = static_cast<const unsigned char*>(fine);
    // Every slab must start aligned as the planned buffer, or the x plan runs unaligned.
    typename F::Plan px = m.px;
    if (F::alignmentOf(base) != m.planned_alignment || (GL > 1 && F::alignmentOf(base + m.slab_in * value) != m.planned_alignment)) {
        std::call_once(m.unaligned_once, [&] {
            std::lock_guard<std::mutex> lock(fftw::plannerMutex());
            F::threads(1);
            fftw::Buffer<C> in(m.slab_in), b1(std::size_t(m.rows) * std::size_t(m.xout));
            m.px_unaligned = m.planX(in.p, b1.p, FFTW_ESTIMATE | FFTW_UNALIGNED);
            if (!m.px_unaligned) throw Error("FFTW could not plan the NUFFT's cropped transform");
        });
        px = m.px_unaligned;
    }
    // The kept columns of every slab, before the slowest axis's transform: [GL][columns].
    fftw::Buffer<C> mid(std::size_t(GL) * m.columns, "the NUFFT's partly transformed grid");
    std::atomic<bool> stop{false};

    // 1. Per slab of the slowest axis: x (and y in 3D), cropping after each.
#pragma omp parallel
    {
        fftw::Buffer<C> b1(std::size_t(m.rows) * std::size_t(m.xout)), b2(std::size_t(m.rows) * std::size_t(m.ox));
#pragma omp for schedule(static)
        for (int s = 0; s < GL; ++s) {
            if (stop.load(std::memory_order_relaxed)) continue;
            if (progress.cancelled()) {
                stop.store(true, std::memory_order_relaxed);
                continue;
            }
            void* in = const_cast<unsigned char*>(base + std::size_t(s) * m.slab_in * value);
            if (m.real)
                F::runR2C(px, static_cast<T*>(in), fftw::cpx(b1.p));
            else
                F::run(px, fftw::cpx(static_cast<C*>(in)), fftw::cpx(b1.p));
            C* dst = m.dims == 3 ? b2.p : mid.p + std::size_t(s) * m.columns;
            for (int r = 0; r < m.rows; ++r) {
                const C* line = b1.p + std::size_t(r) * std::size_t(m.xout);
                C* o = dst + std::size_t(r) * std::size_t(m.ox);
                for (int j = 0; j < m.ox; ++j) o[j] = line[m.from[0][std::size_t(j)]];
            }
            if (m.dims == 3) {
                F::run(m.py, fftw::cpx(b2.p));
                C* o = mid.p + std::size_t(s) * m.columns;
                for (int j = 0; j < m.S[1]; ++j)
                    std::memcpy(static_cast<void*>(o + std::size_t(j) * std::size_t(m.ox)),
                                b2.p + std::size_t(m.from[1][std::size_t(j)]) * std::size_t(m.ox), std::size_t(m.ox) * sizeof(C));
            }
        }
    }
    progress.check();

    // 2. The slowest axis, a tile of columns at a time: gather, transform, keep S_L rows.
    const std::size_t tiles = (m.columns + std::size_t(m.tile) - 1) / std::size_t(m.tile);
    const std::size_t tc = std::size_t(m.tile);
#pragma omp parallel
    {
        fftw::Buffer<C> buf(std::size_t(GL) * tc);
#pragma omp for schedule(static)
        for (std::size_t t = 0; t < tiles; ++t) {
            if (stop.load(std::memory_order_relaxed)) continue;
            if (progress.cancelled()) {
                stop.store(true, std::memory_order_relaxed);
                continue;
            }
            const std::size_t c0 = t * tc, w = std::min(tc, m.columns - c0);
            for (int z = 0; z < GL; ++z)
                std::memcpy(static_cast<void*>(buf.p + std::size_t(z) * tc), mid.p + std::size_t(z) * m.columns + c0, w * sizeof(C));
            F::run(m.pz, fftw::cpx(buf.p));  // a last, narrower tile transforms stale columns too: not kept
            for (int j = 0; j < SL; ++j) {
                const C* src = buf.p + std::size_t(m.from[m.L][std::size_t(j)]) * tc;
                C* o = out + std::size_t(j) * m.columns + c0;
                if (m.real)
                    for (std::size_t i = 0; i < w; ++i) o[i] = std::conj(src[i]);
                else
                    std::memcpy(static_cast<void*>(o), src, w * sizeof(C));
            }
        }
    }
    progress.check();
}

template class CroppedFft<float>;
template class CroppedFft<double>;

}  // namespace recon
