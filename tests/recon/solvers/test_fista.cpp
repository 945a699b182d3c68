// FISTA and POGM for the wavelet prior: against plain iterative soft thresholding (ISTA) run to
// machine precision on the host on a small strongly convex problem; POGM needs no more steps than
// FISTA to a given accuracy there; the power iteration against the Gram matrix's largest
// eigenvalue; the random shifts keep the wavelet orthogonal; and in the session on undersampled
// radial data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "../test_support.hpp"
#include "dense_gaussian.hpp"
#include "recon/core/metrics.hpp"
#include "recon/priors/priors.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/fista.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// min ||A x - d||^2 + w ||W x||_1 on an 8 x 8 grid, A dense Gaussian with more rows than columns
// (strongly convex: ISTA converges linearly to the one minimiser), W Haar.
struct SmallProblem {
    Grid g = Grid::make2D(8, 8);
    CsrMatrix a;
    ComplexArray d;
    std::vector<CsrMatrix> levels;  // W = levels[k-1] ... levels[0]
};

SmallProblem smallProblem() {
    SmallProblem p;
    const std::size_t n = p.g.voxels(), m = 96;
    std::mt19937 rng(5);
    std::normal_distribution<double> nd;
    p.a = test::denseGaussian(m, n, rng, nd);
    ComplexArray x(n);
    for (int y = 0; y < 8; ++y)
        for (int xx = 0; xx < 8; ++xx) x[p.g.index(xx, y, 0)] = cdouble(xx < 4 ? 1.0 : 2.0, y < 3 ? 0.5 : -0.5);
    p.d.resize(m);
    p.a.multiply(x.data(), p.d.data());
    for (auto& v : p.d) v += 0.3 * cdouble(nd(rng), nd(rng));
    p.levels = waveletMatrices(p.g, WaveletKind::Haar);
    return p;
}

ComplexArray waveletForward(const SmallProblem& p, ComplexArray x) {
    ComplexArray y(x.size());
    for (const CsrMatrix& l : p.levels) {
        l.multiply(x.data(), y.data());
        std::swap(x, y);
    }
    return x;
}

ComplexArray waveletAdjoint(const SmallProblem& p, ComplexArray c) {
    ComplexArray y(c.size());
    for (auto it = p.levels.rbegin(); it != p.levels.rend(); ++it) {
        it->transposed().multiply(c.data(), y.data());
        std::swap(c, y);
    }
    return c;
}

double objective(const SmallProblem& p, double w, const ComplexArray& x) {
    ComplexArray ax(p.d.size());
    p.a.multiply(x.data(), ax.data());
    double f = 0;
    for (std::size_t i = 0; i < ax.size(); ++i) f += std::norm(ax[i] - p.d[i]);
    for (const cdouble& c : waveletForward(p, x)) f += w * std::abs(c);
    return f;
}

// The largest eigenvalue of A^T A, by power iteration on the explicit Gram matrix to convergence.
double gramNorm(const SmallProblem& p) {
    const CsrMatrix at = p.a.transposed();
    const std::size_t n = p.g.voxels();
    ComplexArray x(n, 1.0), ax(p.d.size()), y(n);
    double lambda = 0;
    for (int it = 0; it < 3000; ++it) {
        p.a.multiply(x.data(), ax.data());
        at.multiply(ax.data(), y.data());
        double norm = 0;
        for (auto v : y) norm += std::norm(v);
        norm = std::sqrt(norm);
        lambda = norm;  // x is a unit vector after the first iteration
        for (std::size_t i = 0; i < n; ++i) x[i] = y[i] / norm;
    }
    return lambda;
}

// ISTA (proximal gradient without momentum) in float64 on the host: the reference minimiser.
ComplexArray ista(const SmallProblem& p, double w, double lipschitz, int iterations) {
    const CsrMatrix at = p.a.transposed();
    const std::size_t n = p.g.voxels();
    ComplexArray x(n), ax(p.d.size()), grad(n), v(n);
    for (int it = 0; it < iterations; ++it) {
        p.a.multiply(x.data(), ax.data());
        for (std::size_t i = 0; i < ax.size(); ++i) ax[i] -= p.d[i];
        at.multiply(ax.data(), grad.data());
        for (std::size_t i = 0; i < n; ++i) v[i] = x[i] - grad[i] / lipschitz;  // step 1/(2L) on 2 A^H (A x - d)
        ComplexArray c = waveletForward(p, v);
        const double t = w / (2 * lipschitz);
        for (auto& ci : c) ci = std::abs(ci) > t ? ci * (1 - t / std::abs(ci)) : cdouble(0);
        x = waveletAdjoint(p, c);
    }
    return x;
}

