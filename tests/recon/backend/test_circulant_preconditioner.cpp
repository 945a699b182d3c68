// The circulant preconditioner's eigenvalues against brute-force Rayleigh quotients and
// analytic spectra, and its inverse against a dense DFT.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"
#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/core/conventions.hpp"
#include "recon/core/preconditioner_kind.hpp"
#include "recon/core/start_image.hpp"

using namespace recon;
using namespace recon::test;

namespace {

std::array<int, 3> coords(const Grid& g, std::size_t i) {
    return {int(i % std::size_t(g.n[0])), int((i / std::size_t(g.n[0])) % std::size_t(g.n[1])),
            int(i / (std::size_t(g.n[0]) * std::size_t(g.n[1])))};
}

// v_k(j) = exp(+i 2 pi k.j / N): the circulants' eigenvectors (eigenvalue = the forward FFT of the kernel).
cdouble fourierVector(const Grid& g, std::size_t k, std::size_t j) {
    const auto a = coords(g, k), b = coords(g, j);
    double phase = 0;
    for (int ax = 0; ax < 3; ++ax) phase += double(a[std::size_t(ax)]) * b[std::size_t(ax)] / g.n[std::size_t(ax)];
    return std::polar(1.0, 2 * kPi * phase);
}

// T. Chan's circulant has the eigenvalues v_k^H A v_k / n: the Rayleigh quotients of A on the
// Fourier vectors. `entry(i, j)` is A_ij, by brute force.
template <class Entry>
std::vector<double> rayleighQuotients(const Grid& g, Entry entry) {
    const std::size_t n = g.voxels();
    std::vector<double> out(n);
    for (std::size_t k = 0; k < n; ++k) {
        cdouble s = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) s += std::conj(fourierVector(g, k, i)) * entry(i, j) * fourierVector(g, k, j);
        out[k] = s.real() / double(n);
    }
    return out;
}

// Q(i - j): the Toeplitz matrix F^H F of the kernel on the 2N grid.
cdouble toeplitzEntry(const Grid& g, const ComplexArray& q, std::size_t i, std::size_t j) {
    const Grid big = g.doubled();
    const auto a = coords(g, i), b = coords(g, j);
    return q[big.index(a[0] - b[0] + g.n[0], a[1] - b[1] + g.n[1], g.dims == 3 ? a[2] - b[2] + g.n[2] : 0)];
}

ComplexArray kernelOf(const Grid& g, unsigned seed) {
    auto backend = createCpuBackend(Precision::Double);
    const Trajectory t = randomTrajectory(g, 120, seed);
    std::vector<double> w(t.samples());
    for (std::size_t m = 0; m < w.size(); ++m) w[m] = 0.5 + double(m % 4);
    return backend->makeToeplitz(g, t, w, {"direct"})->q();
}

