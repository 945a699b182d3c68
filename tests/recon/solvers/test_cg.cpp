// The generic CG against a direct solve of a small Hermitian positive definite system.
#include <gtest/gtest.h>

#include <random>

#include "../test_support.hpp"
#include "recon/solvers/cg.hpp"

using namespace recon;
using namespace recon::test;

namespace {

struct HostSpace {
    using Vector = std::vector<cdouble>;
    Vector make(std::size_t n) const { return Vector(n); }
    void copy(const Vector& a, Vector& b) const { b = a; }
    void zero(Vector& a) const { std::fill(a.begin(), a.end(), cdouble(0)); }
    std::complex<double> dot(const Vector& a, const Vector& b) const { return inner(a, b); }
    void axpy(double s, const Vector& x, Vector& y) const {
        for (std::size_t i = 0; i < x.size(); ++i) y[i] += s * x[i];
    }
    void xpby(const Vector& x, double b, Vector& y) const {
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + b * y[i];
    }
    void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) const {
        zero(y);
        for (std::size_t k = 0; k < xs.size(); ++k) axpy(w[k], *xs[k], y);
    }
    void scale(std::complex<double> a, Vector& y) const {
        for (auto& v : y) v *= a;
    }
};

// The same space with the optional fused operations, counting their use.
struct FusedHostSpace : HostSpace {
    int fusedCalls = 0;
    std::vector<std::complex<double>> dotPairs(const std::vector<std::pair<const Vector*, const Vector*>>& pairs) {
        ++fusedCalls;
        std::vector<std::complex<double>> r;
        for (const auto& [a, b] : pairs) r.push_back(dot(*a, *b));
        return r;
    }
};

using Matrix = std::vector<std::vector<cdouble>>;

Matrix randomHpd(int n, unsigned seed, double shift) {
    const ComplexArray r = randomComplex(std::size_t(n) * n, seed);
    Matrix a(n, std::vector<cdouble>(n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            cdouble s = 0;
            for (int k = 0; k < n; ++k) s += std::conj(r[k * n + i]) * r[k * n + j];
            a[i][j] = s + (i == j ? shift : 0.0);
        }
    return a;
}

ComplexArray gaussSolve(Matrix a, ComplexArray b) {
    const int n = int(b.size());
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int r = c + 1; r < n; ++r)
            if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
        std::swap(a[c], a[p]);
        std::swap(b[c], b[p]);
        for (int r = c + 1; r < n; ++r) {
            cdouble f = a[r][c] / a[c][c];
            for (int k = c; k < n; ++k) a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    ComplexArray x(n);
    for (int r = n - 1; r >= 0; --r) {
        cdouble s = b[r];
        for (int k = r + 1; k < n; ++k) s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return x;
}

ConjugateGradient<HostSpace>::Apply matvec(const Matrix& a) {
    return [a](const HostSpace::Vector& in, HostSpace::Vector& out) {
        for (std::size_t i = 0; i < a.size(); ++i) {
            cdouble s = 0;
            for (std::size_t j = 0; j < a.size(); ++j) s += a[i][j] * in[j];
            out[i] = s;
        }
    };
}

TEST(ConjugateGradient, SolvesWeightedSumOfTermsLikeADirectSolve) {
    const int n = 12;
    HostSpace space;
    const Matrix a = randomHpd(n, 1, 2.0), b = randomHpd(n, 2, 1.0);
    const double w = 0.3;
    const ComplexArray rhs = randomComplex(n, 3);
    Matrix sum = a;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) sum[i][j] += w * b[i][j];
    const ComplexArray exact = gaussSolve(sum, rhs);

    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}, {"b", w, matvec(b)}}, rhs, n);
    cg.setReference(exact);
    int steps = 0;
    while (cg.stats().residual > 1e-12 && steps < 200 && cg.step()) ++steps;
    EXPECT_LT(relativeError(cg.solution(), exact), 1e-8);
    EXPECT_LT(cg.stats().residual, 1e-8);
    EXPECT_LT(cg.stats().error_norm2, 1e-14 * inner(exact, exact).real());
    // In exact arithmetic CG ends in at most n steps; allow a few for rounding.
    EXPECT_LE(steps, n + 10);
    // The tracked quadratic forms equal x^H A_i x.
    ComplexArray ax(n);
    matvec(a)(cg.solution(), ax);
    EXPECT_NEAR(cg.stats().forms[0], inner(cg.solution(), ax).real(), 1e-8 * std::abs(cg.stats().forms[0]));
}

