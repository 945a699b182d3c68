// ADMM with the sparse priors: against a primal-dual method run to high accuracy on a
// tiny problem, and in the session on undersampled radial data against the best
// quadratic reconstruction of a lambda sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "../test_support.hpp"
#include "dense_gaussian.hpp"
#include "recon/core/metrics.hpp"
#include "recon/priors/priors.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/admm.hpp"
#include "recon/solvers/pdhg.hpp"

using namespace recon;
using namespace recon::test;

namespace {

struct TinyProblem {
    Grid g = Grid::make2D(4, 4);
    CsrMatrix a;  // dense, m x n
    ComplexArray d;
};

TinyProblem tinyProblem() {
    TinyProblem p;
    const std::size_t n = p.g.voxels(), m = 12;  // underdetermined: the prior decides
    std::mt19937 rng(3);
    std::normal_distribution<double> nd;
    p.a = test::denseGaussian(m, n, rng, nd);
    ComplexArray x(n);
    for (int y = 0; y < 4; ++y)
        for (int xx = 0; xx < 4; ++xx) x[p.g.index(xx, y, 0)] = cdouble(xx < 2 ? 1.0 : 2.0, y < 2 ? 0.5 : -0.5);
    p.d.resize(m);
    p.a.multiply(x.data(), p.d.data());
    for (auto& v : p.d) v += 0.05 * cdouble(nd(rng), nd(rng));
    return p;
}

double objective(const TinyProblem& p, const CsrMatrix& dmat, std::size_t group, double w, const ComplexArray& x) {
    ComplexArray ax(p.d.size()), dx(std::size_t(dmat.rows));
    p.a.multiply(x.data(), ax.data());
    dmat.multiply(x.data(), dx.data());
    double f = 0;
    for (std::size_t i = 0; i < ax.size(); ++i) f += std::norm(ax[i] - p.d[i]);
    const std::size_t stride = dx.size() / group;
    for (std::size_t i = 0; i < stride; ++i) {
        double n2 = 0;
        for (std::size_t k = 0; k < group; ++k) n2 += std::norm(dx[i + k * stride]);
        f += w * std::sqrt(n2);
    }
    return f;
}

// Chambolle-Pock on min_x f1(A x) + f2(D x), f1(z) = ||z - d||^2, f2 = w ||.||_{2,1}: both
// conjugates have closed-form proxes; many thousands of iterations in float64.
ComplexArray primalDual(const TinyProblem& p, const CsrMatrix& dmat, std::size_t group, double w, int iterations) {
    const std::size_t n = p.g.voxels(), m = p.d.size(), r = std::size_t(dmat.rows);
    const CsrMatrix at = p.a.transposed(), dt = dmat.transposed();
    double norm_a2 = 0;
    for (double v : p.a.val) norm_a2 += v * v;
    const double step = 0.95 / std::sqrt(norm_a2 + 4.0 * p.g.dims);  // sigma = tau, sigma tau ||K||^2 < 1
    ComplexArray x(n), xbar(n), y1(m), y2(r), ax(m), dx(r), t1(n), t2(n);
    for (int it = 0; it < iterations; ++it) {
        p.a.multiply(xbar.data(), ax.data());
        dmat.multiply(xbar.data(), dx.data());
        for (std::size_t i = 0; i < m; ++i) y1[i] = (y1[i] + step * ax[i] - step * p.d[i]) / (1 + step / 2);
        for (std::size_t i = 0; i < r; ++i) y2[i] += step * dx[i];
        projectOntoGroupBalls(y2, group, w);
        at.multiply(y1.data(), t1.data());
        dt.multiply(y2.data(), t2.data());
        for (std::size_t i = 0; i < n; ++i) {
            const cdouble old = x[i];
            x[i] -= step * (t1[i] + t2[i]);
            xbar[i] = 2.0 * x[i] - old;
        }
    }
    return x;
}

// The first step from which a solve's PSNR stays within 0.1 dB of `target`.
int stepsWithinTenthOfADecibel(double target, const SolveResult& r) {
    std::size_t i = r.history.size();
    while (i > 0 && std::abs(r.history[i - 1].psnr_db - target) <= 0.1) --i;
    return int(i) + 1;
}

}  // namespace

