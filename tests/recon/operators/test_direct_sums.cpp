// The exact sums against a long-double brute force, and the adjoint identity.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"

using namespace recon;
using namespace recon::test;

namespace {

struct Case {
    Grid grid;
    std::size_t samples;
};

class DirectSums : public ::testing::TestWithParam<std::tuple<Case, Precision>> {};

TEST_P(DirectSums, MatchBruteForceOnImageAndDifferenceGrids) {
    const auto [c, precision] = GetParam();
    auto backend = createCpuBackend(precision);
    const Trajectory t = randomTrajectory(c.grid, c.samples, 7);
    const double tol = precision == Precision::Double ? 1e-11 : 2e-5;
    for (const SampleGrid& g : {SampleGrid::image(c.grid), SampleGrid::differences(c.grid)}) {
        const ComplexArray coef = randomComplex(t.samples(), 1);
        ComplexArray out;
        backend->adjointSum(t, coef, g, out, {"direct"});
        EXPECT_LT(relativeError(out, bruteAdjoint(t, coef, g)), tol);

        const ComplexArray img = randomComplex(g.points(), 2);
        backend->forwardSum(t, img, g, out, {"direct"});
        EXPECT_LT(relativeError(out, bruteForward(t, img, g)), tol);
    }
}

TEST_P(DirectSums, AdjointIdentity) {
    const auto [c, precision] = GetParam();
    auto backend = createCpuBackend(precision);
    const Trajectory t = randomTrajectory(c.grid, c.samples, 11);
    const SampleGrid g = SampleGrid::image(c.grid);
    const ComplexArray x = randomComplex(g.points(), 3), y = randomComplex(t.samples(), 4);
    ComplexArray fx, fhy;
    backend->forwardSum(t, x, g, fx, {"direct"});
    backend->adjointSum(t, y, g, fhy, {"direct"});
    const cdouble lhs = inner(fx, y), rhs = inner(x, fhy);  // <F x, y> = <x, F^H y>
    const double tol = precision == Precision::Double ? 1e-12 : 1e-5;
    EXPECT_LT(std::abs(lhs - rhs) / std::abs(lhs), tol);
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, DirectSums,
    ::testing::Combine(::testing::Values(Case{Grid::make2D(7, 5), 37}, Case{Grid::make3D(5, 6, 3), 41},
                                         Case{Grid::make3D(8, 8, 8), 29}),
                       ::testing::Values(Precision::Single, Precision::Double)));

}  // namespace
