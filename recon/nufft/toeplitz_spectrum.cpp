#include "recon/nufft/toeplitz_spectrum.hpp"

#include <omp.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <mutex>
#include <string>

#include "recon/nufft/cropped_fft.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/fftw_planner.hpp"
#include "recon/nufft/nufft.hpp"

namespace recon {
namespace {

// The 2N grid's shape per axis, FFTW's order (slowest first), and the half FFTW's real
// transforms keep along x (d_x in [0, N]).
struct Layout {
    int dims, nx, ny, nz, X2, Y2, Z2, hx;
    explicit Layout(const Grid& g)
        : dims(g.dims), nx(g.n[0]), ny(g.n[1]), nz(g.dims == 3 ? g.n[2] : 1), X2(2 * g.n[0]), Y2(2 * g.n[1]),
          Z2(g.dims == 3 ? 2 * g.n[2] : 1), hx(g.n[0] + 1) {}
    std::size_t halfSize() const { return std::size_t(hx) * std::size_t(Y2) * std::size_t(Z2); }
    std::size_t fullSize() const { return std::size_t(X2) * std::size_t(Y2) * std::size_t(Z2); }
    std::vector<int> fftwShape() const { return dims == 3 ? std::vector<int>{Z2, Y2, X2} : std::vector<int>{Y2, X2}; }
    // The difference held at circular index c of an axis of 2n points.
    static int difference(int c, int n) { return c <= n ? c : c - 2 * n; }
};

// The spectrum from Q given on the half d_x in [0, N) (qAt(dx, dy, dz), |dy| < N_y,
// |dz| < N_z): conj(Q) / (2N)^d laid out as FFTW's complex-to-real input wants, the d = -N
// entries zero, one c2r transform. Its exp(+i) sum of conj Q is conj of the spectrum, which is
// real: the spectrum itself.
template <class T, class QAt>
std::vector<T> spectrumFromHalf(const Grid& g, QAt&& qAt) {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    const Layout l(g);
    fftw::Buffer<C> half(l.halfSize(), "half of the Toeplitz kernel Q");
    std::vector<T> spectrum(l.fullSize());
    typename F::Plan plan;
    {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        fftw::prepare<T>();
        F::threads(cpuThreads());
        const std::vector<int> n = l.fftwShape();
        // Planned on the arrays it runs on, before they are filled (measuring overwrites them).
        plan = fftw::planned(spectrum.size(), [&](unsigned flags) {
            return F::c2r(int(n.size()), n.data(), fftw::cpx(half.p), spectrum.data(), flags);
        });
        if (!plan) throw Error("FFTW could not plan the Toeplitz spectrum's transform");
        fftw::savePlans();
    }
    const double scale = 1.0 / double(l.fullSize());
#pragma omp parallel for schedule(static)
    for (int cz = 0; cz < l.Z2; ++cz)
        for (int cy = 0; cy < l.Y2; ++cy) {
            C* row = half.p + (std::size_t(cz) * std::size_t(l.Y2) + std::size_t(cy)) * std::size_t(l.hx);
            const bool unused = (l.dims == 3 && cz == l.nz) || cy == l.ny;
            const int dz = l.dims == 3 ? Layout::difference(cz, l.nz) : 0, dy = Layout::difference(cy, l.ny);
            for (int dx = 0; dx < l.hx; ++dx)
                row[dx] = unused || dx == l.nx ? C(0) : C(std::conj(qAt(dx, dy, dz)) * scale);
        }
    F::runC2R(plan, fftw::cpx(half.p), spectrum.data());
    {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        F::destroy(plan);
    }
    return spectrum;
}

}  // namespace

template <class T>
std::vector<T> toeplitzSpectrum(const Trajectory& t, const std::vector<double>& weights, const Grid& g,
                                const SpreadKernel& kernel, const Progress& progress) {
    using C = std::complex<T>;
    if (weights.size() != t.samples())
        throw InputError("Q: " + std::to_string(weights.size()) + " weights for " + std::to_string(t.samples()) + " samples");
    const SampleGrid differences = SampleGrid::differences(g);
    const NufftPlan<T> plan(t, differences, kernel, false);
    const CroppedFft<T> fft(plan.fineShape(), differences.size, g.dims, true);
    fftw::Buffer<C> q(fft.outSize(), "the Toeplitz kernel Q");
    {
        const std::vector<T> w(weights.begin(), weights.end());
        fftw::Buffer<T> fine(plan.fineSize(), "Q's oversampled grid");
        plan.spread(w.data(), fine.p, progress);
        progress.update(0.4);
        fft.execute(fine.p, q.p, progress);
    }
    progress.update(0.8);
    // Deapodisation per axis, indexed d + N.
    const Layout l(g);
    const std::array<int, 3> G = plan.fineShape();
    std::vector<double> deapod[3];
    for (int a = 0; a < 3; ++a) deapod[a] = a < g.dims ? kernel.deapodization(differences.size[a], G[a]) : std::vector<double>{1.0};
    const std::size_t oy = std::size_t(differences.size[1]), ox = std::size_t(l.hx);
    auto qAt = [&](int dx, int dy, int dz) {
        const std::size_t iz = g.dims == 3 ? std::size_t(dz + l.nz) : 0, iy = std::size_t(dy + l.ny);
        return std::complex<double>(q.p[(iz * oy + iy) * ox + std::size_t(dx)]) /
               (deapod[0][std::size_t(dx + l.nx)] * deapod[1][iy] * deapod[2][iz]);
    };
    std::vector<T> spectrum = spectrumFromHalf<T>(g, qAt);
    progress.update(1.0);
    return spectrum;
}

template <class T>
std::vector<T> toeplitzSpectrumFromQ(const Grid& g, const ComplexArray& q) {
    const Grid big = g.doubled();
    if (q.size() != big.voxels()) throw InputError("Q has " + std::to_string(q.size()) + " values, not " + big.describe());
    const Layout l(g);
    double largest = 0, asymmetry = 0;
    for (const auto& v : q) largest = std::max(largest, std::abs(v));
    // Q(-d) = conj Q(d) wherever both lie in the product's reach (no axis at d = -N).
    for (int z = l.dims == 3 ? 1 : 0; z < big.n[2]; ++z)
        for (int y = 1; y < big.n[1]; ++y)
            for (int x = 1; x < big.n[0]; ++x) {
                const int mz = l.dims == 3 ? big.n[2] - z : 0;
                asymmetry = std::max(asymmetry, std::abs(q[big.index(x, y, z)] - std::conj(q[big.index(big.n[0] - x, big.n[1] - y, mz)])));
            }
    if (!(asymmetry <= 1e-4 * largest)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "Q is not Hermitian: |Q(d) - conj Q(-d)| reaches %.3g of max |Q| = %.3g (at most 1e-4 allowed)",
                      largest > 0 ? asymmetry / largest : asymmetry, largest);
        throw InputError(buf);
    }
    auto qAt = [&](int dx, int dy, int dz) { return q[big.index(dx + l.nx, dy + l.ny, l.dims == 3 ? dz + l.nz : 0)]; };
    return spectrumFromHalf<T>(g, qAt);
}

