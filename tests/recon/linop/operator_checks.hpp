// Checks of the operator layer that run against any backend: the CPU tests call
// them with the CPU backend, the GPU tests (label gpu) with the CUDA backend.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/solvers/normal_cg.hpp"
#include "recon/solvers/runner.hpp"

namespace recon::test {

// An operator no backend knows, written in a test from the VectorSpace's
// primitives only: a [1 2 1]/4 blur along the flattened image (zero beyond its
// ends). Symmetric, so its adjoint is itself.
class FlatBlur final : public LinearOperator {
public:
    FlatBlur(VectorSpace& space, std::size_t n) : LinearOperator(space, n, n, "blur") {}
    // The same blur as a dense matrix, row-major, for the brute-force reference.
    static std::vector<double> dense(std::size_t n) {
        std::vector<double> b(n * n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            b[i * n + i] = 0.5;
            if (i > 0) b[i * n + i - 1] = 0.25;
            if (i + 1 < n) b[i * n + i + 1] = 0.25;
        }
        return b;
    }

private:
    void applyForward(const Vector& x, Vector& y) const override {
        const std::size_t n = inSize();
        Vector& shifted = scratch(0, n);
        space().copy(x, y);
        space().scale(0.5, y);
        space().zero(shifted);
        space().copyRange(x, 0, shifted, 1, n - 1);  // shifted[i] = x[i-1]
        space().axpy(0.25, shifted, y);
        space().zero(shifted);
        space().copyRange(x, 1, shifted, 0, n - 1);  // shifted[i] = x[i+1]
        space().axpy(0.25, shifted, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override { applyForward(y, x); }
};

// Solves a small dense complex system A x = b by Gaussian elimination with partial pivoting.
inline ComplexArray denseSolve(std::vector<cdouble> a, ComplexArray b) {
    const std::size_t n = b.size();
    for (std::size_t k = 0; k < n; ++k) {
        std::size_t p = k;
        for (std::size_t i = k + 1; i < n; ++i)
            if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
        for (std::size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
        std::swap(b[k], b[p]);
        for (std::size_t i = k + 1; i < n; ++i) {
            const cdouble f = a[i * n + k] / a[k * n + k];
            for (std::size_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
            b[i] -= f * b[k];
        }
    }
    ComplexArray x(n);
    for (std::size_t k = n; k-- > 0;) {
        cdouble s = b[k];
        for (std::size_t j = k + 1; j < n; ++j) s -= a[k * n + j] * x[j];
        x[k] = s / a[k * n + k];
    }
    return x;
}

// The acceptance test of the operator layer: the blur above composed with the
// Fourier operator (whose normal is the backend's Toeplitz kernel), plus a
// Tikhonov term, solved by the generic CG on `backend` and compared with a dense
// float64 solve of (B^H F^H F B + mu I) x = B^H F^H d built term by term.
inline void checkCustomOperatorSolve(Backend& backend, double tolerance) {
    const Grid g = Grid::make2D(8, 7);
    const std::size_t n = g.voxels();
    const Trajectory t = randomTrajectory(g, 90, 21);
    std::vector<double> phi(t.samples());
    for (std::size_t m = 0; m < phi.size(); ++m) phi[m] = 0.6 + 0.1 * double(m % 4);
    std::vector<double> phi2(phi.size());
    for (std::size_t m = 0; m < phi.size(); ++m) phi2[m] = phi[m] * phi[m];
    const ComplexArray d = randomComplex(t.samples(), 22);
    const double mu = 0.05;

    // Dense reference: E = diag(phi) F B, with F from the brute-force sums of unit vectors.
    const std::vector<double> blur = FlatBlur::dense(n);
    std::vector<cdouble> e(t.samples() * n);
    for (std::size_t j = 0; j < n; ++j) {
        ComplexArray unit(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) unit[i] = blur[i * n + j];  // column j of B
        const ComplexArray col = bruteForward(t, unit, SampleGrid::image(g));
        for (std::size_t m = 0; m < t.samples(); ++m) e[m * n + j] = phi[m] * col[m];
    }
    std::vector<cdouble> normal(n * n, 0.0);
    ComplexArray rhs(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            cdouble s = 0;
            for (std::size_t m = 0; m < t.samples(); ++m) s += std::conj(e[m * n + i]) * e[m * n + j];
            normal[i * n + j] = s + (i == j ? mu : 0.0);
        }
        for (std::size_t m = 0; m < t.samples(); ++m) rhs[i] += std::conj(e[m * n + i]) * d[m];
    }
    const ComplexArray expected = denseSolve(normal, rhs);

    // The same system from operators, on `backend`.
    auto fourier = fourierOperator(backend, t, g, phi, {"direct"}, backend.makeToeplitz(g, t, phi2, {"direct"}));
    auto blurOp = std::make_shared<FlatBlur>(backend, n);
    auto system = compose(fourier, blurOp);
    // Its forward and adjoint agree with the dense matrix; its right-hand side is E^H d.
    ComplexArray x = randomComplex(n, 23), ex(t.samples(), 0.0);
    for (std::size_t m = 0; m < t.samples(); ++m)
        for (std::size_t j = 0; j < n; ++j) ex[m] += e[m * n + j] * x[j];
    EXPECT_LT(relativeError(applyForward(*system, x), ex), tolerance);
    const ComplexArray b = applyAdjoint(*system, d);
    EXPECT_LT(relativeError(b, rhs), tolerance);

    NormalEquationsCg cg({{"data", 1.0, system}, {"tikhonov", mu, identity(backend, n)}}, backend.fromHost(b), 0.0);
    cg.setTruth(expected);
    Monitor quiet;
    RunOptions run;
    run.iterations = 3 * int(n);
    run.tolerance = tolerance * 1e-2;
    const RunResult r = runIterations(cg, run, quiet);
    EXPECT_LT(relativeError(r.image, expected), tolerance) << backend.info().describe();
    ASSERT_FALSE(r.history.empty());
    EXPECT_LT(r.history.back().error_percent, 100 * tolerance);
}

}  // namespace recon::test