TEST(ConjugateGradient, ResidualDecreasesMonotonicallyInANormAndWarmStartHelps) {
    const int n = 30;
    HostSpace space;
    const Matrix a = randomHpd(n, 5, 0.5);
    const ComplexArray rhs = randomComplex(n, 6);
    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}}, rhs, n);
    for (int i = 0; i < 8; ++i) cg.step();
    const ComplexArray partial = cg.solution();
    const double r8 = cg.stats().residual;
    ConjugateGradient<HostSpace> warm(space, {{"a", 1.0, matvec(a)}}, rhs, n);
    warm.setInitial(partial);
    EXPECT_NEAR(warm.stats().residual, r8, 1e-9);
    EXPECT_EQ(warm.stats().iteration, 0);
}

TEST(ConjugateGradient, WeightChangeRestartsFromCurrentIterate) {
    const int n = 10;
    HostSpace space;
    const Matrix a = randomHpd(n, 7, 0.0), b = randomHpd(n, 8, 1.0);
    const ComplexArray rhs = randomComplex(n, 9);
    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}, {"b", 0.1, matvec(b)}}, rhs, n);
    for (int i = 0; i < 40 && cg.step(); ++i) {
    }
    cg.setWeight(1, 2.0);
    for (int i = 0; i < 60 && cg.step(); ++i) {
    }
    Matrix sum = a;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) sum[i][j] += 2.0 * b[i][j];
    EXPECT_LT(relativeError(cg.solution(), gaussSolve(sum, rhs)), 1e-8);
}

// reweight() changes a weight without applying any term: its residual is the one a restart (which
// applies them) computes, and CG then solves the reweighted system.
TEST(ConjugateGradient, ReweightWithoutOperatorApplicationsMatchesARestart) {
    const int n = 10;
    HostSpace space;
    const Matrix a = randomHpd(n, 7, 0.0), b = randomHpd(n, 8, 1.0);
    const ComplexArray rhs = randomComplex(n, 9);
    int applications = 0;
    auto counted = [&](const Matrix& m) {
        auto f = matvec(m);
        return [f, &applications](const HostSpace::Vector& in, HostSpace::Vector& out) {
            ++applications;
            f(in, out);
        };
    };
    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, counted(a)}, {"b", 0.1, counted(b)}}, rhs, n);
    for (int i = 0; i < 4; ++i) cg.step();
    ConjugateGradient<HostSpace> restarted(space, {{"a", 1.0, matvec(a)}, {"b", 0.1, matvec(b)}}, rhs, n);
    restarted.setInitial(cg.solution());
    restarted.setWeight(1, 2.0);
    const int before = applications;
    cg.reweight(1, 2.0);
    EXPECT_EQ(applications, before);
    EXPECT_NEAR(cg.stats().residual, restarted.stats().residual, 1e-12);
    EXPECT_EQ(cg.stats().iteration, 0);
    EXPECT_DOUBLE_EQ(cg.weight(1), 2.0);
    for (int i = 0; i < 60 && cg.step(); ++i) {
    }
    Matrix sum = a;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) sum[i][j] += 2.0 * b[i][j];
    EXPECT_LT(relativeError(cg.solution(), gaussSolve(sum, rhs)), 1e-8);
}

