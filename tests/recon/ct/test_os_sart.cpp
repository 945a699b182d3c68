// OS-SART for CT: SART's fixed point against a dense weighted least-squares solve (weights
// W / R, R the row sums), the subsets' layout, OS-SART on a fan beam of an analytic phantom
// against the truth and against plain SART, cancel through the runner, bad input named.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>

#include "ct_test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/ct/os_sart.hpp"
#include "recon/ct/phantom.hpp"
#include "recon/session/ct_session.hpp"

namespace recon::ct {
namespace {

ProjectorFactory projectorOf(Backend& backend) {
    return [&backend](const CtGeometry& g) { return backend.ctProjector(g, {}); };
}

struct SmallScan {
    CtGeometry g;
    std::vector<double> p, w;
    explicit SmallScan(CtGeometry geometry = test::fanBeam(8, 12, 10)) : g(std::move(geometry)) {
        p = CtPhantom::ball(2, {1, -0.5, 0}, 2.5, 0.02).project(g, 3);
        w.resize(p.size());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = 200.0 + 37.0 * (i % 5);  // counts
    }
    // M = (W / mean W) / R, R the row sums (0 where a ray misses the volume).
    std::vector<double> metric(const std::vector<double>& a) const {
        const std::size_t n = g.volume.voxels();
        double mean = 0;
        for (double x : w) mean += x / double(w.size());
        std::vector<double> m(p.size(), 0.0);
        for (std::size_t r = 0; r < p.size(); ++r) {
            double row_sum = 0;
            for (std::size_t i = 0; i < n; ++i) row_sum += a[r * n + i];
            if (row_sum > 0) m[r] = w[r] / mean / row_sum;
        }
        return m;
    }
    // argmin ||A x − p||²_M by a dense Cholesky solve.
    std::vector<double> dense() const {
        const int n = int(g.volume.voxels());
        const std::vector<double> a = test::denseProjector(g), mr = metric(a);
        std::vector<double> m(std::size_t(n) * n, 0.0), b(n, 0.0);
        for (std::size_t r = 0; r < p.size(); ++r)
            for (int i = 0; i < n; ++i) {
                b[i] += a[r * n + i] * mr[r] * p[r];
                for (int j = 0; j < n; ++j) m[i * n + j] += a[r * n + i] * mr[r] * a[r * n + j];
            }
        return test::denseSolve(m, b, n);
    }
    double cost(const std::vector<double>& x) const {
        const std::size_t n = g.volume.voxels();
        const std::vector<double> a = test::denseProjector(g), mr = metric(a);
        double c = 0;
        for (std::size_t r = 0; r < p.size(); ++r) {
            double ax = 0;
            for (std::size_t i = 0; i < n; ++i) ax += a[r * n + i] * x[i];
            c += mr[r] * (ax - p[r]) * (ax - p[r]);
        }
        return c;
    }
};

TEST(CtOsSart, SubsetsCoverEveryViewOnceAndAreVisitedFarApart) {
    std::vector<int> seen(45, 0);
    for (int k = 0; k < 7; ++k)
        for (std::size_t v : subsetViews(45, 7, k)) ++seen[v];
    for (int c : seen) EXPECT_EQ(c, 1);
    const std::vector<int> order = subsetOrder(10);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k < 10; ++k) EXPECT_EQ(sorted[k], k);
    for (std::size_t i = 1; i < order.size(); ++i) EXPECT_NE(std::abs(order[i] - order[i - 1]), 1) << i;
}

// One subset (SART) with statistical weights: the dense solution of min ||A x − p||²_{W/R} is a
// fixed point of one pass, and the passes from zero approach its cost. (The unpenalised
// problem is ill-conditioned: the iterate itself gets there far more slowly, as printed; what
// SART is used for is its early passes, not the limit.)
TEST(CtOsSart, SartFixedPointIsTheDenseWeightedLeastSquaresSolution) {
    const SmallScan s(test::fanBeam(6, 12, 20));
    const std::vector<double> ref = s.dense();
    auto backend = createCpuBackend(Precision::Double);
    OsSartCtOptions o;
    o.subsets = 1;
    o.sart.nonnegative = false;
    auto sart = makeOsSart(projectorOf(*backend), s.g, s.p, s.w, o);
    sart->setInitial(test::toComplex(ref));
    sart->step();
    ComplexArray x;
    sart->image(x);
    EXPECT_LT(test::relativeError(test::realPart(x), ref), 1e-10);

    sart->setInitial(ComplexArray(ref.size(), 0.0));
    Monitor monitor;
    RunOptions ro;
    ro.iterations = 100;
    const double error100 = test::relativeError(test::realPart(runIterations(*sart, ro, monitor).image), ref);
    ro.iterations = 900;
    const std::vector<double> x1000 = test::realPart(runIterations(*sart, ro, monitor).image);
    const double error1000 = test::relativeError(x1000, ref), excess = s.cost(x1000) / s.cost(ref) - 1;
    std::printf("SART, 6x6 fan beam, 20 views: distance to the dense WLS solution %.3f after 100 passes, %.3f after "
                "1000; cost %.2e above its minimum\n", error100, error1000, excess);
    EXPECT_LT(excess, 5e-3);
}

// Consistent data (made by the same projector): every subset's fixed point is the image, so
// OS-SART converges to it too; 5 subsets get there in fewer passes than SART.
TEST(CtOsSart, OrderedSubsetsReachConsistentDataFasterThanSart) {
    const CtGeometry g = test::fanBeam(16, 24, 30);
    const std::vector<double> truth = CtPhantom::ball(2, {1.5, -2, 0}, 5, 0.02).voxelise(g.volume);
    auto backend = createCpuBackend(Precision::Double);
    const ComplexArray p = applyForward(*backend->ctProjector(g, {}), test::toComplex(truth));
    auto error = [&](int subsets, int passes) {
        OsSartCtOptions o;
        o.subsets = subsets;
        auto sart = makeOsSart(projectorOf(*backend), g, test::realPart(p), {}, o);
        Monitor monitor;
        RunOptions ro;
        ro.iterations = passes;
        return test::relativeError(test::realPart(runIterations(*sart, ro, monitor).image), truth);
    };
    const double sart20 = error(1, 20), os20 = error(5, 20), os200 = error(5, 200);
    std::printf("consistent 16x16 disc, 30 views: SART 20 passes %.2f %%, OS-SART (5) 20 passes %.2f %%, 200 passes %.2f %%\n",
                100 * sart20, 100 * os20, 100 * os200);
    EXPECT_LT(os20, 0.7 * sart20);
    EXPECT_LT(os200, 0.6 * os20);
}

// Analytic line integrals of a disc (no inverse crime), 60 views: OS-SART's image against the
// voxelised truth, with its records (one per pass, falling data term, PSNR) and cancel.
TEST(CtOsSart, FanBeamDiscReachesAStatedError) {
    const CtGeometry g = test::fanBeam(32, 48, 60);
    const CtPhantom disc = CtPhantom::ball(2, {2, -3, 0}, 9, 0.02);
    const std::vector<double> p = disc.project(g, 3), truth = disc.voxelise(g.volume);
    auto backend = createCpuBackend(Precision::Single);
    OsSartCtOptions o;
    o.subsets = 10;
    auto sart = makeOsSart(projectorOf(*backend), g, p, {}, o);
    sart->setTruth(test::toComplex(truth));
    Monitor monitor;
    RunOptions ro;
    ro.iterations = 10;
    const RunResult r = runIterations(*sart, ro, monitor);
    ASSERT_EQ(r.history.size(), 10u);
    const double err = test::relativeError(test::realPart(r.image), truth);
    std::printf("disc 32x32, 60 views, OS-SART 10 subsets, 10 passes: %.2f %% error, %.2f dB\n", 100 * err,
                r.history.back().psnr_db);
    EXPECT_LT(err, 0.08);
    EXPECT_NEAR(r.history.back().error_percent, 100 * err, 1e-3 * 100 * err);
    EXPECT_LT(r.history.back().data_term, 0.05 * r.history.front().data_term);
    for (double v : test::realPart(r.image)) EXPECT_GE(v, 0.0);

    std::atomic<bool> cancel{true};
    Monitor cancelled(&cancel);
    EXPECT_TRUE(runIterations(*sart, ro, cancelled).cancelled());
}

TEST(CtOsSart, BadInputIsNamed) {
    const SmallScan s;
    auto backend = createCpuBackend(Precision::Single);
    OsSartCtOptions o;
    o.subsets = 11;  // 10 views
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, s.p, {}, o), InputError);
    o.subsets = 0;
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, s.p, {}, o), InputError);
    o.subsets = 2;
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, std::vector<double>(5), {}, o), InputError);
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, s.p, std::vector<double>(5), o), InputError);
    o.sart.relaxation = 2;
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, s.p, {}, o), InputError);
    o.sart.relaxation = 1;
    std::vector<double> negative = s.w;
    negative[3] = -1;
    EXPECT_THROW(makeOsSart(projectorOf(*backend), s.g, s.p, negative, o), InputError);
}

