// The analytic transform against a Fourier sum of the finely sampled object.
#include <gtest/gtest.h>

#include "recon/core/conventions.hpp"
#include "recon/phantom/shepp_logan.hpp"

using namespace recon;

namespace {

// integral rho(x) exp(-i 2 pi k.x) dx by the midpoint rule on an n^d grid over [-1/2, 1/2)^d.
cdouble riemann(const Phantom& p, int n, double kx, double ky, double kz) {
    cdouble acc = 0;
    const double h = 1.0 / n;
    const int nz = p.dims() == 3 ? n : 1;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) {
                double px = -0.5 + (x + 0.5) * h, py = -0.5 + (y + 0.5) * h, pz = p.dims() == 3 ? -0.5 + (z + 0.5) * h : 0;
                double v = p.value(px, py, pz);
                if (v != 0) acc += v * std::polar(1.0, -2 * kPi * (kx * px + ky * py + kz * pz));
            }
    return acc * std::pow(h, p.dims());
}

}  // namespace

TEST(Phantom, TransformMatchesFineSampling2D) {
    const Phantom p = Phantom::sheppLogan2D();
    for (auto k : std::vector<std::array<double, 2>>{{0, 0}, {3, 0}, {0, -5.5}, {7.25, 4}, {-12, 9}}) {
        cdouble exact = p.transform(k[0], k[1]);
        cdouble fine = riemann(p, 2048, k[0], k[1], 0);
        EXPECT_LT(std::abs(exact - fine), 2e-3 * std::abs(p.transform(0, 0))) << k[0] << "," << k[1];
    }
}

TEST(Phantom, TransformMatchesFineSampling3D) {
    const Phantom p = Phantom::sheppLogan3D();
    for (auto k : std::vector<std::array<double, 3>>{{0, 0, 0}, {2, 0, 1}, {0, -3.5, 2}, {4, 2, -3}}) {
        cdouble exact = p.transform(k[0], k[1], k[2]);
        cdouble fine = riemann(p, 160, k[0], k[1], k[2]);
        EXPECT_LT(std::abs(exact - fine), 1e-2 * std::abs(p.transform(0, 0, 0))) << k[0] << "," << k[1] << "," << k[2];
    }
}

TEST(Phantom, DcEqualsTheIntegralOfTheObject) {
    // DC of the 2D phantom = sum A_i pi a_i b_i, in FOV units (semi-axes halved).
    const Phantom p = Phantom::sheppLogan2D();
    double dc = kPi * (1.0 * .69 * .92 - .8 * .6624 * .874 - .2 * .11 * .31 - .2 * .16 * .41 + .1 * .21 * .25 +
                       .1 * .046 * .046 * 2 + .1 * .046 * .023 + .1 * .023 * .023 + .1 * .023 * .046) / 4;
    EXPECT_NEAR(p.transform(0, 0).real(), dc, 1e-12);
}

TEST(Phantom, SubvoxelAveragedTruthIsTheVoxelMean) {
    const Phantom p = Phantom::sheppLogan2D();
    const Grid g = Grid::make2D(16, 16);
    const ComplexArray img = p.image(g, 8);
    // Centre voxel of the skull-free interior: 1 - 0.8 = 0.2 (grey matter).
    EXPECT_NEAR(img[g.index(8, 4, 0)].real(), 0.2, 1e-12);
    // Every value is a mean of phantom values, so it lies within their range.
    for (auto v : img) {
        EXPECT_GE(v.real(), 0.0 - 1e-12);
        EXPECT_LE(v.real(), 1.0 + 1e-12);
    }
}

TEST(Noise, HasTheRequestedPowerAndIsReproducible) {
    ComplexArray d(200000, cdouble(1.0, 0.0)), e = d;
    addNoise(d, 20.0, 42);
    addNoise(e, 20.0, 42);
    EXPECT_EQ(d, e);
    double p = 0;
    for (auto v : d) p += std::norm(v - cdouble(1.0));
    EXPECT_NEAR(p / d.size(), 0.01, 0.0005);
}
