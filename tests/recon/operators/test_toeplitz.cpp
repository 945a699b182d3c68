// F^H F through Q and the Toeplitz embedding equals F^H (F x).
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"

using namespace recon;
using namespace recon::test;

namespace {

void checkToeplitz(const Grid& grid, const std::string& method, double tol) {
    auto backend = createCpuBackend(Precision::Double);
    const Trajectory t = randomTrajectory(grid, 200, 21);
    std::vector<double> w(t.samples());
    for (std::size_t m = 0; m < w.size(); ++m) w[m] = 0.5 + double(m % 3);  // |phi|^2-like positive weights
    auto tk = backend->makeToeplitz(grid, t, w, {method, 1e-10});
    const ComplexArray x = randomComplex(grid.voxels(), 4);
    ComplexArray fx, ref, y;
    backend->forwardSum(t, x, SampleGrid::image(grid), fx, {"direct"});
    for (std::size_t m = 0; m < fx.size(); ++m) fx[m] *= w[m];
    backend->adjointSum(t, fx, SampleGrid::image(grid), ref, {"direct"});
    y = applyForward(*tk, x);
    EXPECT_LT(relativeError(y, ref), tol) << grid.describe() << " " << method;
}

TEST(Toeplitz, MatchesNormalOperator2D) { checkToeplitz(Grid::make2D(9, 6), "direct", 1e-10); }
TEST(Toeplitz, MatchesNormalOperator3D) { checkToeplitz(Grid::make3D(5, 7, 4), "direct", 1e-10); }
TEST(Toeplitz, MatchesNormalOperatorWithNufftQ) { checkToeplitz(Grid::make3D(8, 6, 5), "nufft", 1e-8); }

TEST(Toeplitz, QRoundTripsAndIsHermitianSymmetric) {
    auto backend = createCpuBackend(Precision::Double);
    const Grid grid = Grid::make2D(6, 5);
    const Trajectory t = randomTrajectory(grid, 50, 3);
    std::vector<double> w(t.samples(), 1.0);
    auto tk = backend->makeToeplitz(grid, t, w, {"direct"});
    const ComplexArray q = tk->q();
    ComplexArray direct;
    ComplexArray ones(t.samples(), 1.0);
    backend->adjointSum(t, ones, SampleGrid::differences(grid), direct, {"direct"});
    // The entries at difference -N on an axis are outside the product's reach and kept as
    // zero (the circulant embedding is then Hermitian, its spectrum real).
    const Grid big = grid.doubled();
    for (int y = 0; y < big.n[1]; ++y)
        for (int x = 0; x < big.n[0]; ++x)
            if (x == 0 || y == 0) {
                EXPECT_EQ(q[big.index(x, y, 0)], cdouble(0)) << x << "," << y;
                direct[big.index(x, y, 0)] = 0;
            }
    EXPECT_LT(relativeError(q, direct), 1e-12);
    // Q(0) = sum of weights = M, at index (N_x, N_y) of the 2N grid.
    EXPECT_NEAR(q[std::size_t(grid.n[1]) * 2 * grid.n[0] + grid.n[0]].real(), double(t.samples()), 1e-9);
}

TEST(Toeplitz, SinglePrecisionWithinFloatRounding) {
    auto sp = createCpuBackend(Precision::Single), dp = createCpuBackend(Precision::Double);
    const Grid grid = Grid::make3D(10, 9, 8);
    const Trajectory t = randomTrajectory(grid, 400, 5);
    std::vector<double> w(t.samples(), 1.0);
    const ComplexArray x = randomComplex(grid.voxels(), 6);
    ComplexArray ys, yd;
    ys = applyForward(*sp->makeToeplitz(grid, t, w, {"nufft", 1e-6}), x);
    yd = applyForward(*dp->makeToeplitz(grid, t, w, {"direct"}), x);
    EXPECT_LT(relativeError(ys, yd), 1e-5);
}

}  // namespace