// A space's fused operations are used when it has them, and change nothing but speed.
TEST(ConjugateGradient, FusedSpaceOperationsGiveTheSameIterates) {
    const int n = 16;
    const Matrix a = randomHpd(n, 11, 0.5), b = randomHpd(n, 12, 1.0);
    const ComplexArray rhs = randomComplex(n, 13), ref = randomComplex(n, 14);
    HostSpace plain;
    FusedHostSpace fused;
    ConjugateGradient<HostSpace> p(plain, {{"a", 1.0, matvec(a)}, {"b", 0.2, matvec(b)}}, rhs, n);
    ConjugateGradient<FusedHostSpace> f(fused, {{"a", 1.0, matvec(a)}, {"b", 0.2, matvec(b)}}, rhs, n);
    p.setReference(ref);
    f.setReference(ref);
    const ComplexArray watched = randomComplex(n, 15);
    p.watch(watched);
    f.watch(watched);
    const int before = fused.fusedCalls;
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(p.step());
        ASSERT_TRUE(f.step());
        EXPECT_EQ(f.solution(), p.solution());
        EXPECT_EQ(f.stats().residual, p.stats().residual);
        EXPECT_EQ(f.stats().forms, p.stats().forms);
        EXPECT_EQ(f.stats().real_xb, p.stats().real_xb);
        EXPECT_EQ(f.stats().error_norm2, p.stats().error_norm2);
        ASSERT_EQ(f.stats().watched.size(), 1u);
        EXPECT_EQ(f.stats().watched[0], p.stats().watched[0]);
        // The watched scalar is x^H v of the iterate.
        EXPECT_NEAR(f.stats().watched[0], plain.dot(f.solution(), watched).real(), 1e-12);
    }
    // ||r||^2 in one fused pass per step (the step length's p^H A p is the other reduction), and
    // the statistics in one more when they are read.
    EXPECT_EQ(fused.fusedCalls - before, 12);
    // Steps nobody reads the statistics of form none of them.
    const int unread = fused.fusedCalls;
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(p.step());
        ASSERT_TRUE(f.step());
    }
    EXPECT_EQ(fused.fusedCalls - unread, 4);
    EXPECT_EQ(f.stats().forms, p.stats().forms);
    EXPECT_EQ(f.stats().error_norm2, p.stats().error_norm2);
    EXPECT_EQ(fused.fusedCalls - unread, 5);
}


// A badly scaled system (diagonal spread over six decades): Jacobi-preconditioned CG
// reaches the direct solve in far fewer steps than plain CG, and its recorded residual
// is the true ||b - A x|| / ||b||, not the preconditioned one.
Matrix badlyScaled(int n, unsigned seed) {
    const Matrix a = randomHpd(n, seed, 1.0);
    Matrix s = a;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) s[i][j] = a[i][j] * std::pow(10.0, 3.0 * (i + j) / (n - 1));
    return s;
}
ConjugateGradient<HostSpace>::Apply inverseDiagonal(const Matrix& a) {
    return [a](const HostSpace::Vector& in, HostSpace::Vector& out) {
        for (std::size_t i = 0; i < a.size(); ++i) out[i] = in[i] / a[i][i].real();
    };
}
double trueResidual(const Matrix& a, const ComplexArray& x, const ComplexArray& b) {
    ComplexArray ax(b.size());
    matvec(a)(x, ax);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        num += std::norm(b[i] - ax[i]);
        den += std::norm(b[i]);
    }
    return std::sqrt(num / den);
}

TEST(ConjugateGradient, PreconditionedReachesTheDirectSolveInFewerSteps) {
    const int n = 40;
    HostSpace space;
    const Matrix a = badlyScaled(n, 21);
    const ComplexArray rhs = randomComplex(n, 22);
    const ComplexArray exact = gaussSolve(a, rhs);
    auto stepsTo = [&](bool precondition, ComplexArray* x) {
        ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}}, rhs, n);
        if (precondition) cg.setPreconditioner(inverseDiagonal(a));
        EXPECT_EQ(cg.preconditioned(), precondition);
        int steps = 0;
        while (relativeError(cg.solution(), exact) > 1e-6 && steps < 2000 && cg.step()) {
            ++steps;
            EXPECT_NEAR(cg.stats().residual, trueResidual(a, cg.solution(), rhs), 1e-6 * cg.stats().residual + 1e-12);
        }
        *x = cg.solution();
        return steps;
    };
    ComplexArray xp, xm;
    const int plain = stepsTo(false, &xp), preconditioned = stepsTo(true, &xm);
    EXPECT_LT(relativeError(xm, exact), 1e-6);
    EXPECT_LE(preconditioned, n + 10) << "plain CG: " << plain;
    EXPECT_LT(2 * preconditioned, plain) << preconditioned;
}