struct OnBackend {
    std::shared_ptr<Backend> b = createCpuBackend(Precision::Double);
    LinearOperatorPtr a;
    Vector fhd;
    double dn = 0;
    explicit OnBackend(const SmallProblem& p) {
        a = sparseMatrix(*b, p.a, nullptr, "A");
        fhd = b->fromHost(applyAdjoint(*a, p.d));
        for (auto v : p.d) dn += std::norm(v);
    }
};

}  // namespace

TEST(Fista, PowerIterationFindsTheLargestEigenvalueOfTheNormal) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double exact = gramNorm(p);
    const double plain = estimateNormalNorm(*on.a, 30, 1.0);
    EXPECT_LE(plain, exact * (1 + 1e-12));  // a Rayleigh quotient never exceeds the largest eigenvalue
    EXPECT_GT(plain, 0.98 * exact);
    EXPECT_GE(estimateNormalNorm(*on.a, 30, 1.05), exact);
    EXPECT_THROW(estimateNormalNorm(*on.a, 0), InputError);
    EXPECT_THROW(estimateNormalNorm(*on.a, 10, 0.5), InputError);
    std::atomic<bool> cancel{true};
    Progress progress;
    progress.cancel = &cancel;
    EXPECT_THROW(estimateNormalNorm(*on.a, 10, 1.05, progress), Cancelled);
}

TEST(Fista, ReachesTheMinimiserThatIstaConvergesTo) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double lipschitz = gramNorm(p) * 1.01;
    const double w = 40;
    const ComplexArray reference = ista(p, w, lipschitz, 20000);
    // The l1 term matters here: the minimiser has zero wavelet coefficients and differs from least squares.
    int zeros = 0;
    for (const cdouble& c : waveletForward(p, reference)) zeros += std::abs(c) < 1e-12;
    ASSERT_GE(zeros, 8);
    const double f_ref = objective(p, w, reference);

    for (bool restart : {true, false}) {
        FistaOptions o;
        o.lipschitz = lipschitz;
        o.shifts = WaveletShifts::Fixed;
        o.restart = restart;
        Fista fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), o);
        EXPECT_NEAR(fista.stepSize(), 1 / (2 * lipschitz), 1e-15);
        RunOptions run;
        run.iterations = 3000;
        Monitor quiet;
        const RunResult r = runIterations(fista, run, quiet);
        const double f = objective(p, w, r.image);
        EXPECT_NEAR(f, f_ref, 1e-10 * f_ref) << "restart " << restart;
        EXPECT_LT(relativeError(r.image, reference), 1e-7) << "restart " << restart;
        // The records carry the full cost (l1 term included) and never go below the minimum.
        EXPECT_NEAR(r.history.back().cost(), f, 1e-10 * f);
        for (const IterationRecord& rec : r.history) EXPECT_GT(rec.cost(), f_ref * (1 - 1e-12));
        // The objective decreases: from the start's ||d||^2 over the first steps (this problem is
        // strongly convex, so the gap to the minimum shrinks fast, by 1e-6 within 60 steps).
        EXPECT_LT(r.history[0].cost(), on.dn);
        EXPECT_LT(r.history[4].cost(), r.history[0].cost());
        EXPECT_LT(r.history[19].cost() - f_ref, 0.5 * (r.history[4].cost() - f_ref));
        EXPECT_LT(r.history[59].cost() - f_ref, 1e-6 * f_ref);
        EXPECT_LT(r.history.back().residual, 1e-8);
        EXPECT_EQ(r.history.back().iteration, 3000);
        if (restart) {
            // With function restarts the cost never rises by more than one step's overshoot
            // before momentum is reset, and FISTA gets there in far fewer steps than ISTA.
            EXPECT_GT(fista.restarts(), 0);
        }
    }
}