TEST(Admm, MatchesAPrimalDualSolutionOnATinyProblem) {
    const TinyProblem p = tinyProblem();
    auto b = createCpuBackend(Precision::Double);
    for (bool anisotropic : {false, true}) {
        const double w = 0.8;
        const std::size_t group = anisotropic ? 1 : 2;
        const CsrMatrix dmat = gradientMatrix(p.g);
        const ComplexArray reference = primalDual(p, dmat, group, w, 200000);

        LinearOperatorPtr f = sparseMatrix(*b, p.a, nullptr, "A");
        ComplexArray fhd_host = applyAdjoint(*f, p.d);
        double dn = 0;
        for (auto v : p.d) dn += std::norm(v);
        AdmmOptions o;
        o.image_scale = 1.5;
        o.threshold_scale = 0.05;
        Admm admm(f, b->fromHost(fhd_host), dn, {totalVariation(*b, p.g, w, anisotropic)}, o);
        RunOptions run;
        run.iterations = 20000;
        Monitor quiet;
        RunResult r = runIterations(admm, run, quiet);
        const double f_admm = objective(p, dmat, group, w, r.image), f_ref = objective(p, dmat, group, w, reference);
        EXPECT_NEAR(f_admm, f_ref, 1e-7 * f_ref) << (anisotropic ? "anisotropic" : "isotropic");
        EXPECT_LT(relativeError(r.image, reference), 1e-4);
        // The records carry the full cost, l1 term included.
        EXPECT_NEAR(r.history.back().cost(), f_admm, 1e-9 * f_admm);
        EXPECT_LT(r.history.back().residual, 1e-6);
        // The records count every step. ADMM ends before the 20,000 only where both x-updates are
        // already exact, a fixed point in the working precision (the sanitizers' build, whose
        // rounding differs, reached one after 16,955 steps).
        EXPECT_EQ(r.history.back().iteration, int(r.history.size()));
        if (r.history.size() < 20000u) EXPECT_EQ(r.reason, StopReason::NothingLeft);
    }
}

// The default over-relaxation (1.6) and residual-balanced rho reach the primal-dual minimiser as
// plain ADMM with a fixed rho does, in fewer CG steps, from a rho far too small or too large.
TEST(Admm, RelaxationAndBalancedRhoReachTheSameMinimiserInFewerSteps) {
    const TinyProblem p = tinyProblem();
    auto b = createCpuBackend(Precision::Double);
    const double w = 0.8;
    const CsrMatrix dmat = gradientMatrix(p.g);
    const ComplexArray reference = primalDual(p, dmat, 2, w, 200000);
    const double f_ref = objective(p, dmat, 2, w, reference);
    LinearOperatorPtr f = sparseMatrix(*b, p.a, nullptr, "A");
    const Vector fhd = b->fromHost(applyAdjoint(*f, p.d));
    double dn = 0;
    for (auto v : p.d) dn += std::norm(v);
    // CG steps until the cost is within `gap` (relative) of the minimum, and the final image.
    auto solve = [&](double threshold_scale, bool tuned) {
        AdmmOptions o;
        o.image_scale = 1.5;
        o.threshold_scale = threshold_scale;
        o.relaxation = tuned ? AdmmDefaults::relaxation : 1.0;
        o.adaptive_rho = tuned;
        Admm admm(f, fhd, dn, {totalVariation(*b, p.g, w)}, o);
        RunOptions run;
        run.iterations = 20000;
        Monitor quiet;
        const RunResult r = runIterations(admm, run, quiet);
        int steps = 0;
        while (steps < int(r.history.size()) && r.history[std::size_t(steps)].cost() > f_ref * (1 + 1e-6)) ++steps;
        EXPECT_NEAR(objective(p, dmat, 2, w, r.image), f_ref, 1e-7 * f_ref) << threshold_scale << (tuned ? " tuned" : " plain");
        EXPECT_LT(relativeError(r.image, reference), 1e-4);
        return steps + 1;
    };
    EXPECT_TRUE(AdmmDefaults::adaptive_rho);
    EXPECT_GT(AdmmDefaults::relaxation, 1.0);
    for (double threshold_scale : {0.05, 0.005, 0.5}) {
        const int plain = solve(threshold_scale, false), tuned = solve(threshold_scale, true);
        std::printf("threshold %g: %d CG steps plain, %d tuned to a cost gap of 1e-6\n", threshold_scale, plain, tuned);
        // Measured (tuned / plain): 501 / 770, 486 / 6335 and 506 / 2348 steps.
        EXPECT_LT(tuned, 0.85 * plain) << threshold_scale;
    }
}

