// The NUFFT against the exact sums: the requested tolerance is met, for both
// directions, on image and difference grids, 2D and 3D, odd sizes.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/gridding/gridding_options.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/nufft/spread_kernel.hpp"

using namespace recon;
using namespace recon::test;

namespace {

class NufftAccuracy : public ::testing::TestWithParam<std::tuple<Grid, double>> {};

TEST_P(NufftAccuracy, MeetsToleranceAgainstDirectSum) {
    const auto [grid, tol] = GetParam();
    auto backend = createCpuBackend(Precision::Double);
    const Trajectory t = randomTrajectory(grid, 300, 5);
    for (const SampleGrid& g : {SampleGrid::image(grid), SampleGrid::differences(grid)}) {
        const ComplexArray c = randomComplex(t.samples(), 8);
        ComplexArray exact, approx;
        backend->adjointSum(t, c, g, exact, {"direct"});
        backend->adjointSum(t, c, g, approx, {"nufft", tol});
        EXPECT_LT(relativeError(approx, exact), tol) << "adjoint, grid " << g.size[0] << "x" << g.size[1] << "x" << g.size[2];

        const ComplexArray f = randomComplex(g.points(), 9);
        backend->forwardSum(t, f, g, exact, {"direct"});
        backend->forwardSum(t, f, g, approx, {"nufft", tol});
        EXPECT_LT(relativeError(approx, exact), tol) << "forward";
    }
}

INSTANTIATE_TEST_SUITE_P(SizesAndTolerances, NufftAccuracy,
                         ::testing::Combine(::testing::Values(Grid::make2D(15, 12), Grid::make3D(9, 10, 7)),
                                            ::testing::Values(1e-3, 1e-6, 1e-9)));

TEST(NufftSingle, FloatReachesTheFloatFloor) {
    const Grid grid = Grid::make3D(12, 11, 10);
    auto dp = createCpuBackend(Precision::Double), sp = createCpuBackend(Precision::Single);
    const Trajectory t = randomTrajectory(grid, 500, 2);
    const ComplexArray c = randomComplex(t.samples(), 3);
    ComplexArray exact, approx;
    dp->adjointSum(t, c, SampleGrid::image(grid), exact, {"direct"});
    sp->adjointSum(t, c, SampleGrid::image(grid), approx, {"nufft", 1e-6});
    EXPECT_LT(relativeError(approx, exact), 1e-5);
}

TEST(SpreadKernel, DeapodisationMatchesDirectFourierSum) {
    // Psi_hat(t) by quadrature against a fine Riemann sum of the kernel.
    for (const SpreadKernel& k : {SpreadKernel::kaiserBessel(2.0, 4), SpreadKernel::expSemicircle(2.0, 7), SpreadKernel::linear()}) {
        const int S = 16, G = 32;
        const auto d = k.deapodization(S, G);
        for (int j = 0; j < S; ++j) {
            const double t = j - S / 2;
            double acc = 0;
            const int n = 200000;
            const double h = double(k.width) / n;
            for (int i = 0; i < n; ++i) {
                double s = -0.5 * k.width + (i + 0.5) * h;
                acc += k.value(s) * std::cos(2 * kPi * s * t / G) * h;
            }
            EXPECT_NEAR(d[j], acc, 1e-7 * std::max(1.0, std::abs(acc))) << k.describe() << " t=" << t;
        }
    }
}

// The spreading's batch evaluation (vectorised: its own exp, the Bessel series at a fixed length)
// against the one-value path, bit for bit, and against std::exp's kernel: every kernel kind,
// offsets inside and outside the support.
TEST(SpreadKernel, BatchValuesEqualSingleValuesAndStdExp) {
    for (const SpreadKernel& k : {SpreadKernel::forTolerance(1e-3, 1.5), SpreadKernel::forTolerance(1e-6, 2.0),
                                  SpreadKernel::kaiserBessel(2.0, 4), SpreadKernel::kaiserBessel(1.25, 6),
                                  SpreadKernel::kaiserBessel(2.0, 16), SpreadKernel::linear()}) {
        std::vector<double> z;
        for (int i = -4000; i <= 4000; ++i) z.push_back(0.55 * k.width * i / 3999.0);  // past both ends
        z.push_back(-0.5 * k.width);
        z.push_back(0.5 * k.width);
        std::vector<double> batch(z.size());
        k.values(z.data(), z.size(), batch.data());
        for (std::size_t i = 0; i < z.size(); ++i) {
            ASSERT_EQ(batch[i], k.value(z[i])) << k.describe() << " at " << z[i];
            if (k.kind != SpreadKernelKind::ExpSemicircle) continue;
            const double r = std::abs(z[i]) / (0.5 * k.width);
            const double reference = r >= 1 ? 0.0 : std::exp(k.beta * (std::sqrt(1 - r * r) - 1));
            EXPECT_LE(std::abs(batch[i] - reference), 3e-16 * reference) << k.describe() << " at " << z[i];
        }
    }
    for (double x = -700; x <= 0; x += 0.0137)
        ASSERT_LE(std::abs(expNonPositive(x) - std::exp(x)), 3e-16 * std::exp(x)) << x;
    EXPECT_EQ(expNonPositive(0.0), 1.0);
}

TEST(SpreadKernel, BeattyBetaForSigma2Width4) {
    // beta = pi sqrt(W^2/sigma^2 (sigma - 1/2)^2 - 0.8) = pi sqrt(4 * 2.25 - 0.8)
    EXPECT_NEAR(SpreadKernel::kaiserBessel(2.0, 4).beta, kPi * std::sqrt(4 * 2.25 - 0.8), 1e-12);
    EXPECT_EQ(SpreadKernel::forTolerance(1e-6).width, 8);
    EXPECT_EQ(oversampledLength(64, 2.0), 128);
    EXPECT_EQ(oversampledLength(7, 2.0), 16);
}

// The cancellable FFT (planes, then lines along the slowest axis, in batches) against
// FFTW's whole transform, on shapes whose batches do not divide the axes.
TEST(Fft, CancellableExecuteMatchesTheWholeTransform) {
    const std::atomic<bool> go{false};
    Progress progress;
    progress.cancel = &go;
    for (auto [shape, dims] : {std::pair{std::array<int, 3>{160, 162, 170}, 3}, std::pair{std::array<int, 3>{2100, 2048, 1}, 2}})
        for (FftDirection dir : {FftDirection::Forward, FftDirection::Backward}) {
            FftPlan<double> plan(shape, dims, dir);
            ASSERT_GT(plan.size(), std::size_t(1) << 22) << "small enough to run as one transform";
            const ComplexArray input = randomComplex(plan.size(), 21);
            ComplexArray whole = input, batched = input;
            plan.execute(whole.data());
            plan.execute(batched.data(), progress);
            EXPECT_LT(relativeError(batched, whole), 1e-13) << dims << "D";
            EXPECT_GT(relativeError(batched, input), 0.5) << "nothing was transformed";
        }
}

TEST(Fft, CancelledTransformThrows) {
    const std::atomic<bool> stop{true};
    Progress progress;
    progress.cancel = &stop;
    FftPlan<float> big({256, 128, 160}, 3, FftDirection::Forward), small({16, 16, 1}, 2, FftDirection::Forward);
    std::vector<std::complex<float>> data(big.size());
    EXPECT_THROW(big.execute(data.data(), progress), Cancelled);
    EXPECT_THROW(small.execute(data.data(), progress), Cancelled);
    EXPECT_NO_THROW(big.execute(data.data()));
}

// Spreading and interpolation poll the cancel flag (Pipe-Menon's 20 rounds of both at 128^3
// otherwise run to the end after a Ctrl-C); without a cancel they are the adjoint pair.
TEST(Nufft, SpreadAndInterpolateHonourCancel) {
    const Grid grid = Grid::make3D(24, 20, 18);
    const Trajectory t = randomTrajectory(grid, 2000, 4);
    NufftPlan<double> plan(t, SampleGrid::image(grid), SpreadKernel::forTolerance(1e-6), false);
    const ComplexArray c = randomComplex(t.samples(), 5), g = randomComplex(plan.fineSize(), 6);
    ComplexArray fine(plan.fineSize()), back(t.samples());
    std::atomic<bool> flag{false};
    Progress progress;
    progress.cancel = &flag;
    plan.spread(c.data(), fine.data(), progress);
    plan.interpolate(g.data(), back.data(), progress);
    cdouble lhs = 0, rhs = 0;  // <spread c, g> = <c, interpolate g>
    for (std::size_t i = 0; i < fine.size(); ++i) lhs += std::conj(fine[i]) * g[i];
    for (std::size_t m = 0; m < c.size(); ++m) rhs += std::conj(c[m]) * back[m];
    EXPECT_LT(std::abs(lhs - rhs), 1e-10 * std::abs(rhs));
    flag = true;
    EXPECT_THROW(plan.spread(c.data(), fine.data(), progress), Cancelled);
    EXPECT_THROW(plan.interpolate(g.data(), back.data(), progress), Cancelled);
    ComplexArray image(grid.voxels());
    EXPECT_THROW(plan.adjoint(c.data(), image.data(), progress), Cancelled);
}

}  // namespace

