// The Toeplitz operator, CG, gridding and density compensation on the GPU
// against float64 references: the normal operator applied term by term, the CPU
// backend's solver and NUFFT (the reference engine).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/operators/regularizer.hpp"

using namespace recon;
using namespace recon::test;

namespace {


std::vector<double> positiveWeights(std::size_t m) {
    std::vector<double> w(m);
    for (std::size_t i = 0; i < m; ++i) w[i] = 0.5 + double(i % 5) * 0.25;
    return w;
}

// F^H diag(w) F x, term by term in float64.
ComplexArray normalOperator(const Trajectory& t, const std::vector<double>& w, const Grid& g, const ComplexArray& x) {
    ComplexArray fx = bruteForward(t, x, SampleGrid::image(g));
    for (std::size_t m = 0; m < fx.size(); ++m) fx[m] *= w[m];
    return bruteAdjoint(t, fx, SampleGrid::image(g));
}

void checkToeplitz(const Grid& g, Precision p, const std::string& method, double tol) {
    const Trajectory t = randomTrajectory(g, 433, 17);
    const auto w = positiveWeights(t.samples());
    auto backend = gpu(p);  // outlives the operators made on it
    auto tk = backend->makeToeplitz(g, t, w, {method, p == Precision::Single ? 1e-6 : 1e-10});
    const ComplexArray x = randomComplex(g.voxels(), 3);
    const ComplexArray y = applyForward(*tk, x);
    EXPECT_LT(relativeError(y, normalOperator(t, w, g, x)), tol) << g.describe() << " " << method;
    // Q comes back from the spectrum it was turned into.
    ComplexArray wc(w.begin(), w.end());
    EXPECT_LT(relativeError(tk->q(), bruteAdjoint(t, wc, SampleGrid::differences(g))), tol);
}

TEST(CudaToeplitz, MatchesNormalOperator3D) {
    for (auto p : {Precision::Single, Precision::Double})
        for (const char* m : {"exact-fast", "nufft", "tune"})
            checkToeplitz(Grid::make3D(7, 6, 5), p, m, p == Precision::Single ? 1e-4 : (std::string(m) == "nufft" ? 1e-8 : 1e-9));
}

TEST(CudaToeplitz, MatchesNormalOperator2D) {
    for (auto p : {Precision::Single, Precision::Double})
        checkToeplitz(Grid::make2D(11, 8), p, "direct", p == Precision::Single ? 1e-4 : 1e-9);
}

// CG on the device takes the same steps as the CPU backend's float64 solver
// (same algorithm, same Q): the iterates and the reported scalars agree to
// rounding. This problem is ill-conditioned (clustered samples), so float32 CG on
// any backend (the CPU's too) departs from float64 after ~5 iterations: float32
// is compared over the first 4.
void checkSolver(Precision p, int iterations, double tol) {
    const Grid g = Grid::make3D(10, 9, 8);
    const Trajectory t = randomTrajectory(g, 1500, 5);
    const auto w = positiveWeights(t.samples());
    const ComplexArray truth = randomComplex(g.voxels(), 8);
    ComplexArray d;
    auto cpu = createCpuBackend(Precision::Double);
    cpu->forwardSum(t, truth, SampleGrid::image(g), d, {"direct"});
    double dnorm2 = 0;
    for (auto& v : d) dnorm2 += std::norm(v);
    ComplexArray rhs;
    cpu->adjointSum(t, d, SampleGrid::image(g), rhs, {"direct"});
    auto reg = std::make_shared<Regularizer>(makeRegularizer(RegularizerKind::FiniteDifference, g));
    std::vector<double> ones(t.samples(), 1.0);

    auto dev = gpu(p);
    const double weight = 0.01 * double(t.samples());
    auto gs = toeplitzCg(*dev, t, dev->makeToeplitz(g, t, ones, {"exact-fast"}), rhs, dnorm2, reg.get(), weight);
    auto cs = toeplitzCg(*cpu, t, cpu->makeToeplitz(g, t, ones, {"direct"}), rhs, dnorm2, reg.get(), weight);
    gs->setTruth(truth);
    cs->setTruth(truth);
    for (int it = 0; it < iterations; ++it) {
        ASSERT_TRUE(gs->step());
        ASSERT_TRUE(cs->step());
        const auto a = gs->record(), b = cs->record();
        EXPECT_EQ(a.iteration, b.iteration);
        EXPECT_NEAR(a.residual, b.residual, tol * 10 + 1e-3 * b.residual) << "iteration " << it;
        EXPECT_NEAR(a.data_term + a.penalty_term, b.data_term + b.penalty_term, 1e-3 * (b.data_term + b.penalty_term) + 1e-9);
        EXPECT_TRUE(a.has_truth);
        EXPECT_NEAR(a.error_percent, b.error_percent, 1e-2 * b.error_percent + 1e-6);
    }
    ComplexArray xg, xc;
    gs->image(xg);
    cs->image(xc);
    EXPECT_LT(relativeError(xg, xc), tol);
    // A weight (lambda) change restarts from the current iterate on both, nothing rebuilt.
    gs->setWeight(1, 10 * weight);
    cs->setWeight(1, 10 * weight);
    for (int it = 0; it < (p == Precision::Single ? 1 : 3); ++it) {
        gs->step();
        cs->step();
    }
    gs->image(xg);
    cs->image(xc);
    EXPECT_LT(relativeError(xg, xc), tol);
    EXPECT_NEAR(gs->record().penalty_term, cs->record().penalty_term, 1e-3 * cs->record().penalty_term + 1e-9);
}

TEST(CudaSolver, FollowsTheCpuSolverFloat32) { checkSolver(Precision::Single, 4, 1e-3); }
TEST(CudaSolver, FollowsTheCpuSolverFloat64) { checkSolver(Precision::Double, 8, 1e-7); }

TEST(CudaSolver, WarmStartAndToeplitzFromAnotherBackend) {
    const Grid g = Grid::make2D(12, 10);
    const Trajectory t = randomTrajectory(g, 400, 2);
    std::vector<double> ones(t.samples(), 1.0);
    auto cpu = createCpuBackend(Precision::Double);
    auto dev = gpu(Precision::Single);
    const ComplexArray rhs = randomComplex(g.voxels(), 4), x0 = randomComplex(g.voxels(), 6);
    auto cpuKernel = cpu->makeToeplitz(g, t, ones, {"direct"});
    auto gs = toeplitzCg(*dev, t, dev->toeplitzFromQ(g, cpuKernel->q()), rhs, 1.0);  // rebuilt on the device from its Q
    auto cs = toeplitzCg(*cpu, t, cpuKernel, rhs, 1.0);
    gs->setInitial(x0);
    cs->setInitial(x0);
    ComplexArray a, b;
    gs->image(a);
    EXPECT_LT(relativeError(a, x0), 1e-6);  // iteration 0 is the warm start
    for (int i = 0; i < 5; ++i) {
        gs->step();
        cs->step();
    }
    gs->image(a);
    cs->image(b);
    EXPECT_LT(relativeError(a, b), 1e-3);
}

void checkGridding(const GriddingOptions& o, const Grid& g) {
    const Trajectory t = randomTrajectory(g, 900, 9);
    const ComplexArray c = randomComplex(t.samples(), 1);
    NufftPlan<double> ref(t, SampleGrid::image(g), griddingKernel(o), o.deapodize);
    std::vector<cdouble> expect(g.voxels());
    ref.adjoint(c.data(), expect.data());
    for (auto p : {Precision::Single, Precision::Double}) {
        ComplexArray img;
        auto backend = gpu(p);
        backend->grid(t, c, g, o, img);
        EXPECT_LT(relativeError(img, ComplexArray(expect.begin(), expect.end())), p == Precision::Single ? 1e-5 : 1e-12)
            << g.describe();
    }
}

TEST(CudaGridding, KaiserBesselMatchesCpu) {
    checkGridding(kaiserBesselGridding(2.0, 4), Grid::make3D(10, 12, 9));
    checkGridding(kaiserBesselGridding(1.5, 5), Grid::make2D(15, 14));
}

TEST(CudaGridding, TrilinearMatchesCpu) {
    checkGridding(trilinearGridding(), Grid::make3D(8, 10, 6));
    checkGridding(trilinearGridding(), Grid::make2D(16, 12));
}

// The device's weights (float64, a spread-and-interpolate plan without cuFFT) against the CPU's, sample by sample.
void checkDensityCompensation(const Grid& g, std::size_t samples, int iterations) {
    const Trajectory t = randomTrajectory(g, samples, 4);
    const auto o = kaiserBesselGridding(2.0, 4);
    const auto ref = createCpuBackend(Precision::Double)->densityCompensation(t, g, o, iterations);
    const auto got = gpu(Precision::Single)->densityCompensation(t, g, o, iterations);
    ASSERT_EQ(got.size(), ref.size());
    double num = 0, den = 0, worst = 0;
    for (std::size_t m = 0; m < ref.size(); ++m) {
        ASSERT_GT(ref[m], 0) << "sample " << m;
        num += (got[m] - ref[m]) * (got[m] - ref[m]);
        den += ref[m] * ref[m];
        worst = std::max(worst, std::abs(got[m] - ref[m]) / ref[m]);
    }
    EXPECT_LT(std::sqrt(num / den), 1e-9);
    EXPECT_LT(worst, 1e-9);
}

TEST(CudaGridding, DensityCompensationMatchesCpu) { checkDensityCompensation(Grid::make2D(24, 24), 1200, 5); }

// Jackson's weights (one Pipe-Menon step: what the density-weighted data term uses), in 3D.
TEST(CudaGridding, JacksonWeightsMatchCpu3D) { checkDensityCompensation(Grid::make3D(12, 10, 14), 3000, 1); }

}  // namespace