// The Averaged shift rule: each step's prox is the mean of the proxes over fixed shifts, the prox of
// one convex function (their proximal average), so FISTA and POGM converge to the one image that
// ISTA with the same averaged prox (float64, on the host, to machine precision) converges to, and
// settle there (unlike random shifts, whose iterates keep moving). POGM refuses the rule: its prox
// step changes, and with it the function the averaged prox belongs to (its iterates cycled).
TEST(Fista, AveragedShiftsConvergeToOneImage) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double lipschitz = gramNorm(p) * 1.01, w = 40;
    const std::vector<std::size_t> offsets{0, 1, 9, 18};
    const std::size_t n = p.g.voxels();
    auto shift = [n](const ComplexArray& x, std::size_t offset) {  // cyclicShift's P: y[(i + offset) mod n] = x[i]
        ComplexArray y(n);
        for (std::size_t i = 0; i < n; ++i) y[(i + offset) % n] = x[i];
        return y;
    };
    const CsrMatrix at = p.a.transposed();
    ComplexArray reference(n), ax(p.d.size()), grad(n), v(n);
    const double t = w / (2 * lipschitz);
    for (int it = 0; it < 20000; ++it) {
        p.a.multiply(reference.data(), ax.data());
        for (std::size_t i = 0; i < ax.size(); ++i) ax[i] -= p.d[i];
        at.multiply(ax.data(), grad.data());
        for (std::size_t i = 0; i < n; ++i) v[i] = reference[i] - grad[i] / lipschitz;
        ComplexArray mean(n);
        for (std::size_t o : offsets) {
            ComplexArray c = waveletForward(p, shift(v, o));
            for (auto& ci : c) ci = std::abs(ci) > t ? ci * (1 - t / std::abs(ci)) : cdouble(0);
            const ComplexArray back = shift(waveletAdjoint(p, c), n - o);
            for (std::size_t i = 0; i < n; ++i) mean[i] += back[i] / double(offsets.size());
        }
        reference = mean;
    }
    // Not the fixed grid's minimiser: the shifts change the image.
    EXPECT_GT(relativeError(reference, ista(p, w, lipschitz, 20000)), 1e-3);
    for (bool restart : {true, false}) {
        FistaOptions o;
        o.lipschitz = lipschitz;
        o.restart = restart;
        o.shifts = WaveletShifts::Averaged;
        o.averaged_offsets = offsets;
        Fista alg(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), o);
        RunOptions run;
        run.iterations = 3000;
        Monitor quiet;
        const RunResult r = runIterations(alg, run, quiet);
        const char* what = restart ? "restart" : "no restart";
        EXPECT_LT(relativeError(r.image, reference), 1e-7) << what;
        EXPECT_LT(r.history.back().residual, 1e-7) << what;
        // Settled: the cost (data term and the mean of the shifted l1 norms) no longer moves.
        const double last = r.history.back().cost();
        for (std::size_t k = r.history.size() - 100; k < r.history.size(); ++k)
            EXPECT_NEAR(r.history[k].cost(), last, 1e-9 * last) << what << " step " << k;
    }
    FistaOptions bad;
    bad.lipschitz = lipschitz;
    bad.shifts = WaveletShifts::Averaged;  // no offsets
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), bad), InputError);
    bad.averaged_offsets = {n};
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), bad), InputError);
    bad.averaged_offsets = offsets;
    bad.momentum = Momentum::Pogm;
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), bad), InputError);
    // The session's offsets: the same shift along every axis, spread over the coarsest block (16 on 128^3).
    const std::size_t diagonal = 1 + 128 + 128 * 128;
    EXPECT_EQ(averagedShiftOffsets(Grid::make3D(128, 128, 128)),
              (std::vector<std::size_t>{0, 5 * diagonal, 10 * diagonal, 15 * diagonal}));
    EXPECT_EQ(parseWaveletShifts("average"), WaveletShifts::Averaged);
    EXPECT_THROW(parseWaveletShifts("sometimes"), InputError);
}

TEST(Pogm, ReachesTheMinimiserThatIstaConvergesTo) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double lipschitz = gramNorm(p) * 1.01;
    const double w = 40;
    const ComplexArray reference = ista(p, w, lipschitz, 20000);
    const double f_ref = objective(p, w, reference);
    for (bool restart : {true, false}) {
        FistaOptions o;
        o.lipschitz = lipschitz;
        o.momentum = Momentum::Pogm;
        o.shifts = WaveletShifts::Fixed;
        o.restart = restart;
        Fista pogm(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), o);
        RunOptions run;
        run.iterations = 3000;
        Monitor quiet;
        const RunResult r = runIterations(pogm, run, quiet);
        const double f = objective(p, w, r.image);
        EXPECT_NEAR(f, f_ref, 1e-10 * f_ref) << "restart " << restart;
        EXPECT_LT(relativeError(r.image, reference), 1e-7) << "restart " << restart;
        EXPECT_NEAR(r.history.back().cost(), f, 1e-10 * f);
        for (const IterationRecord& rec : r.history) EXPECT_GT(rec.cost(), f_ref * (1 - 1e-12));
        EXPECT_LT(r.history[59].cost() - f_ref, 1e-6 * f_ref) << "restart " << restart;
        // The composite gradient mapping vanishes at the minimiser.
        EXPECT_LT(r.history.back().residual, 1e-8);
        if (restart) EXPECT_GT(pogm.restarts(), 0);
    }
}