template <class T>
ComplexArray qFromToeplitzSpectrum(const Grid& g, const std::vector<T>& spectrum) {
    using F = fftw::Api<T>;
    using C = std::complex<T>;
    const Layout l(g);
    if (spectrum.size() != l.fullSize())
        throw InputError("the Toeplitz spectrum has " + std::to_string(spectrum.size()) + " values, not " + g.doubled().describe());
    fftw::Buffer<T> in(l.fullSize());
    fftw::Buffer<C> half(l.halfSize());
    typename F::Plan plan;
    {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        fftw::prepare<T>();
        F::threads(cpuThreads());
        const std::vector<int> n = l.fftwShape();
        plan = F::r2c(int(n.size()), n.data(), in.p, fftw::cpx(half.p), FFTW_ESTIMATE);
        if (!plan) throw Error("FFTW could not plan the Toeplitz spectrum's transform");
    }
    std::copy(spectrum.begin(), spectrum.end(), in.p);
    F::runR2C(plan, in.p, fftw::cpx(half.p));
    {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        F::destroy(plan);
    }
    // R = the exp(-i) sum of the real spectrum = conj Q on d_x >= 0; Q(d) = R(-d) on d_x < 0.
    const Grid big = g.doubled();
    ComplexArray q(big.voxels());
    auto R = [&](int dx, int dy, int dz) {
        const int cy = dy < 0 ? dy + l.Y2 : dy, cz = dz < 0 ? dz + l.Z2 : dz;
        return std::complex<double>(half.p[(std::size_t(cz) * std::size_t(l.Y2) + std::size_t(cy)) * std::size_t(l.hx) + std::size_t(dx)]);
    };
    for (int z = 0; z < big.n[2]; ++z)
        for (int y = 1; y < big.n[1]; ++y)
            for (int x = 1; x < big.n[0]; ++x) {
                if (l.dims == 3 && z == 0) continue;  // d_z = -N: zero
                const int dx = x - l.nx, dy = y - l.ny, dz = l.dims == 3 ? z - l.nz : 0;
                q[big.index(x, y, z)] = dx >= 0 ? std::conj(R(dx, dy, dz)) : R(-dx, -dy, -dz);
            }
    return q;
}

template std::vector<float> toeplitzSpectrum<float>(const Trajectory&, const std::vector<double>&, const Grid&, const SpreadKernel&,
                                                    const Progress&);
template std::vector<double> toeplitzSpectrum<double>(const Trajectory&, const std::vector<double>&, const Grid&,
                                                      const SpreadKernel&, const Progress&);
template std::vector<float> toeplitzSpectrumFromQ<float>(const Grid&, const ComplexArray&);
template std::vector<double> toeplitzSpectrumFromQ<double>(const Grid&, const ComplexArray&);
template ComplexArray qFromToeplitzSpectrum<float>(const Grid&, const std::vector<float>&);
template ComplexArray qFromToeplitzSpectrum<double>(const Grid&, const std::vector<double>&);

}  // namespace recon