namespace {

// Kept kernel weights (Pipe-Menon's repeated passes) change nothing: spreading and interpolation
// with and without them agree to rounding, in 2D and 3D.
TEST(Nufft, KeptKernelWeightsEqualTheDirectPasses) {
    for (const Grid& grid : {Grid::make2D(23, 16), Grid::make3D(12, 15, 10)}) {
        const Trajectory t = randomTrajectory(grid, 700, 8);
        const SpreadKernel kb = griddingKernel(kaiserBesselGridding());
        NufftPlan<double> direct(t, SampleGrid::image(grid), kb, false), kept(t, SampleGrid::image(grid), kb, false);
        kept.keepKernelWeights();
        const ComplexArray c = randomComplex(t.samples(), 9), g = randomComplex(direct.fineSize(), 10);
        ComplexArray f1(direct.fineSize()), f2(direct.fineSize()), b1(t.samples()), b2(t.samples());
        direct.spread(c.data(), f1.data());
        kept.spread(c.data(), f2.data());
        EXPECT_LT(relativeError(f2, f1), 1e-14) << grid.describe();
        direct.interpolate(g.data(), b1.data());
        kept.interpolate(g.data(), b2.data());
        EXPECT_LT(relativeError(b2, b1), 1e-14) << grid.describe();
    }
}

}  // namespace