// Steps to a relative cost gap of `gap` (the first step from which every later one stays below).
int stepsTo(const RunResult& r, double f_ref, double gap) {
    int last_above = 0;
    for (const IterationRecord& rec : r.history)
        if (rec.cost() - f_ref > gap * f_ref) last_above = rec.iteration;
    return last_above + 1;
}

TEST(Pogm, NeedsNoMoreStepsThanFista) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double lipschitz = gramNorm(p) * 1.01;
    for (double w : {4.0, 40.0}) {
        const double f_ref = objective(p, w, ista(p, w, lipschitz, 20000));
        std::map<Momentum, std::vector<int>> steps;
        for (Momentum mom : {Momentum::Fista, Momentum::Pogm}) {
            FistaOptions o;
            o.lipschitz = lipschitz;
            o.momentum = mom;
            o.shifts = WaveletShifts::Fixed;
            Fista alg(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), o);
            RunOptions run;
            run.iterations = 400;
            Monitor quiet;
            const RunResult r = runIterations(alg, run, quiet);
            for (double gap : {1e-3, 1e-6, 1e-9}) steps[mom].push_back(stepsTo(r, f_ref, gap));
        }
        for (std::size_t k = 0; k < 3; ++k) {
            EXPECT_LE(steps[Momentum::Pogm][k], steps[Momentum::Fista][k]) << "w " << w << ", gap 1e-" << 3 * (k + 1);
            std::printf("w %g, relative gap 1e-%zu: FISTA %d steps, POGM %d\n", w, 3 * (k + 1), steps[Momentum::Fista][k],
                        steps[Momentum::Pogm][k]);
        }
    }
}

TEST(Fista, IsFasterThanIstaOnTheSameProblem) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    const double lipschitz = gramNorm(p) * 1.01, w = 40;
    const double f_ref = objective(p, w, ista(p, w, lipschitz, 20000));
    FistaOptions o;
    o.lipschitz = lipschitz;
    o.shifts = WaveletShifts::Fixed;
    Fista fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, w, WaveletKind::Haar), o);
    RunOptions run;
    run.iterations = 100;
    Monitor quiet;
    const double f_fista = objective(p, w, runIterations(fista, run, quiet).image);
    const double f_ista = objective(p, w, ista(p, w, lipschitz, 100));
    EXPECT_LT(f_fista - f_ref, 0.1 * (f_ista - f_ref)) << "FISTA gap " << f_fista - f_ref << ", ISTA gap " << f_ista - f_ref;
}

TEST(Fista, WeightChangeContinuesWarm) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    FistaOptions o;
    o.lipschitz = estimateNormalNorm(*on.a);
    o.shifts = WaveletShifts::Fixed;
    Monitor quiet;
    RunOptions run;
    run.iterations = 2000;
    Fista cold(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, 20, WaveletKind::Haar), o);
    const RunResult cold_r = runIterations(cold, run, quiet);
    Fista warm(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, 200, WaveletKind::Haar), o);
    runIterations(warm, run, quiet);
    warm.setWeight(20);
    EXPECT_EQ(warm.weight(), 20);
    const RunResult warm_r = runIterations(warm, run, quiet);
    EXPECT_LT(relativeError(warm_r.image, cold_r.image), 1e-7);
    EXPECT_EQ(warm_r.history.back().iteration, 4000);
    EXPECT_THROW(warm.setWeight(-1), InputError);
    EXPECT_THROW(warm.setInitial(ComplexArray(5)), InputError);
}

TEST(Fista, RefusesWhatItCannotSolve) {
    const SmallProblem p = smallProblem();
    OnBackend on(p);
    FistaOptions o;
    o.lipschitz = 1;
    // TV's gradient is not square (and not orthogonal): its prox is not W^H soft(W .).
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, totalVariation(*on.b, p.g, 1.0, true), o), InputError);
    // A square transform that is not orthogonal.
    SparseTerm doubled = waveletSparsity(*on.b, p.g, 1.0, WaveletKind::Haar);
    doubled.transform = scaled(2.0, doubled.transform);
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, doubled, o), InputError);
    FistaOptions no_bound;
    EXPECT_THROW(Fista(on.a, on.fhd, on.dn, waveletSparsity(*on.b, p.g, 1.0), no_bound), InputError);
}