TEST(Admm, WeightChangeContinuesWarm) {
    const TinyProblem p = tinyProblem();
    auto b = createCpuBackend(Precision::Double);
    LinearOperatorPtr f = sparseMatrix(*b, p.a, nullptr, "A");
    const Vector fhd = b->fromHost(applyAdjoint(*f, p.d));
    double dn = 0;
    for (auto v : p.d) dn += std::norm(v);
    Monitor quiet;
    RunOptions run;
    run.iterations = 4000;
    AdmmOptions o;  // the tiny problem's image is about 1.5, rho sized for it
    o.image_scale = 1.5;
    o.threshold_scale = 0.1;
    Admm cold(f, fhd, dn, {totalVariation(*b, p.g, 0.3)}, o);
    const RunResult cold_r = runIterations(cold, run, quiet);
    Admm warm(f, fhd, dn, {totalVariation(*b, p.g, 2.0)}, o);
    runIterations(warm, run, quiet);
    warm.setWeight(0, 0.3);
    // rho follows the rule (times the factor residual balancing has applied).
    EXPECT_NEAR(warm.rho(0) / warm.rhoScale(), cold.rho(0) / cold.rhoScale(), 1e-15);
    const RunResult warm_r = runIterations(warm, run, quiet);
    EXPECT_LT(relativeError(warm_r.image, cold_r.image), 1e-5);
    EXPECT_THROW(warm.setWeight(0, -1), InputError);
    EXPECT_THROW(warm.setWeight(1, 1), InputError);
    AdmmOptions bad;
    bad.inner_iterations = 0;
    EXPECT_THROW(Admm(f, fhd, dn, {totalVariation(*b, p.g, 0.3)}, bad), InputError);
    EXPECT_THROW(Admm(f, fhd, dn, {totalVariation(*b, Grid::make2D(5, 4), 0.3)}), InputError);
}

// Undersampled golden-angle radial data (small-2d: 48^2 Shepp-Logan, 40 spokes, about 1/4 of
// Nyquist): TV beats the best quadratic reconstruction of a lambda sweep by several dB.
TEST(Admm, TotalVariationBeatsTheBestQuadraticReconstruction) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    s.setDataset(d);
    double best_quadratic = -1e9;
    for (RegularizerKind kind : {RegularizerKind::Tikhonov, RegularizerKind::FiniteDifference})
        for (double lambda : {0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2}) {
            SolveOptions o;
            o.regularizer = kind;
            o.lambda = lambda;
            o.iterations = 100;
            best_quadratic = std::max(best_quadratic, measureQuality(s.solve(o).image, d->truth, false).psnr_db);
        }
    SolveOptions tv;
    tv.regularizer = RegularizerKind::TotalVariation;
    tv.lambda = defaultSparseLambda(RegularizerKind::TotalVariation);
    tv.iterations = 200;
    std::vector<IterationRecord> seen;
    const SolveResult r = s.solve(tv, [&](int, const IterationRecord& rec, const ComplexArray*) { seen.push_back(rec); });
    const double tv_psnr = measureQuality(r.image, d->truth, false).psnr_db;
    // Measured: TV (lambda 0.1) 29.5 dB; best quadratic 24.2 dB (fd, lambda 0.1).
    EXPECT_GT(tv_psnr, best_quadratic + 4.0) << "TV " << tv_psnr << " dB, best quadratic " << best_quadratic << " dB";
    ASSERT_EQ(seen.size(), 200u);
    EXPECT_NEAR(seen.back().psnr_db, tv_psnr, 0.01);
    // The outer step each inner CG iteration belongs to: 5 CG iterations per ADMM step.
    EXPECT_EQ(seen[0].outer_iteration, 1);
    EXPECT_EQ(seen[4].outer_iteration, 1);
    EXPECT_EQ(seen[5].outer_iteration, 2);
    for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].outer_iteration, seen[i - 1].outer_iteration);
    EXPECT_GE(seen.back().outer_iteration, 40);
    EXPECT_GT(seen.back().penalty_term, 0);
    EXPECT_LT(seen.back().cost(), seen.front().cost());

    // A lambda change continues warm from the resident solve.
    tv.warm_start = true;
    tv.lambda *= 1.5;
    tv.iterations = 50;
    const SolveResult w = s.solve(tv);
    EXPECT_TRUE(w.warm_started);
    EXPECT_EQ(w.total_iterations, 250);
    EXPECT_GT(measureQuality(w.image, d->truth, false).psnr_db, best_quadratic + 3.0);
}

