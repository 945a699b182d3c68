// The CT session: cold solves repeat exactly, a warm λ change continues the resident
// solve to the cold solution, weights come from the counts, cancel stops FDK and CG.
#include <gtest/gtest.h>

#include <atomic>

#include "ct_test_support.hpp"
#include "recon/ct/phantom.hpp"
#include "recon/session/ct_session.hpp"

namespace recon {
namespace {

std::shared_ptr<const ct::CtData> smallNoisyScan() {
    auto d = std::make_shared<ct::CtData>();
    d->name = "small";
    d->geometry = ct::test::fanBeam(12, 20, 16);
    const ct::CtPhantom ball = ct::CtPhantom::ball(2, {1, 0, 0}, 4, 0.02);
    d->projections = ball.project(d->geometry, 3);
    d->photons = 1e4;
    d->counts = ct::addPoissonNoise(d->projections, d->photons, 4);
    d->truth = ball.voxelise(d->geometry.volume);
    return d;
}

double difference(const std::vector<double>& a, const std::vector<double>& b) { return ct::test::relativeError(a, b); }

TEST(CtSession, ColdSolvesRepeatAndWarmLambdaReachesTheColdSolution) {
    CtSession session(createCpuBackend(Precision::Double), smallNoisyScan());
    Monitor monitor;
    CtSolveOptions o;
    o.iterative = {RegularizerKind::FiniteDifference, 0.3};
    o.iterations = 15;
    const CtResult a = session.solve(o, monitor), b = session.solve(o, monitor);
    EXPECT_EQ(a.image, b.image);
    EXPECT_FALSE(b.warm_started);
    EXPECT_NE(a.description.find("W = counts"), std::string::npos) << a.description;

    o.iterative.lambda = 0.01;
    o.warm_start = true;
    o.iterations = 400;
    o.tolerance = 1e-12;
    const CtResult warm = session.solve(o, monitor);
    EXPECT_TRUE(warm.warm_started);
    o.warm_start = false;
    const CtResult cold = session.solve(o, monitor);
    EXPECT_LT(difference(warm.image, cold.image), 1e-8);
    EXPECT_TRUE(warm.history.back().has_truth);

    o.weighted = false;  // the identity: another problem, another solution
    const CtResult unweighted = session.solve(o, monitor);
    EXPECT_NE(unweighted.description.find("W = I"), std::string::npos);
    EXPECT_GT(difference(unweighted.image, cold.image), 1e-6);
}

TEST(CtSession, CancelStopsFdkAndTheIterations) {
    CtSession session(createCpuBackend(Precision::Single), smallNoisyScan());
    std::atomic<bool> cancel{true};
    Monitor cancelled(&cancel);
    EXPECT_THROW(session.fdk({}, cancelled), Cancelled);
    CtSolveOptions o;
    const CtResult r = session.solve(o, cancelled);
    EXPECT_TRUE(r.cancelled);
    EXPECT_LT(r.history.size(), 2u);
}

}  // namespace
}  // namespace recon