// The random shifts: W P_s is orthogonal for every offset (P_s a permutation), and P_s is the
// cyclic shift of the flattened image, checked element by element.
TEST(Fista, RandomShiftsKeepTheWaveletOrthogonal) {
    auto b = createCpuBackend(Precision::Double);
    const Grid g = Grid::make2D(16, 12);
    const std::size_t n = g.voxels();
    const ComplexArray x = randomComplex(n, 21), y = randomComplex(n, 22);
    for (WaveletKind kind : {WaveletKind::Haar, WaveletKind::Daubechies4})
        for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(17), n - 1, n + 3}) {
            LinearOperatorPtr shift = cyclicShift(*b, n, offset);
            const ComplexArray px = applyForward(*shift, x);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(px[(i + offset) % n], x[i]);
            LinearOperatorPtr ws = compose(waveletSparsity(*b, g, 1.0, kind).transform, shift);
            const ComplexArray wx = applyForward(*ws, x);
            EXPECT_LT(relativeError(applyAdjoint(*ws, wx), x), 1e-13);  // (W P)^H (W P) = I
            EXPECT_NEAR(std::sqrt(std::real(inner(wx, wx))), std::sqrt(std::real(inner(x, x))), 1e-12 * n);
            // The adjoint identity <W P x, y> = <x, (W P)^H y>.
            const cdouble lhs = inner(y, wx), rhs = inner(applyAdjoint(*ws, y), x);
            EXPECT_LT(std::abs(lhs - rhs), 1e-12 * std::abs(lhs));
        }
    Vector in = b->make(n), out = b->make(n + 1);
    EXPECT_THROW(cyclicShift(*b, in, 1, out), InputError);
}

// In the session: the wavelet prior on undersampled radial data (small-2d) goes to POGM by
// default, reports per step, continues warm after a lambda change and beats gridding-free
// least squares; FISTA on request does as well; a FISTA or POGM request for TV is refused with a reason.
TEST(Fista, SessionSolvesTheWaveletPriorWithPogmOrFista) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    s.setDataset(d);
    SolveOptions o;
    o.regularizer = RegularizerKind::Wavelet;
    o.lambda = defaultSparseLambda(RegularizerKind::Wavelet);
    o.iterations = 150;
    std::vector<IterationRecord> seen;
    const SolveResult r = s.solve(o, [&](int, const IterationRecord& rec, const ComplexArray*) { seen.push_back(rec); });
    EXPECT_EQ(r.solver, "pogm");
    ASSERT_EQ(seen.size(), 150u);
    const double psnr = measureQuality(r.image, d->truth, false).psnr_db;
    EXPECT_NEAR(seen.back().psnr_db, psnr, 0.01);
    EXPECT_LT(seen.back().cost(), seen.front().cost());

    SolveOptions ls;  // the same data without a prior (Tikhonov with lambda 0)
    ls.regularizer = RegularizerKind::Tikhonov;
    ls.lambda = 0;
    ls.iterations = 150;
    EXPECT_GT(psnr, measureQuality(s.solve(ls).image, d->truth, false).psnr_db + 2.0);

    // The same settings give the same image (the shifts are seeded); a warm lambda change continues.
    EXPECT_LT(relativeError(s.solve(o).image, r.image), 1e-6);
    SolveOptions w = o;
    w.warm_start = true;
    w.lambda *= 1.5;
    w.iterations = 20;
    const SolveResult wr = s.solve(w);
    EXPECT_TRUE(wr.warm_started);
    EXPECT_EQ(wr.total_iterations, 170);

    SolveOptions admm = o;
    admm.sparse_solver = SparseSolver::Admm;
    EXPECT_EQ(s.solve(admm).solver, "admm");
    SolveOptions tv = o;
    tv.regularizer = RegularizerKind::TotalVariation;
    tv.sparse_solver = SparseSolver::Fista;
    EXPECT_THROW(s.solve(tv), InputError);
    tv.sparse_solver = SparseSolver::Pogm;
    EXPECT_THROW(s.solve(tv), InputError);
    EXPECT_THROW(parseSparseSolver("ista"), InputError);
    EXPECT_EQ(parseSparseSolver("pogm"), SparseSolver::Pogm);

    // FISTA on the same data: its own resident solve (not POGM's), close to POGM after the same steps.
    SolveOptions fista = o;
    fista.sparse_solver = SparseSolver::Fista;
    const SolveResult fr = s.solve(fista);
    EXPECT_EQ(fr.solver, "fista");
    EXPECT_FALSE(fr.warm_started);
    EXPECT_GT(measureQuality(fr.image, d->truth, false).psnr_db, psnr - 1.0);
    fista.warm_start = true;
    fista.lambda *= 1.5;
    fista.iterations = 20;
    const SolveResult fw = s.solve(fista);
    EXPECT_TRUE(fw.warm_started);
    EXPECT_EQ(fw.total_iterations, 170);
}