// 3D radial k-space (12^3, 36 spokes: a quarter of Nyquist, as the demo kooshballs) makes F^H F
// badly conditioned; the circulant preconditioner of the inner CG with the balanced rho and
// over-relaxation reaches the minimiser plain ADMM (fixed rho, no relaxation, no preconditioner)
// approaches, in about half its CG steps.
TEST(Admm, PreconditionedInnerSolveReachesTheSameMinimiserInFewerSteps) {
    CaseSpec spec;
    spec.name = "radial-3d-12";
    spec.trajectory.kind = TrajectoryKind::Radial3D;
    spec.trajectory.n = 12;
    spec.trajectory.readouts = 36;
    spec.reference = false;
    const std::shared_ptr<Dataset> d = simulate(spec);
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(d);
    SolveOptions o;
    o.regularizer = RegularizerKind::TotalVariation;
    o.lambda = defaultSparseLambda(o.regularizer);
    o.iterations = 1000;
    o.snapshot_every = 0;
    const SolveResult tuned = s.solve(o);  // the defaults
    SolveOptions plain_o = o;
    plain_o.admm_relaxation = 1;
    plain_o.admm_balance_rho = false;
    plain_o.admm_preconditioner = PreconditionerKind::None;
    const SolveResult plain = s.solve(plain_o);
    double f_min = 1e300;
    for (const auto* r : {&tuned, &plain}) f_min = std::min(f_min, r->history.back().cost());
    auto stepsTo = [&](const SolveResult& r, double gap) {
        std::size_t i = 0;
        while (i < r.history.size() && r.history[i].cost() > f_min * (1 + gap)) ++i;
        return int(i) + 1;
    };
    const int tuned_steps = stepsTo(tuned, 1e-4), plain_steps = stepsTo(plain, 1e-4);
    std::printf("cost %.10g / %.10g; CG steps to a cost gap of 1e-4: %d tuned, %d plain; image difference %.2e\n",
                tuned.history.back().cost(), plain.history.back().cost(), tuned_steps, plain_steps,
                relativeError(tuned.image, plain.image));
    // Measured: costs 4570.1466 (defaults) and 4570.2620 (plain, still descending); 245 and 477 steps
    // to a gap of 1e-4; images 3.7e-4 apart.
    EXPECT_NEAR(tuned.history.back().cost(), f_min, 1e-9 * f_min);
    EXPECT_NEAR(plain.history.back().cost(), f_min, 1e-4 * f_min);
    EXPECT_LT(relativeError(tuned.image, plain.image), 2e-3);
    EXPECT_LT(tuned_steps, 0.7 * plain_steps);
}

TEST(Admm, SessionPriorsCombineAndCheckTheirParameters) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    s.setDataset(d);
    SolveOptions o;
    o.iterations = 60;
    o.priors = {{RegularizerKind::TotalVariation, 0.05}, {RegularizerKind::Wavelet, 0.01}};
    const SolveResult both = s.solve(o);
    EXPECT_GT(measureQuality(both.image, d->truth, false).psnr_db, 25.0);
    o.priors = {{RegularizerKind::TotalVariation, -1}};
    EXPECT_THROW(s.solve(o), InputError);
    o.priors = {{RegularizerKind::FiniteDifference, 0.1}};
    EXPECT_THROW(s.solve(o), InputError);
    o.priors = {};
    o.regularizer = RegularizerKind::Wavelet;
    o.admm_inner_iterations = 0;
    EXPECT_THROW(s.solve(o), InputError);
    EXPECT_EQ(parseRegularizer("anatomical-tv"), RegularizerKind::AnatomicalTotalVariation);
    EXPECT_THROW(makeRegularizer(RegularizerKind::TotalVariation, d->grid), InputError);
}

