#include <gtest/gtest.h>

#include "recon/core/conventions.hpp"
#include "recon/trajectory/trajectories.hpp"

using namespace recon;

TEST(Trajectories, EveryKindStaysInTheBandWithTheRequestedCounts) {
    for (auto kind : {TrajectoryKind::Radial3D, TrajectoryKind::StackOfSpirals, TrajectoryKind::GoldenAngleRadial2D,
                      TrajectoryKind::Spiral2D}) {
        TrajectorySpec s;
        s.kind = kind;
        s.n = 32;
        s.readouts = 10;
        const Trajectory t = makeTrajectory(s);
        const Grid g = Grid::cube(dimsOf(kind), 32);
        std::string why;
        EXPECT_TRUE(trajectoryInBand(g, t, &why)) << toString(kind) << ": " << why;
        EXPECT_EQ(t.dims, g.dims);
        EXPECT_EQ(t.samples() % std::size_t(t.readout_length), 0u);
        const std::size_t expected_readouts = kind == TrajectoryKind::StackOfSpirals ? 10u * 32u : 10u;
        EXPECT_EQ(t.readouts(), expected_readouts) << toString(kind);
    }
}

TEST(Trajectories, RadialSpokesAreSymmetricAndSkipTheCentre) {
    const Trajectory t = radial3D(64, 5, 64);
    ASSERT_EQ(t.samples(), 320u);
    for (int s = 0; s < 5; ++s)
        for (int j = 0; j < 32; ++j) {
            const std::size_t a = std::size_t(s) * 64 + j, b = std::size_t(s) * 64 + 63 - j;
            for (int c = 0; c < 3; ++c) EXPECT_NEAR(t.k[3 * a + c], -t.k[3 * b + c], 1e-12);
        }
    // Radii run from 0.5 to 31.5 cycles/FOV.
    double r = std::sqrt(t.kx(0) * t.kx(0) + t.ky(0) * t.ky(0) + t.kz(0) * t.kz(0));
    EXPECT_NEAR(r, 31.5, 1e-12);
}

TEST(Trajectories, GoldenMeanDirectionsCoverTheHemisphereEvenly) {
    // The mean of cos(polar) over many spokes is 1/2 and of each x, y component is 0.
    const Trajectory t = radial3D(64, 2000, 2);
    double sx = 0, sy = 0, sz = 0;
    for (std::size_t s = 0; s < 2000; ++s) {
        const std::size_t m = 2 * s + 1;
        double r = std::sqrt(t.kx(m) * t.kx(m) + t.ky(m) * t.ky(m) + t.kz(m) * t.kz(m));
        sx += t.kx(m) / r;
        sy += t.ky(m) / r;
        sz += t.kz(m) / r;
    }
    EXPECT_NEAR(sx / 2000, 0.0, 0.01);
    EXPECT_NEAR(sy / 2000, 0.0, 0.01);
    EXPECT_NEAR(sz / 2000, 0.5, 0.01);
}

TEST(Trajectories, GoldenAngleIncrement) {
    const Trajectory t = goldenAngleRadial2D(32, 3, 32);
    const double a0 = std::atan2(t.ky(31), t.kx(31)), a1 = std::atan2(t.ky(63), t.kx(63));
    double d = std::fmod(a1 - a0 + 4 * kPi, 2 * kPi);
    EXPECT_NEAR(d * 180 / kPi, 111.246117975, 1e-6);
}

TEST(Trajectories, SpiralIsDenserAtTheCentre) {
    const Trajectory t = variableDensitySpiral2D(64, 8, 0, 1.5);
    std::size_t inner = 0, outer = 0;
    for (std::size_t m = 0; m < t.samples(); ++m) {
        double r = std::hypot(t.kx(m), t.ky(m));
        if (r < 8) ++inner;
        else if (r > 24 && r < 32) ++outer;
    }
    // Area of the outer ring is 7x the inner disc's; a uniform density would give outer ~ 7x inner.
    EXPECT_GT(double(inner) / 64.0, double(outer) / (7.0 * 64.0));
}

TEST(Trajectories, BadParametersAreRejected) {
    EXPECT_THROW(radial3D(64, 0, 64), std::exception);
    EXPECT_THROW(parseTrajectoryKind("zigzag"), std::exception);
}

TEST(Trajectories, RadialUndersamplingCountsSpokesAgainstNyquist) {
    EXPECT_NEAR(radialUndersampling(goldenAngleRadial2D(128, 201, 128), Grid::make2D(128, 128)), kPi * 64 / 201, 1e-12);
    EXPECT_NEAR(radialUndersampling(radial3D(64, 1024, 64), Grid::cube(3, 64)), kPi * 64 * 64 / 2 / 1024, 1e-12);
    // Half spokes (centre outwards) count half.
    Trajectory half = goldenAngleRadial2D(32, 10, 32);
    Trajectory outward = half;
    outward.readout_length = 16;
    outward.k.clear();
    for (std::size_t m = 0; m < half.samples(); ++m)
        if (m % 32 >= 16) outward.k.insert(outward.k.end(), {half.kx(m), half.ky(m), half.kz(m)});  // the +k half
    ASSERT_EQ(outward.samples(), 160u);
    EXPECT_NEAR(radialUndersampling(outward, Grid::make2D(32, 32)), 2 * kPi * 16 / 10, 1e-12);
    // Not spokes through the centre, or no readout structure: 0.
    TrajectorySpec spiral;
    spiral.kind = TrajectoryKind::Spiral2D;
    spiral.n = 32;
    spiral.readouts = 8;
    EXPECT_EQ(radialUndersampling(makeTrajectory(spiral), Grid::make2D(32, 32)), 0);
    Trajectory unknown = half;
    unknown.readout_length = 0;
    EXPECT_EQ(radialUndersampling(unknown, Grid::make2D(32, 32)), 0);
}
