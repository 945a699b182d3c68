// The CT phantom: exact chords against brute-force integration of its values,
// the voxelised truth, Poisson noise.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "ct_test_support.hpp"
#include "recon/ct/phantom.hpp"

namespace recon::ct {
namespace {

TEST(CtPhantom, BallChordIsTwiceTheRadiusThroughTheCentre) {
    const CtPhantom ball = CtPhantom::ball(3, {5, -3, 2}, 20, 0.02);
    EXPECT_NEAR(ball.lineIntegral({5, -3, 2}, {1, 2, 3}), 0.02 * 40, 1e-12);
    // A line at distance 12 from the centre: chord 2 sqrt(20^2 - 12^2) = 32.
    EXPECT_NEAR(ball.lineIntegral({5, 9, 2}, {0, 0, -4}), 0.02 * 32, 1e-12);
    EXPECT_EQ(ball.lineIntegral({5, 30, 2}, {1, 0, 0}), 0.0);
}

// Every part's chord, summed, equals the integral of value() along the line (fine Riemann sum).
TEST(CtPhantom, SheppLoganLineIntegralsMatchIntegratedValues) {
    for (int dims : {2, 3}) {
        VolumeGeometry vol;
        vol.size = {128, 128, dims == 3 ? 128 : 1};
        const CtPhantom sl = CtPhantom::sheppLogan(vol);
        const std::array<double, 3> point{3.1, -7.3, dims == 3 ? -20.0 : 0.0};
        const std::array<double, 3> dir{std::cos(0.4), std::sin(0.4), dims == 3 ? 0.15 : 0.0};
        const double norm = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
        const double step = 1e-3;  // mm
        double brute = 0;
        for (double t = -200; t < 200; t += step)
            brute += sl.value(point[0] + t * dir[0] / norm, point[1] + t * dir[1] / norm, point[2] + t * dir[2] / norm) * step;
        const double exact = sl.lineIntegral(point, dir);
        EXPECT_GT(exact, 1.0) << dims << "D";
        EXPECT_NEAR(exact, brute, 2e-4 * exact) << dims << "D";
    }
}

TEST(CtPhantom, SheppLoganFillsTheVolumeWithWaterLikeAttenuation) {
    VolumeGeometry vol;
    vol.size = {64, 64, 1};
    vol.voxel_mm = {2, 2, 1};
    const CtPhantom sl = CtPhantom::sheppLogan(vol);
    EXPECT_NEAR(sl.value(0, -32, 0), 0.02, 1e-12);         // brain matter: water
    EXPECT_NEAR(sl.value(0, 0.46 * 128 - 1, 0), 0.1, 1e-12);  // the skull, just inside its edge
    EXPECT_EQ(sl.value(0, 0.46 * 128 + 1, 0), 0.0);
    const std::vector<double> truth = sl.voxelise(vol);
    EXPECT_NEAR(*std::max_element(truth.begin(), truth.end()), 0.1, 1e-12);
}

TEST(CtPhantom, ProjectionAveragesRaysOverThePixel) {
    CtGeometry g = test::fanBeam(64, 96, 4);
    const CtPhantom ball = CtPhantom::ball(2, {0, 0, 0}, 20, 0.02);
    const std::vector<double> one = ball.project(g, 1), many = ball.project(g, 4);
    // The central pixel (one of the two in the middle of an even detector): centre ray vs mean.
    const Ray r = rayThrough(g.beam, 0, g.beam.pixelU(48), 0);
    EXPECT_NEAR(one[48], ball.lineIntegral(r.source, r.direction), 1e-12);
    double mean = 0;
    for (int a = 0; a < 4; ++a) {
        const Ray s = rayThrough(g.beam, 0, g.beam.pixelU(48) + ((a + 0.5) / 4 - 0.5) * g.beam.pixel_u_mm, 0);
        mean += ball.lineIntegral(s.source, s.direction) / 4;
    }
    EXPECT_NEAR(many[48], mean, 1e-12);
}

TEST(CtPhantom, PoissonNoiseIsUnbiasedAndSeeded) {
    const double p = 2.0, photons = 1e5;
    std::vector<double> a(20000, p), b(20000, p);
    const std::vector<double> counts = addPoissonNoise(a, photons, 7);
    addPoissonNoise(b, photons, 7);
    EXPECT_EQ(a, b);
    const double mean = std::accumulate(a.begin(), a.end(), 0.0) / a.size();
    double var = 0;
    for (double x : a) var += (x - mean) * (x - mean);
    var /= a.size() - 1;
    // -log(N/I0) with N ~ Poisson(I0 e^-p): mean p (bias 1/(2 I0 e^-p) ~ 4e-5), variance 1/(I0 e^-p).
    const double expected_var = 1.0 / (photons * std::exp(-p));
    EXPECT_NEAR(mean, p, 5 * std::sqrt(expected_var / a.size()) + 1e-4);
    EXPECT_NEAR(var, expected_var, 0.05 * expected_var);
    EXPECT_NEAR(counts[0], photons * std::exp(-a[0]), 1e-6 * counts[0]);
    // A pixel that sees nothing keeps one count.
    std::vector<double> dark(10, 50.0);
    addPoissonNoise(dark, 100, 1);
    for (double x : dark) EXPECT_NEAR(x, std::log(100.0), 1e-12);
    EXPECT_THROW(addPoissonNoise(dark, 0, 1), InputError);
}

}  // namespace
}  // namespace recon::ct