// A weight change with a preconditioner made for the new weights ends at the new solution;
// a preconditioner set mid-solve keeps the iterate and the iteration count.
TEST(ConjugateGradient, PreconditionerFollowsAWeightChange) {
    const int n = 20;
    HostSpace space;
    const Matrix a = badlyScaled(n, 31), b = randomHpd(n, 32, 1.0);
    const ComplexArray rhs = randomComplex(n, 33);
    auto weighted = [&](double w) {
        Matrix s = a;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) s[i][j] += w * b[i][j];
        return s;
    };
    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}, {"b", 0.1, matvec(b)}}, rhs, n);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(cg.step());
    const ComplexArray x3 = cg.solution();
    cg.setPreconditioner(inverseDiagonal(weighted(0.1)));
    EXPECT_EQ(cg.stats().iteration, 3);
    EXPECT_EQ(cg.solution(), x3);
    for (int i = 0; i < 200 && cg.stats().residual > 1e-13 && cg.step(); ++i) {
    }
    EXPECT_LT(relativeError(cg.solution(), gaussSolve(weighted(0.1), rhs)), 1e-8);
    cg.setWeight(1, 50.0, inverseDiagonal(weighted(50.0)));
    EXPECT_EQ(cg.stats().iteration, 0);
    EXPECT_NEAR(cg.stats().residual, trueResidual(weighted(50.0), cg.solution(), rhs), 1e-9);
    for (int i = 0; i < 200 && cg.stats().residual > 1e-13 && cg.step(); ++i) {
    }
    EXPECT_LT(relativeError(cg.solution(), gaussSolve(weighted(50.0), rhs)), 1e-8);
}

// The scaled start: a = x0^H b / x0^H A x0 by brute force (a complex scalar: x0 is given
// a phase the answer must undo), the cost x^H A x - 2 Re x^H b at a x0 below its value at
// any nearby scalar, the residual and statistics those of a x0, and CG from there ends at
// the direct solve.
ComplexArray matvecDense(const Matrix& a, const ComplexArray& x) {
    ComplexArray y(x.size());
    matvec(a)(x, y);
    return y;
}

TEST(ConjugateGradient, ScaledStartUsesTheLeastSquaresScalar) {
    const int n = 30;
    HostSpace space;
    const Matrix a = randomHpd(n, 41, 0.5), b = randomHpd(n, 42, 0.0);
    const ComplexArray rhs = randomComplex(n, 43);
    Matrix sum = a;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) sum[i][j] += 0.3 * b[i][j];
    const ComplexArray exact = gaussSolve(sum, rhs);
    ComplexArray x0 = exact;  // a start of the right shape, in other units and phase, with an error
    const ComplexArray noise = randomComplex(n, 44);
    for (int i = 0; i < n; ++i) x0[i] = cdouble(0.2, -3.0) * (x0[i] + 0.3 * noise[i]);
    const ComplexArray ax0 = matvecDense(sum, x0);
    const cdouble expected = inner(x0, rhs) / inner(x0, ax0).real();
    auto cost = [&](cdouble s) {
        ComplexArray x = x0;
        for (auto& v : x) v *= s;
        return inner(x, matvecDense(sum, x)).real() - 2 * inner(x, rhs).real();
    };

    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}, {"b", 0.3, matvec(b)}}, rhs, n);
    const cdouble got = cg.setInitialScaled(x0);
    EXPECT_LT(std::abs(got - expected), 1e-12 * std::abs(expected));
    for (const cdouble d : {cdouble(1e-3, 0), cdouble(-1e-3, 0), cdouble(0, 1e-3), cdouble(0, -1e-3)})
        EXPECT_LT(cost(got), cost(got + d * std::abs(got)));
    ComplexArray start = x0;
    for (auto& v : start) v *= expected;
    EXPECT_LT(relativeError(cg.solution(), start), 1e-12);
    EXPECT_EQ(cg.stats().iteration, 0);
    EXPECT_NEAR(cg.stats().residual, trueResidual(sum, start, rhs), 1e-12);
    EXPECT_NEAR(cg.stats().forms[0], inner(start, matvecDense(a, start)).real(), 1e-9 * std::abs(cg.stats().forms[0]));
    // Closer than zero: the start's error is the noise alone, so CG needs fewer steps from it.
    auto stepsFrom = [&](bool scaled) {
        ConjugateGradient<HostSpace> c(space, {{"a", 1.0, matvec(a)}, {"b", 0.3, matvec(b)}}, rhs, n);
        if (scaled) c.setInitialScaled(x0);
        int steps = 0;
        while (relativeError(c.solution(), exact) > 1e-8 && steps < 500 && c.step()) ++steps;
        EXPECT_LT(relativeError(c.solution(), exact), 1e-8);
        return steps;
    };
    EXPECT_LE(stepsFrom(true), stepsFrom(false));
    // A start A maps to zero (here: zero itself) gives a = 0 and the cold start.
    ConjugateGradient<HostSpace> z(space, {{"a", 1.0, matvec(a)}}, rhs, n);
    EXPECT_EQ(z.setInitialScaled(ComplexArray(n)), cdouble(0));
    EXPECT_NEAR(z.stats().residual, 1.0, 1e-15);
}

}  // namespace

