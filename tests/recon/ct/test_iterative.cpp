// Iterative CT: CG on the weighted, penalised normal equations against a dense
// float64 solve; a warm λ change against a cold solve; the iterative result
// against FDK on the sparse-view case (the margin printed and asserted).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "ct_test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/ct/dd_projector.hpp"
#include "recon/ct/fdk.hpp"
#include "recon/ct/iterative.hpp"
#include "recon/ct/phantom.hpp"
#include "recon/session/ct_session.hpp"

namespace recon::ct {
namespace {

struct SmallProblem {
    CtGeometry g = test::fanBeam(8, 12, 10);
    std::vector<double> p, w;
    SmallProblem() {
        const CtPhantom ball = CtPhantom::ball(2, {1, -0.5, 0}, 2.5, 0.02);
        p = ball.project(g, 3);
        w.resize(p.size());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = 200.0 + 37.0 * (i % 5);  // counts
    }
    // x = (Aᵀ W̃ A + λ s Rᵀ R)⁻¹ Aᵀ W̃ p with W̃ = W / mean(W), s = trace(Aᵀ W̃ A) / voxels, dense.
    std::vector<double> dense(RegularizerKind prior, double lambda) const {
        const int n = int(g.volume.voxels());
        const std::size_t rows = p.size();
        const std::vector<double> a = test::denseProjector(g);
        double mean = 0;
        for (double x : w) mean += x / w.size();
        std::vector<double> m(std::size_t(n) * n, 0.0), b(n, 0.0);
        double trace = 0;
        for (std::size_t r = 0; r < rows; ++r)
            for (int i = 0; i < n; ++i) {
                b[i] += a[r * n + i] * w[r] / mean * p[r];
                for (int j = 0; j < n; ++j) m[i * n + j] += a[r * n + i] * w[r] / mean * a[r * n + j];
            }
        for (int i = 0; i < n; ++i) trace += m[i * n + i];
        const double s = trace / n;
        const Regularizer reg = makeRegularizer(prior, gridOf(g.volume));
        for (int i = 0; i < n; ++i)
            for (std::int64_t k = reg.normal.row_ptr[i]; k < reg.normal.row_ptr[i + 1]; ++k)
                m[i * n + reg.normal.col[k]] += lambda * s * reg.normal.val[k];
        return test::denseSolve(m, b, n);
    }
};

TEST(CtIterative, WeightedPenalisedCgMatchesADenseSolve) {
    const SmallProblem sp;
    auto backend = createCpuBackend(Precision::Double);
    for (RegularizerKind prior : {RegularizerKind::FiniteDifference, RegularizerKind::Tikhonov}) {
        const double lambda = 0.05;
        IterativeSolve solve(*backend, backend->ctProjector(sp.g, {}), sp.g.volume, sp.p, sp.w,
                             DdProjector(sp.g).weightedTrace(sp.w), {prior, lambda});
        Monitor monitor;
        RunOptions ro;
        ro.iterations = 300;
        ro.tolerance = 1e-12;
        const RunResult r = runIterations(solve.algorithm(), ro, monitor);
        const std::vector<double> ref = sp.dense(prior, lambda);
        EXPECT_LT(test::relativeError(test::realPart(r.image), ref), 1e-8) << toString(prior);
    }
}

TEST(CtIterative, WarmLambdaChangeReachesTheColdSolution) {
    const SmallProblem sp;
    auto backend = createCpuBackend(Precision::Double);
    const double trace = DdProjector(sp.g).weightedTrace(sp.w);
    IterativeSolve warm(*backend, backend->ctProjector(sp.g, {}), sp.g.volume, sp.p, sp.w, trace,
                        {RegularizerKind::FiniteDifference, 0.5});
    Monitor monitor;
    RunOptions ro;
    ro.iterations = 40;
    runIterations(warm.algorithm(), ro, monitor);
    warm.setLambda(0.02);
    ro.iterations = 300;
    ro.tolerance = 1e-12;
    const RunResult r = runIterations(warm.algorithm(), ro, monitor);
    const std::vector<double> ref = sp.dense(RegularizerKind::FiniteDifference, 0.02);
    EXPECT_LT(test::relativeError(test::realPart(r.image), ref), 1e-8);
    EXPECT_EQ(warm.lambda(), 0.02);
}

TEST(CtIterative, BadInputIsNamed) {
    const SmallProblem sp;
    auto backend = createCpuBackend(Precision::Single);
    auto a = backend->ctProjector(sp.g, {});
    EXPECT_THROW(IterativeSolve(*backend, a, sp.g.volume, std::vector<double>(3), {}, 1.0, {}), InputError);
    EXPECT_THROW(IterativeSolve(*backend, a, sp.g.volume, sp.p, std::vector<double>(3), 1.0, {}), InputError);
    EXPECT_THROW(IterativeSolve(*backend, a, sp.g.volume, sp.p, {}, 1.0, {RegularizerKind::FiniteDifference, -1}),
                 InputError);
    EXPECT_THROW(IterativeSolve(*backend, a, sp.g.volume, sp.p, {}, 1.0, {RegularizerKind::Wavelet, 0.1}), InputError);
}

// Isotropic TV by ADMM on a piecewise-constant object seen by few views: the edges stay, the
// streaks go; it beats the unpenalised least-squares fit of the same budget.
TEST(CtIterative, TotalVariationBeatsPlainLeastSquaresOnFewViews) {
    const CtGeometry g = test::fanBeam(32, 48, 12);
    const CtPhantom disc = CtPhantom::ball(2, {2, -3, 0}, 9, 0.02);
    const std::vector<double> p = disc.project(g, 3), truth = disc.voxelise(g.volume);
    auto backend = createCpuBackend(Precision::Double);
    const double trace = DdProjector(g).weightedTrace();
    auto error = [&](RegularizerKind prior, double lambda) {
        IterativeSolve solve(*backend, backend->ctProjector(g, {}), g.volume, p, {}, trace, {prior, lambda});
        Monitor monitor;
        RunOptions ro;
        ro.iterations = 150;
        const RunResult r = runIterations(solve.algorithm(), ro, monitor);
        return test::relativeError(test::realPart(r.image), truth);
    };
    const double plain = error(RegularizerKind::Tikhonov, 0), tv = error(RegularizerKind::TotalVariation, 2e-4);
    std::printf("disc, 12 views: least squares %.2f %%, TV %.2f %% error\n", 100 * plain, 100 * tv);
    EXPECT_LT(tv, 0.8 * plain);
}

// The sparse-view demo case (60 views): FDK streaks; penalised least squares does not.
TEST(CtIterative, BeatsFdkOnTheSparseViewCase) {
    const CtData d = simulate(ctDemoCase("ct-2d-sparse"));
    const ComplexArray truth = test::toComplex(d.truth);
    const Quality fdk_q = measureQuality(test::toComplex(fdk(d.geometry, d.projections)), truth, false);
    auto backend = createCpuBackend(Precision::Single);
    IterativeSolve solve(*backend, backend->ctProjector(d.geometry, {}), d.geometry.volume, d.projections, {},
                         DdProjector(d.geometry).weightedTrace(), {RegularizerKind::FiniteDifference,
                                                                   defaultLambda(RegularizerKind::FiniteDifference)});
    Monitor monitor;
    RunOptions ro;
    ro.iterations = 60;
    const RunResult r = runIterations(solve.algorithm(), ro, monitor);
    const Quality it_q = measureQuality(r.image, truth, false);
    std::printf("ct-2d-sparse: FDK %.2f dB / %.2f %%, iterative (%s, 60 iterations) %.2f dB / %.2f %%\n",
                fdk_q.psnr_db, fdk_q.error_percent, solve.describe().c_str(), it_q.psnr_db, it_q.error_percent);
    EXPECT_GT(it_q.psnr_db, fdk_q.psnr_db + 2.0);
    EXPECT_LT(it_q.error_percent, fdk_q.error_percent - 5.0);
}

// Normal dose (2·10³ and 10⁴ incident photons per pixel, the ct-2d-lowdose scan), where the
// quadratic prior lost to FDK: the session's default for a noisy scan (TV, λ from the counts,
// started from FDK) beats FDK with no λ given. Measured (H100 and CPU alike, 60 iterations):
// +1.0 dB at both doses; asserted: +0.4 dB and 0.5 points less error.
TEST(CtIterative, DefaultBeatsFdkAtNormalDose) {
    for (double photons : {2e3, 1e4}) {
        CtCase c = ctDemoCase("ct-2d-lowdose");
        c.photons = photons;
        auto data = std::make_shared<const CtData>(simulate(c));
        CtSession session(createCpuBackend(Precision::Single), data);
        Monitor monitor;
        const CtResult f = session.fdk({}, monitor);
        CtSolveOptions o;
        o.solver = CtSolver::Auto;
        o.iterative.prior = RegularizerKind::TotalVariation;
        o.iterative.auto_lambda = true;
        o.iterations = 60;
        const CtResult it = session.solve(o, monitor);
        const ComplexArray truth = test::toComplex(data->truth);
        const Quality fq = measureQuality(test::toComplex(f.image), truth, false);
        const Quality iq = measureQuality(test::toComplex(it.image), truth, false);
        std::printf("ct-2d-lowdose at %g photons: FDK %.2f dB / %.2f %%, %s: %.2f dB / %.2f %%\n", photons, fq.psnr_db,
                    fq.error_percent, it.description.c_str(), iq.psnr_db, iq.error_percent);
        EXPECT_GT(iq.psnr_db, fq.psnr_db + 0.4) << photons;
        EXPECT_LT(iq.error_percent, fq.error_percent - 0.5) << photons;
    }
}

}  // namespace
}  // namespace recon::ct
