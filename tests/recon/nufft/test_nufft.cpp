// The NUFFT against the exact sums: the requested tolerance is met, for both
// directions, on image and difference grids, 2D and 3D, odd sizes.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"
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

TEST(SpreadKernel, BeattyBetaForSigma2Width4) {
    // beta = pi sqrt(W^2/sigma^2 (sigma - 1/2)^2 - 0.8) = pi sqrt(4 * 2.25 - 0.8)
    EXPECT_NEAR(SpreadKernel::kaiserBessel(2.0, 4).beta, kPi * std::sqrt(4 * 2.25 - 0.8), 1e-12);
    EXPECT_EQ(SpreadKernel::forTolerance(1e-6).width, 8);
    EXPECT_EQ(oversampledLength(64, 2.0), 128);
    EXPECT_EQ(oversampledLength(7, 2.0), 16);
}

}  // namespace