namespace {

// HostSpace with the one-pass complex combination (the fallback builds it from combine and scale).
struct AxpysHostSpace : HostSpace {
    int axpysCalls = 0;
    void axpys(const std::vector<std::complex<double>>& a, const std::vector<const Vector*>& xs, Vector& y) {
        ++axpysCalls;
        for (std::size_t k = 0; k < xs.size(); ++k)
            for (std::size_t i = 0; i < y.size(); ++i) y[i] += a[k] * (*xs[k])[i];
    }
};

Matrix weightedSum(const Matrix& a, const Matrix& b, double w) {
    Matrix s = a;
    for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t j = 0; j < a.size(); ++j) s[i][j] += w * b[i][j];
    return s;
}

ComplexArray times(const Matrix& a, const ComplexArray& x) {
    ComplexArray y(x.size());
    matvec(a)(x, y);
    return y;
}

// (x - x*)^H A (x - x*): the energy norm of the error that CG and a Galerkin step minimise.
double energyError(const Matrix& a, const ComplexArray& x, const ComplexArray& exact) {
    ComplexArray e(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) e[i] = x[i] - exact[i];
    return inner(e, times(a, e)).real();
}

// The Galerkin solution by dense algebra: x + B y, (B^H A B) y = B^H (b - A x), B = the basis.
ComplexArray denseGalerkin(const Matrix& am, const ComplexArray& rhs, const ComplexArray& x, const std::vector<ComplexArray>& basis) {
    const std::size_t n = x.size();
    ComplexArray r = times(am, x);
    for (std::size_t i = 0; i < n; ++i) r[i] = rhs[i] - r[i];
    const std::size_t m = basis.size();
    Matrix g(m, std::vector<cdouble>(m));
    ComplexArray br(m);
    for (std::size_t j = 0; j < m; ++j) {
        const ComplexArray ab = times(am, basis[j]);
        for (std::size_t l = 0; l < m; ++l) g[l][j] = inner(basis[l], ab);
        br[j] = inner(basis[j], r);
    }
    const ComplexArray y = gaussSolve(g, br);
    ComplexArray out = x;
    for (std::size_t j = 0; j < m; ++j)
        for (std::size_t i = 0; i < n; ++i) out[i] += y[j] * basis[j][i];
    return out;
}

