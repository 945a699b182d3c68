#include <gtest/gtest.h>
#include <cmath>

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

namespace {
// Ratio of each sample's weight to the first spoke's sample j's, to compare shapes whatever the scale.
double weightRatio(const std::vector<double>& w, std::size_t a, std::size_t b) { return w[a] / w[b]; }
}  // namespace

// Each sample weighs the radial density |s|^(d-1) times its cell along the spoke (unit spacing at
// half-sample offsets here: r in 2D, r^2 in 3D), and the weights add up to the volume of the ball the
// cells reach (radius n/2). A sample at k = 0 weighs its cell's exact share instead of 0.
TEST(Trajectories, RadialDensityWeightsFollowTheSpokes) {
    const std::vector<double> w3 = radialDensityWeights(radial3D(16, 40, 16), 3);
    const std::vector<double> w2 = radialDensityWeights(goldenAngleRadial2D(16, 30, 16), 2);
    double sum3 = 0, sum2 = 0;
    for (double v : w3) sum3 += v;
    for (double v : w2) sum2 += v;
    EXPECT_NEAR(sum3, 4.0 / 3.0 * kPi * 512, 1e-9 * sum3);
    EXPECT_NEAR(sum2, kPi * 64, 1e-9 * sum2);
    for (int j = 0; j < 16; ++j) {
        const double r = std::abs(j - 7.5), rOuter = 7.5;  // sample 15 sits at +7.5
        EXPECT_NEAR(weightRatio(w3, j, 15), r * r / (rOuter * rOuter), 1e-12) << j;
        EXPECT_NEAR(weightRatio(w2, j, 15), r / rOuter, 1e-12) << j;
        EXPECT_NEAR(w3[j], w3[16 * 39 + j], 1e-12 * w3[j]);  // every spoke alike
    }

    // Spokes through k = 0 (odd readouts): the centre sample's cell |s| < 1/2 weighs
    // the integral of |s|^(d-1) over it, 1/4 in 2D and 1/12 in 3D, against 1 at |s| = 1.
    for (int dims : {2, 3}) {
        Trajectory odd;
        odd.dims = dims;
        odd.readout_length = 5;
        for (int i = 0; i < 4; ++i)
            for (int j = -2; j <= 2; ++j)
                odd.k.insert(odd.k.end(), {j * std::cos(kPi * i / 4), j * std::sin(kPi * i / 4), 0.0});
        const std::vector<double> wo = radialDensityWeights(odd, dims);
        EXPECT_NEAR(weightRatio(wo, 2, 3), dims == 2 ? 0.25 : 1.0 / 12, 1e-12) << dims;
        EXPECT_NEAR(weightRatio(wo, 4, 3), dims == 2 ? 2.0 : 4.0, 1e-12) << dims;  // the end: [3/2, 5/2]
        EXPECT_NEAR(weightRatio(wo, 0, 4), 1.0, 1e-12) << dims;
    }

    // A half spoke from the centre outwards covers its own side only: its first cell is [0, 1/2].
    Trajectory outward;
    outward.dims = 3;
    outward.readout_length = 4;
    for (int j = 0; j < 4; ++j) outward.k.insert(outward.k.end(), {0.0, 0.0, double(j)});
    const std::vector<double> wh = radialDensityWeights(outward, 3);
    EXPECT_NEAR(weightRatio(wh, 0, 1), 0.125 / 3, 1e-12);
    EXPECT_NEAR(weightRatio(wh, 2, 1), 4.0, 1e-12);

    // Unequal spacing along the spoke (samples on the gradient's ramp, as in UTE): each weight is the
    // density times its own cell, so wider cells weigh more. Positions 1/2, 3/2, 5/2, 9/2, 13/2.
    Trajectory ramped;
    ramped.dims = 2;
    ramped.readout_length = 5;
    for (double s : {0.5, 1.5, 2.5, 4.5, 6.5}) ramped.k.insert(ramped.k.end(), {s, 0.0, 0.0});
    const std::vector<double> wr = radialDensityWeights(ramped, 2);
    EXPECT_NEAR(weightRatio(wr, 2, 1), 2.5 * 1.5 / 1.5, 1e-12);  // [2, 7/2] against [1, 2]
    EXPECT_NEAR(weightRatio(wr, 3, 1), 4.5 * 2.0 / 1.5, 1e-12);  // [7/2, 11/2]
    EXPECT_NEAR(weightRatio(wr, 4, 1), 6.5 * 2.0 / 1.5, 1e-12);  // the end: [11/2, 15/2]

    // No spokes to follow (readout length unknown): |k|^(d-1), scaled to the ball the samples reach.
    Trajectory unknown = goldenAngleRadial2D(16, 30, 16);
    unknown.readout_length = 0;
    const std::vector<double> wu = radialDensityWeights(unknown, 2);
    double sumu = 0;
    for (double v : wu) sumu += v;
    EXPECT_NEAR(sumu, kPi * 7.5 * 7.5, 1e-9 * sumu);
    EXPECT_NEAR(weightRatio(wu, 0, 15), 1.0, 1e-12);
    EXPECT_NEAR(weightRatio(wu, 8, 15), 0.5 / 7.5, 1e-12);
}