// Each term carries its own TV norm: a sum of isotropic and anisotropic TV (--priors
// tv:L1,tv-anisotropic:L2) is solved with one transform per norm, and the records' penalty is
// lambda_1 s ||D x||_{2,1} + lambda_2 s ||D x||_1 of the image, recomputed here from the gradient matrix.
TEST(Admm, SessionTermsCarryTheirOwnTotalVariationNorm) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    s.setDataset(d);
    const CsrMatrix dmat = gradientMatrix(d->grid);
    auto norms = [&](const ComplexArray& x) {  // {isotropic, anisotropic}
        ComplexArray dx(std::size_t(dmat.rows));
        dmat.multiply(x.data(), dx.data());
        const std::size_t n = x.size();
        double iso = 0, aniso = 0;
        for (std::size_t i = 0; i < n; ++i) {
            iso += std::sqrt(std::norm(dx[i]) + std::norm(dx[i + n]));
            aniso += std::abs(dx[i]) + std::abs(dx[i + n]);
        }
        return std::pair{iso, aniso};
    };
    SolveOptions o;
    o.iterations = 100;
    o.snapshot_every = 0;
    const double l_iso = 0.03, l_aniso = 0.05;
    const double scale = s.lambdaScale();
    for (int variant = 0; variant < 3; ++variant) {
        o.priors.clear();
        if (variant != 1) o.priors.push_back({RegularizerKind::TotalVariation, l_iso, false});
        if (variant != 0) o.priors.push_back({RegularizerKind::TotalVariation, l_aniso, true});
        const SolveResult r = s.solve(o);
        const auto [iso, aniso] = norms(r.image);
        const double expected = scale * ((variant != 1 ? l_iso * iso : 0.0) + (variant != 0 ? l_aniso * aniso : 0.0));
        EXPECT_NEAR(r.history.back().penalty_term, expected, 1e-9 * expected) << "variant " << variant;
        EXPECT_GT(aniso, iso * 1.05);  // the norms differ on this image, so the check above tells them apart
        EXPECT_GT(measureQuality(r.image, d->truth, false).psnr_db, 25.0) << "variant " << variant;
    }
}

// ADMM from the gridding start (SolveOptions::start, as the quadratic CG's): ahead of the zero start in
// its first steps (small-2d, TV at lambda 0.1, measured 26.25 against 23.92 dB after 10 steps, 28.59
// against 28.02 after 30), and at the same minimiser after many.
TEST(Admm, GriddingStartIsAheadEarlyAndReachesTheSameMinimiser) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    s.setDataset(d);
    SolveOptions o;
    o.regularizer = RegularizerKind::TotalVariation;
    o.lambda = 0.1;
    o.iterations = 600;
    o.snapshot_every = 0;
    const SolveResult zero = s.solve(o);
    o.start = StartImage::Gridding;
    const SolveResult gridding = s.solve(o);
    for (int k : {10, 30}) {
        const double pz = zero.history[std::size_t(k - 1)].psnr_db, pg = gridding.history[std::size_t(k - 1)].psnr_db;
        EXPECT_GT(pg, pz + 0.3) << "after " << k << " steps: gridding start " << pg << " dB, zero start " << pz << " dB";
    }
    const double fz = zero.history.back().cost(), fg = gridding.history.back().cost();
    EXPECT_NEAR(fg, fz, 5e-5 * fz);  // measured 1.8e-5 apart after 600 steps, the gridding start's the lower
    EXPECT_LT(relativeError(gridding.image, zero.image), 2e-3);
}

// The reference scan's edges make TV cheaper across them: at the default lambdas anatomical TV
// beats plain TV on small-2d (measured: 31.7 dB vs 29.5 dB), and a data set without a reference is refused.
TEST(Admm, AnatomicalTotalVariationUsesTheReference) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    ASSERT_TRUE(d->hasReference());
    s.setDataset(d);
    SolveOptions o;
    o.iterations = 200;
    o.regularizer = RegularizerKind::TotalVariation;
    o.lambda = defaultSparseLambda(o.regularizer);
    const double tv = measureQuality(s.solve(o).image, d->truth, false).psnr_db;
    o.regularizer = RegularizerKind::AnatomicalTotalVariation;
    o.lambda = defaultSparseLambda(o.regularizer);
    const double atv = measureQuality(s.solve(o).image, d->truth, false).psnr_db;
    EXPECT_GT(atv, tv + 1.0) << "anatomical TV " << atv << " dB, TV " << tv << " dB";

    auto without = std::make_shared<Dataset>(*d);
    without->reference.clear();
    s.setDataset(without);
    EXPECT_THROW(s.solve(o), InputError);
}