// A recycled weight change against a dense computation of what it promises: the Galerkin solution
// in the span of the last k directions at the new weight, no operator applied, an energy error no
// larger than the plain warm start's, and CG from there ends at the new weight's dense solution.
template <class Space>
void checkRecycledWeightChange(Space& space, bool preconditioned) {
    const int n = 40, steps = 9;
    const std::size_t k = 6;
    const Matrix a = randomHpd(n, 21, 0.05), b = randomHpd(n, 22, 0.5);
    const ComplexArray rhs = randomComplex(n, 23);
    std::vector<ComplexArray> directions;  // every vector term "b" is applied to: CG's directions
    int applications = 0;
    auto recorded = [&](const Matrix& m, bool record) {
        auto f = matvec(m);
        return [f, record, &directions, &applications](const ComplexArray& in, ComplexArray& out) {
            ++applications;
            if (record) directions.push_back(in);
            f(in, out);
        };
    };
    using Cg = ConjugateGradient<Space>;
    Cg cg(space, {{"a", 1.0, recorded(a, false)}, {"b", 0.1, recorded(b, true)}}, rhs, n);
    auto inverseDiag = [](const Matrix& m) {
        return [m](const ComplexArray& in, ComplexArray& out) {
            for (std::size_t i = 0; i < m.size(); ++i) out[i] = in[i] / m[i][i];
        };
    };
    if (preconditioned) cg.setPreconditioner(inverseDiag(weightedSum(a, b, 0.1)));
    cg.keepDirections(k);
    for (int i = 0; i < steps; ++i) ASSERT_TRUE(cg.step());
    ASSERT_EQ(cg.keptDirections(), k);
    const ComplexArray before = cg.solution();

    auto galerkin = [&](const Matrix& am, const ComplexArray& x, const std::vector<ComplexArray>& basis) {
        return denseGalerkin(am, rhs, x, basis);
    };
    auto lastDirections = [&] { return std::vector<ComplexArray>(directions.end() - k, directions.end()); };
    auto trueResidual = [&](const Matrix& am, const ComplexArray& x) {
        ComplexArray r = times(am, x);
        for (int i = 0; i < n; ++i) r[i] = rhs[i] - r[i];
        return std::sqrt(inner(r, r).real() / inner(rhs, rhs).real());
    };

    const double w2 = 0.4;
    const Matrix a1 = weightedSum(a, b, 0.1), a2 = weightedSum(a, b, w2);
    const ComplexArray exact = gaussSolve(a2, rhs);
    std::vector<ComplexArray> basis = lastDirections();
    basis.push_back(before);
    const ComplexArray expected = galerkin(a2, before, basis);
    int applied = applications;
    if (preconditioned)
        cg.setWeightRecycling(1, w2, inverseDiag(a2));
    else
        cg.setWeightRecycling(1, w2, {});
    EXPECT_EQ(applications, applied) << "a recycled weight change applies no operator";
    EXPECT_EQ(cg.stats().iteration, 0);
    EXPECT_LT(relativeError(cg.solution(), expected), 1e-9);
    EXPECT_LT(energyError(a2, cg.solution(), exact), 0.5 * energyError(a2, before, exact));
    // The residual it reports is the true one of the moved iterate.
    EXPECT_NEAR(cg.stats().residual, trueResidual(a2, cg.solution()), 1e-10);

    // Three steps, then back to the first weight: the basis now also holds the iterate where the
    // first change began.
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(cg.step());
    const ComplexArray mid = cg.solution();
    basis = lastDirections();
    basis.push_back(mid);
    basis.push_back(before);
    const ComplexArray back = galerkin(a1, mid, basis);
    applied = applications;
    cg.setWeightRecycling(1, 0.1, {});
    EXPECT_EQ(applications, applied);
    EXPECT_LT(relativeError(cg.solution(), back), 1e-9);
    EXPECT_NEAR(cg.stats().residual, trueResidual(a1, cg.solution()), 1e-10);
    // At least as close to the first weight's solution as the iterate the change back started from.
    const ComplexArray exact1 = gaussSolve(a1, rhs);
    EXPECT_LE(energyError(a1, cg.solution(), exact1), energyError(a1, before, exact1) * (1 + 1e-9));

    // CG from there ends at that weight's dense solution.
    for (int i = 0; i < 400 && cg.stats().residual > 1e-13 && cg.step(); ++i) {
    }
    EXPECT_LT(relativeError(cg.solution(), exact1), 1e-9);
}

}  // namespace

TEST(ConjugateGradient, RecycledWeightChangeIsTheGalerkinSolutionInTheKeptDirections) {
    HostSpace plain;
    checkRecycledWeightChange(plain, false);
    checkRecycledWeightChange(plain, true);
    AxpysHostSpace fused;
    checkRecycledWeightChange(fused, false);
    EXPECT_GT(fused.axpysCalls, 0);
}