// The session's automatic choice: OS-SART for a noiseless scan, CG for one with counts; a warm
// start continues OS-SART's passes from the resident iterate.
TEST(CtOsSart, SessionChoosesOsSartForNoiselessScansAndContinuesWarm) {
    const SmallScan s(test::fanBeam(16, 24, 30));
    auto data = std::make_shared<CtData>();
    data->geometry = s.g;
    data->projections = s.p;
    data->truth = CtPhantom::ball(2, {1, -0.5, 0}, 2.5, 0.02).voxelise(s.g.volume);
    EXPECT_EQ(chooseCtSolver(CtSolver::Auto, *data), CtSolver::OsSart);
    EXPECT_EQ(chooseCtSolver(CtSolver::Cg, *data), CtSolver::Cg);
    CtData noisy = *data;
    noisy.counts = s.w;
    EXPECT_EQ(chooseCtSolver(CtSolver::Auto, noisy), CtSolver::Cg);

    CtSession session(createCpuBackend(Precision::Double), data);
    Monitor monitor;
    CtSolveOptions o;
    o.solver = CtSolver::Auto;
    o.iterations = 5;
    const CtResult first = session.solve(o, monitor);
    EXPECT_EQ(first.description.rfind("OS-SART, 10 subsets", 0), 0u) << first.description;
    ASSERT_EQ(first.history.size(), 5u);
    o.warm_start = true;
    const CtResult more = session.solve(o, monitor);
    EXPECT_TRUE(more.warm_started);
    EXPECT_EQ(more.history.back().iteration, 10);
    o.warm_start = false;
    o.iterations = 10;
    const CtResult cold = session.solve(o, monitor);
    EXPECT_FALSE(cold.warm_started);
    EXPECT_LT(test::relativeError(more.image, cold.image), 1e-12);
    EXPECT_THROW(parseCtSolver("sirt"), InputError);
}

}  // namespace
}  // namespace recon::ct