// PDHG with the data term dualised and a k-space (dual) preconditioner solves ADMM's problem: it
// reaches the reference primal-dual method's minimiser of the tiny problem (plain scalar steps there)
// with uneven weights p, which change the speed and not the fixed point, and continues warm after a
// weight change to the minimiser at the new weight.
TEST(Pdhg, MatchesAPrimalDualSolutionOnATinyProblem) {
    const TinyProblem p = tinyProblem();
    auto b = createCpuBackend(Precision::Double);
    const CsrMatrix dmat = gradientMatrix(p.g);
    LinearOperatorPtr f = sparseMatrix(*b, p.a, nullptr, "A");
    for (bool anisotropic : {false, true}) {
        const std::size_t group = anisotropic ? 1 : 2;
        PdhgOptions o;
        for (std::size_t i = 0; i < p.d.size(); ++i) o.k_space_weights.push_back(0.25 + 0.5 * double(i % 4));
        Pdhg pdhg(f, b->fromHost(p.d), {totalVariation(*b, p.g, 0.8, anisotropic)}, o);
        EXPECT_GT(pdhg.primalStep(), 0);
        RunOptions run;
        run.iterations = 20000;
        Monitor quiet;
        for (double w : {0.8, 1.6}) {
            if (w != 0.8) pdhg.setWeight(0, w);
            const ComplexArray reference = primalDual(p, dmat, group, w, 200000);
            const RunResult r = runIterations(pdhg, run, quiet);
            const double f_pdhg = objective(p, dmat, group, w, r.image), f_ref = objective(p, dmat, group, w, reference);
            EXPECT_NEAR(f_pdhg, f_ref, 1e-7 * f_ref) << (anisotropic ? "anisotropic " : "isotropic ") << w;
            EXPECT_LT(relativeError(r.image, reference), 1e-4);
            EXPECT_NEAR(r.history.back().cost(), f_pdhg, 1e-9 * f_pdhg);  // the records' cost is the objective's
        }
    }
    PdhgOptions wrong;
    wrong.k_space_weights.assign(p.d.size() + 1, 1.0);
    EXPECT_THROW(Pdhg(f, b->fromHost(p.d), {totalVariation(*b, p.g, 0.8)}, wrong), InputError);
    wrong.k_space_weights.assign(p.d.size(), -1.0);
    EXPECT_THROW(Pdhg(f, b->fromHost(p.d), {totalVariation(*b, p.g, 0.8)}, wrong), InputError);
}

// Spectral rho with residual balancing as its fall-back reaches the primal-dual minimiser of the tiny problem.
TEST(Admm, SpectralRhoMatchesAPrimalDualSolutionOnATinyProblem) {
    const TinyProblem p = tinyProblem();
    auto b = createCpuBackend(Precision::Double);
    const double w = 0.8;
    const CsrMatrix dmat = gradientMatrix(p.g);
    const ComplexArray reference = primalDual(p, dmat, 2, w, 200000);
    const double f_ref = objective(p, dmat, 2, w, reference);
    LinearOperatorPtr f = sparseMatrix(*b, p.a, nullptr, "A");
    double dn = 0;
    for (auto v : p.d) dn += std::norm(v);
    AdmmOptions o;
    o.image_scale = 1.5;
    o.spectral_rho = true;
    Admm admm(f, b->fromHost(applyAdjoint(*f, p.d)), dn, {totalVariation(*b, p.g, w)}, o);
    RunOptions run;
    run.iterations = 20000;
    Monitor quiet;
    const RunResult r = runIterations(admm, run, quiet);
    EXPECT_NEAR(objective(p, dmat, 2, w, r.image), f_ref, 1e-7 * f_ref);
    EXPECT_LT(relativeError(r.image, reference), 1e-4);
    EXPECT_NE(admm.rhoScale(), 1.0);  // rho moved
    AdmmOptions bad = o;
    bad.spectral_correlation = 1;
    EXPECT_THROW(Admm(f, b->fromHost(applyAdjoint(*f, p.d)), dn, {totalVariation(*b, p.g, w)}, bad), InputError);
}