// Keeping every direction of a cold solve (a ring at least as long as the solve): the first weight
// change after it starts from the Galerkin solution over that whole Krylov space and x, which dense
// algebra computes alike, and CG from there ends at the new weight's dense solution. (The lambda
// study measured this start against x alone: docs/SCALING.md, "The first lambda change after a cold solve".)
TEST(ConjugateGradient, FirstWeightChangeAfterAColdSolveIsTheGalerkinSolutionOverItsDirections) {
    const int n = 40, steps = 12;
    const Matrix a = randomHpd(n, 41, 0.05), b = randomHpd(n, 42, 0.5);
    const ComplexArray rhs = randomComplex(n, 43);
    std::vector<ComplexArray> directions;
    int applications = 0;
    auto fa = matvec(a), fb = matvec(b);
    HostSpace space;
    ConjugateGradient<HostSpace> cg(space,
                                    {{"a", 1.0, [&](const ComplexArray& in, ComplexArray& out) { ++applications; fa(in, out); }},
                                     {"b", 0.1, [&](const ComplexArray& in, ComplexArray& out) {
                                          ++applications;
                                          directions.push_back(in);
                                          fb(in, out);
                                      }}},
                                    rhs, n);
    cg.keepDirections(steps + 4);  // longer than the solve: nothing is dropped
    for (int i = 0; i < steps; ++i) ASSERT_TRUE(cg.step());
    ASSERT_EQ(cg.keptDirections(), std::size_t(steps));
    ASSERT_EQ(directions.size(), std::size_t(steps));
    const ComplexArray cold = cg.solution();
    const double w2 = 0.3;
    const Matrix a2 = weightedSum(a, b, w2);
    std::vector<ComplexArray> basis = directions;
    basis.push_back(cold);
    const ComplexArray expected = denseGalerkin(a2, rhs, cold, basis);
    const int applied = applications;
    cg.setWeightRecycling(1, w2, {});
    EXPECT_EQ(applications, applied) << "a recycled weight change applies no operator";
    EXPECT_LT(relativeError(cg.solution(), expected), 1e-9);
    // Over x alone (nothing kept) the start is farther from the new solution in A_2's norm.
    const ComplexArray exact = gaussSolve(a2, rhs);
    const ComplexArray x_only = denseGalerkin(a2, rhs, cold, {cold});
    EXPECT_LT(energyError(a2, cg.solution(), exact), energyError(a2, x_only, exact));
    for (int i = 0; i < 400 && cg.stats().residual > 1e-13 && cg.step(); ++i) {
    }
    EXPECT_LT(relativeError(cg.solution(), exact), 1e-9);
}

// With nothing kept it is reweight() with a new preconditioner: the same residual as a restart.
TEST(ConjugateGradient, RecycledWeightChangeWithNothingKeptIsAReweight) {
    const int n = 10;
    HostSpace space;
    const Matrix a = randomHpd(n, 7, 0.0), b = randomHpd(n, 8, 1.0);
    const ComplexArray rhs = randomComplex(n, 9);
    ConjugateGradient<HostSpace> cg(space, {{"a", 1.0, matvec(a)}, {"b", 0.1, matvec(b)}}, rhs, n);
    for (int i = 0; i < 4; ++i) cg.step();
    ConjugateGradient<HostSpace> restarted(space, {{"a", 1.0, matvec(a)}, {"b", 0.1, matvec(b)}}, rhs, n);
    restarted.setInitial(cg.solution());
    restarted.setWeight(1, 2.0);
    cg.setWeightRecycling(1, 2.0, {});
    EXPECT_EQ(cg.keptDirections(), 0u);
    EXPECT_NEAR(cg.stats().residual, restarted.stats().residual, 1e-12);
    EXPECT_LT(relativeError(cg.solution(), restarted.solution()), 1e-15);
}

// The small Gram solve leaves out a direction that repeats an earlier one and solves for the rest.
TEST(ConjugateGradient, GramSolveDropsDependentDirections) {
    const std::size_t n = 8, m = 4;
    const ComplexArray v = randomComplex(n * m, 31);
    std::vector<ComplexArray> cols(m, ComplexArray(n));
    for (std::size_t j = 0; j < m; ++j)
        for (std::size_t i = 0; i < n; ++i) cols[j][i] = v[j * n + i];
    cols[2] = cols[0];  // dependent
    for (auto& x : cols[2]) x *= cdouble(0, 2);
    std::vector<cdouble> G(m * m);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) G[i * m + j] = inner(cols[i], cols[j]);
    const ComplexArray target = randomComplex(n, 32);
    std::vector<cdouble> g(m);
    for (std::size_t j = 0; j < m; ++j) g[j] = inner(cols[j], target);
    const std::vector<cdouble> y = cg_detail::solveGram(G, g, m);
    EXPECT_EQ(y[2], cdouble(0));
    // The least-squares fit of the target by the independent columns: its normal equations hold.
    for (std::size_t i = 0; i < m; ++i) {
        cdouble gy = 0;
        for (std::size_t j = 0; j < m; ++j) gy += G[i * m + j] * y[j];
        EXPECT_LT(std::abs(gy - g[i]), 1e-10 * std::abs(g[i])) << i;
    }
}