double maxAbsDifference(const std::vector<double>& a, const std::vector<double>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

void checkChan(const Grid& g) {
    const ComplexArray q = kernelOf(g, 41);
    const std::vector<double> eig = circulantEigenvalues(g, q, CirculantApproximation::Chan);
    const std::vector<double> ref = rayleighQuotients(g, [&](std::size_t i, std::size_t j) { return toeplitzEntry(g, q, i, j); });
    ASSERT_EQ(eig.size(), ref.size());
    EXPECT_LT(maxAbsDifference(eig, ref), 1e-9 * q[g.doubled().index(g.n[0], g.n[1], g.dims == 3 ? g.n[2] : 0)].real())
        << g.describe();
    // F^H F is positive semidefinite, and so is its optimal circulant.
    for (double e : eig) EXPECT_GT(e, -1e-9);
}

TEST(CirculantPreconditioner, ChanEigenvaluesAreTheRayleighQuotientsOfQ) {
    checkChan(Grid::make2D(7, 6));
    checkChan(Grid::make3D(4, 5, 3));
}

// Strang's circulant keeps the central part of Q: its kernel equals Q(d) wherever every
// |d_axis| < N_axis / 2.
TEST(CirculantPreconditioner, StrangKeepsTheCentralDiagonalsOfQ) {
    const Grid g = Grid::make3D(6, 5, 4);
    const ComplexArray q = kernelOf(g, 43);
    const std::vector<double> eig = circulantEigenvalues(g, q, CirculantApproximation::Strang);
    const std::size_t n = g.voxels();
    int checked = 0;
    for (std::size_t r = 0; r < n; ++r) {
        const auto d = coords(g, r);  // the difference d = r as a residue; its representative in (-N/2, N/2)
        std::array<int, 3> rep{};
        bool central = true;
        for (int a = 0; a < 3; ++a) {
            const int na = g.n[std::size_t(a)], da = d[std::size_t(a)];
            rep[std::size_t(a)] = 2 * da < na ? da : da - na;
            central = central && 2 * std::abs(rep[std::size_t(a)]) < na;
        }
        if (!central) continue;
        cdouble c = 0;  // c(r) = (1/n) sum_k eig(k) exp(+i 2 pi k.r / N)
        for (std::size_t k = 0; k < n; ++k) c += eig[k] * fourierVector(g, k, r);
        c /= double(n);
        // The eigenvalues' real parts keep the Hermitian part of the kernel: (Q(d) + conj Q(-d)) / 2 = Q(d).
        const cdouble expect = q[g.doubled().index(rep[0] + g.n[0], rep[1] + g.n[1], rep[2] + g.n[2])];
        EXPECT_LT(std::abs(c - expect), 1e-9 * std::abs(q[g.doubled().index(g.n[0], g.n[1], g.n[2])])) << r;
        ++checked;
    }
    EXPECT_GE(checked, 3 * 3 * 2);
}

// W^T W of first-order differences without wrap-around: its optimal circulant has the
// eigenvalues sum_axes (N-1)/N 4 sin^2(pi k / N); Tikhonov's is 1; the anatomical one
// against brute-force Rayleigh quotients.
TEST(CirculantPreconditioner, PenaltyEigenvaluesOfTheRegularisers) {
    const Grid g = Grid::make3D(5, 4, 6);
    const std::vector<double> fd = circulantEigenvalues(g, makeRegularizer(RegularizerKind::FiniteDifference, g).normal);
    for (std::size_t k = 0; k < g.voxels(); ++k) {
        const auto c = coords(g, k);
        double expect = 0;
        for (int a = 0; a < 3; ++a) {
            const double na = g.n[std::size_t(a)], s = std::sin(kPi * c[std::size_t(a)] / na);
            expect += (na - 1) / na * 4 * s * s;
        }
        EXPECT_NEAR(fd[k], expect, 1e-12) << k;
    }
    for (double e : circulantEigenvalues(g, makeRegularizer(RegularizerKind::Tikhonov, g).normal)) EXPECT_NEAR(e, 1.0, 1e-12);

    const Grid g2 = Grid::make2D(6, 5);
    ComplexArray ref(g2.voxels());
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = (coords(g2, i)[0] < 3) ? 1.0 : 0.2;  // one edge
    const Regularizer anat = makeRegularizer(RegularizerKind::AnatomicalFiniteDifference, g2, &ref);
    const std::vector<double> eig = circulantEigenvalues(g2, anat.normal);
    const std::vector<double> expect = rayleighQuotients(g2, [&](std::size_t i, std::size_t j) {
        for (std::int64_t k = anat.normal.row_ptr[i]; k < anat.normal.row_ptr[i + 1]; ++k)
            if (std::size_t(anat.normal.col[std::size_t(k)]) == j) return cdouble(anat.normal.val[std::size_t(k)]);
        return cdouble(0);
    });
    EXPECT_LT(maxAbsDifference(eig, expect), 1e-12);
}

// M^{-p} x on the backend (scaled by m_max^{p-1}) solves M^p y = m_max^{p-1} x, with
// M = data + weight * penalty in the Fourier basis, checked by a dense DFT; eigenvalues
// under the floor are raised to it.
TEST(CirculantPreconditioner, InverseSolvesTheCirculantSystem) {
    for (const double p : {1.0, 0.5})
    for (const Grid& g : {Grid::make2D(6, 7), Grid::make3D(4, 3, 5)}) {
        auto backend = createCpuBackend(Precision::Double);
        const std::size_t n = g.voxels();
        std::vector<double> data(n), penalty(n);
        for (std::size_t k = 0; k < n; ++k) {
            data[k] = 1.0 + double((k * 7) % 5);
            penalty[k] = double(k % 3);
        }
        data[1] = -50.0;  // far under the floor of 1e-3 x the largest (raised to it)
        penalty[1] = 0.0;
        const double weight = 0.7;
        auto minv = inverseCirculant(*backend, g, data, penalty, weight, p);
        const ComplexArray x = randomComplex(n, 51);
        const ComplexArray y = applyForward(*minv, x);
        double largest = 0;
        for (std::size_t k = 0; k < n; ++k) largest = std::max(largest, data[k] + weight * penalty[k]);
        // Fourier coefficients: X(k) = sum_j conj(v_k(j)) x_j; then M y = x  <=>  m(k) Y(k) = X(k).
        for (std::size_t k = 0; k < n; ++k) {
            cdouble xk = 0, yk = 0;
            for (std::size_t j = 0; j < n; ++j) {
                xk += std::conj(fourierVector(g, k, j)) * x[j];
                yk += std::conj(fourierVector(g, k, j)) * y[j];
            }
            const double m = std::max(data[k] + weight * penalty[k], 1e-3 * largest);
            EXPECT_LT(std::abs(std::pow(m, p) * yk - std::pow(largest, p - 1) * xk), 1e-10 * std::abs(xk) + 1e-12)
                << g.describe() << " p " << p << " k " << k;
        }
    }
}

// The N-grid application (the backend's FFT pair) is the Toeplitz-embedded operator, on odd,
// even and mixed grids, in float64 and float32 (the CPU backend's vectors), and Hermitian.
TEST(CirculantPreconditioner, NGridApplicationEqualsTheToeplitzOne) {
    for (const Precision prec : {Precision::Double, Precision::Single})
    for (const Grid& g : {Grid::make2D(6, 7), Grid::make3D(4, 3, 5), Grid::make2D(8, 8)}) {
        auto backend = createCpuBackend(prec);
        const std::size_t n = g.voxels();
        std::vector<double> data(n), penalty(n);
        for (std::size_t k = 0; k < n; ++k) {
            data[k] = 0.5 + double((k * 11) % 7);
            penalty[k] = double(k % 4);
        }
        for (const double p : {1.0, 0.5}) {
            const ComplexArray x = randomComplex(n, 71), y = randomComplex(n, 72);
            auto onGrid = inverseCirculant(*backend, g, data, penalty, 0.4, p);
            const ComplexArray a = applyForward(*onGrid, x);
            const ComplexArray b = applyForward(*backend->toeplitzFromQ(g, inverseCirculantKernel(g, data, penalty, 0.4, p)), x);
            const double tol = prec == Precision::Double ? 1e-12 : 1e-5;
            EXPECT_LT(relativeError(a, b), tol) << g.describe() << " p " << p;
            const cdouble yax = inner(y, a), axy = std::conj(inner(x, applyForward(*onGrid, y)));
            EXPECT_LT(std::abs(yax - axy), tol * std::abs(yax)) << g.describe();
        }
    }
}

// The backend's fold and N-grid FFT (the CPU backend's default primitive, float64 and float32
// vectors) equal the host's loop, for both approximations, on odd, even and mixed grids in 2D and 3D.
TEST(CirculantPreconditioner, BackendEigenvaluesEqualTheHosts) {
    for (const Precision prec : {Precision::Double, Precision::Single})
    for (const Grid& g : {Grid::make2D(7, 5), Grid::make2D(8, 6), Grid::make3D(5, 4, 6), Grid::make3D(4, 4, 4)}) {
        auto backend = createCpuBackend(prec);
        const ComplexArray q = kernelOf(g, 17);
        const auto kernel = backend->toeplitzFromQ(g, q);
        for (const CirculantApproximation a : {CirculantApproximation::Chan, CirculantApproximation::Strang}) {
            const std::vector<double> host = circulantEigenvalues(g, q, a);
            const ComplexArray dev = backend->toHost(circulantEigenvalues(*backend, *kernel, a));
            double scale = 0, err = 0;
            for (std::size_t k = 0; k < host.size(); ++k) {
                scale = std::max(scale, std::abs(host[k]));
                err = std::max(err, std::abs(dev[k] - host[k]));
            }
            EXPECT_LT(err, (prec == Precision::Double ? 1e-12 : 1e-5) * scale) << g.describe();
        }
    }
}

// W^H W's impulse response through the operator: finite differences give the periodic
// Laplacian's sum_axes 4 sin^2(pi k / N) exactly (the centre is inside), Tikhonov 1.
TEST(CirculantPreconditioner, ImpulseEigenvaluesOfTheRegularisers) {
    for (const Grid& g : {Grid::make3D(5, 4, 6), Grid::make2D(7, 8)}) {
        auto backend = createCpuBackend(Precision::Double);
        const Regularizer fd = makeRegularizer(RegularizerKind::FiniteDifference, g);
        const ComplexArray eig = backend->toHost(impulseCirculantEigenvalues(*backend, g, *sparseMatrix(*backend, fd.w)));
        for (std::size_t k = 0; k < g.voxels(); ++k) {
            const auto c = coords(g, k);
            double expect = 0;
            for (int a = 0; a < g.dims; ++a) {
                const double s = std::sin(kPi * c[std::size_t(a)] / g.n[std::size_t(a)]);
                expect += 4 * s * s;
            }
            EXPECT_NEAR(eig[k].real(), expect, 1e-12) << g.describe() << " " << k;
            EXPECT_EQ(eig[k].imag(), 0.0);
        }
        const Regularizer tik = makeRegularizer(RegularizerKind::Tikhonov, g);
        for (const cdouble e : backend->toHost(impulseCirculantEigenvalues(*backend, g, *sparseMatrix(*backend, tik.w))))
            EXPECT_NEAR(e.real(), 1.0, 1e-12);
    }
}

// The SENSE preconditioner's split (the backends' default, on the host): inside where the value
// exceeds the fraction of the largest real part, outside elsewhere (negative values too), the
// largest returned; a non-finite value, a fraction outside [0, 1) and masks of another size named.
TEST(CirculantPreconditioner, ThresholdMasksSplitAtAFractionOfTheLargest) {
    auto backend = createCpuBackend(Precision::Double);
    const ComplexArray g{0.5, -3.0, 2.0, cdouble(0.2, 5.0), 0.21, 0.0};
    Vector inside = backend->make(g.size()), outside = backend->make(g.size());
    EXPECT_EQ(backend->thresholdMasks(backend->fromHost(g), 0.1, inside, outside), 2.0);
    EXPECT_EQ(backend->toHost(inside), (ComplexArray{1.0, 0.0, 1.0, 0.0, 1.0, 0.0}));
    EXPECT_EQ(backend->toHost(outside), (ComplexArray{0.0, 1.0, 0.0, 1.0, 0.0, 1.0}));
    ComplexArray bad = g;
    bad[2] = std::nan("");
    EXPECT_THROW(backend->thresholdMasks(backend->fromHost(bad), 0.1, inside, outside), InputError);
    EXPECT_THROW(backend->thresholdMasks(backend->fromHost(g), 1.0, inside, outside), InputError);
    Vector short_mask = backend->make(5);
    EXPECT_THROW(backend->thresholdMasks(backend->fromHost(g), 0.1, short_mask, outside), InputError);
}

TEST(CirculantPreconditioner, BadInputIsNamed) {
    const Grid g = Grid::make2D(4, 4);
    EXPECT_THROW(circulantEigenvalues(g, ComplexArray(10), CirculantApproximation::Chan), InputError);
    EXPECT_THROW(inverseCirculantKernel(g, std::vector<double>(16, 1.0), std::vector<double>(3, 1.0), 1.0), InputError);
    EXPECT_THROW(inverseCirculantKernel(g, std::vector<double>(16, 0.0), {}, 1.0), InputError);
    EXPECT_THROW(inverseCirculantKernel(g, std::vector<double>(16, 1.0), {}, std::nan("")), InputError);
    EXPECT_THROW(inverseCirculantKernel(g, std::vector<double>(16, 1.0), {}, 1.0, 0.0), InputError);
    EXPECT_THROW(parsePreconditioner("jacobi"), InputError);
    auto backend = createCpuBackend(Precision::Double);
    EXPECT_THROW(inverseCirculant(*backend, g, std::vector<double>(15, 1.0), {}, 1.0), InputError);
    EXPECT_THROW(inverseCirculant(*backend, g, std::vector<double>(16, 0.0), {}, 1.0), InputError);
    EXPECT_THROW(inverseCirculant(*backend, g, std::vector<double>(16, 1.0), {}, 1.0, 1.5), InputError);
    const Vector d = backend->make(16), wrong = backend->make(15);
    EXPECT_THROW(inverseCirculant(*backend, g, d, {1.0}, {&wrong}), InputError);
    EXPECT_THROW(inverseCirculant(*backend, g, d, {1.0, 2.0}, {&d}), InputError);
    EXPECT_THROW(parseStartImage("grid"), InputError);
}

}  // namespace