// Spectral rho with residual balancing as its fall-back (--admm-rho spectral) reaches the image
// residual balancing alone (the default) reaches, in fewer CG steps, on undersampled 2D radial data
// (small-2d: 48^2, 40 spokes; radial-2d: 128^2, 96 spokes).
TEST(Admm, SpectralRhoReachesTheSameImageInFewerSteps) {
    EXPECT_FALSE(SolveOptions{}.admm_spectral_rho);
    int spectral_steps = 0, balanced_steps = 0;
    for (const char* name : {"small-2d", "radial-2d"}) {
        ReconstructionSession s(createCpuBackend(Precision::Single));
        const std::shared_ptr<Dataset> d = simulate(demoCase(name));
        s.setDataset(d);
        SolveOptions o;
        o.regularizer = RegularizerKind::TotalVariation;
        o.lambda = 0.1;
        o.iterations = 300;
        o.snapshot_every = 0;
        const SolveResult balanced = s.solve(o);
        o.admm_spectral_rho = true;
        const SolveResult spectral = s.solve(o);
        const double target = balanced.history.back().psnr_db;
        const int sp = stepsWithinTenthOfADecibel(target, spectral), ba = stepsWithinTenthOfADecibel(target, balanced);
        std::printf("%s: %.2f dB (spectral) / %.2f dB (balanced) after 300 steps; within 0.1 dB from step %d / %d; "
                    "cost %.7g / %.7g\n",
                    name, spectral.history.back().psnr_db, target, sp, ba, spectral.history.back().cost(), balanced.history.back().cost());
        EXPECT_NEAR(spectral.history.back().psnr_db, target, 0.05) << name;
        EXPECT_NEAR(spectral.history.back().cost(), balanced.history.back().cost(), 1e-3 * balanced.history.back().cost()) << name;
        EXPECT_LT(relativeError(spectral.image, balanced.image), 0.01) << name;
        spectral_steps += sp;
        balanced_steps += ba;
    }
    // Measured: small-2d from step 56 against 101, radial-2d 76 against 131 (0.57x in all).
    EXPECT_LT(spectral_steps, 0.8 * balanced_steps);
}

// --sparse-solver pdhg in the session (F itself, the density weights as the k-space preconditioner)
// reaches ADMM's image on undersampled 2D radial data, in fewer steps; a lambda change continues warm
// (x and the duals kept) to the cold solve's image; the density-weighted data term is refused.
TEST(Pdhg, SessionReachesAdmmsImageInFewerSteps) {
    int pdhg_steps = 0, admm_steps = 0;
    for (const char* name : {"small-2d", "radial-2d"}) {
        ReconstructionSession s(createCpuBackend(Precision::Single));
        s.setDataset(simulate(demoCase(name)));
        SolveOptions o;
        o.regularizer = RegularizerKind::TotalVariation;
        o.lambda = 0.1;
        o.iterations = 300;
        o.snapshot_every = 0;
        const SolveResult admm = s.solve(o);
        o.sparse_solver = SparseSolver::Pdhg;
        const SolveResult pdhg = s.solve(o);
        EXPECT_EQ(pdhg.solver, "pdhg");
        const double target = admm.history.back().psnr_db;
        const int pd = stepsWithinTenthOfADecibel(target, pdhg), ad = stepsWithinTenthOfADecibel(target, admm);
        std::printf("%s: %.2f dB (pdhg) / %.2f dB (admm) after 300 steps; within 0.1 dB from step %d / %d; cost %.7g / %.7g\n", name,
                    pdhg.history.back().psnr_db, target, pd, ad, pdhg.history.back().cost(), admm.history.back().cost());
        EXPECT_NEAR(pdhg.history.back().psnr_db, target, 0.05) << name;
        EXPECT_NEAR(pdhg.history.back().cost(), admm.history.back().cost(), 1e-3 * admm.history.back().cost()) << name;
        EXPECT_LT(relativeError(pdhg.image, admm.image), 0.01) << name;
        pdhg_steps += pd;
        admm_steps += ad;
        if (std::string(name) == "small-2d") {
            o.lambda = 0.2;
            const SolveResult cold = s.solve(o);
            o.lambda = 0.1;
            s.solve(o);
            o.lambda = 0.2;
            o.warm_start = true;
            const SolveResult warm = s.solve(o);
            EXPECT_TRUE(warm.warm_started);
            EXPECT_LT(relativeError(warm.image, cold.image), 0.01);
            o.warm_start = false;
            o.weighting = DataWeighting::Density;
            EXPECT_THROW(s.solve(o), InputError);
        }
    }
    EXPECT_LT(pdhg_steps, 0.8 * admm_steps);
}
