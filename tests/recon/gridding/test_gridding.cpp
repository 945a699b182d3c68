// Gridding with Pipe-Menon density compensation on fully sampled Cartesian data
// reproduces the plain inverse FFT.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

std::shared_ptr<Dataset> cartesian(const Grid& g, const ComplexArray& image) {
    auto d = std::make_shared<Dataset>();
    d->name = "cartesian";
    d->grid = g;
    d->basis = BasisFunction::Point;
    d->trajectory.dims = g.dims;
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x)
                d->trajectory.k.insert(d->trajectory.k.end(),
                                       {double(x - g.n[0] / 2), double(y - g.n[1] / 2), g.dims == 3 ? double(z - g.n[2] / 2) : 0.0});
    // The DFT of the image at the Cartesian points: inverting it is the plain iFFT.
    createCpuBackend(Precision::Double)->forwardSum(d->trajectory, image, SampleGrid::image(g), d->kspace, {"direct"});
    d->truth = image;
    return d;
}

}  // namespace

TEST(Gridding, KaiserBesselWithPipeMenonReproducesTheInverseFft2D) {
    const Grid g = Grid::make2D(32, 24);
    const ComplexArray x = randomComplex(g.voxels(), 1);
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(cartesian(g, x));
    // Uniform sampling: Pipe-Menon converges to uniform weights of about one unit of
    // k-area per sample (the exact lattice sum differs from the kernel's integral by
    // its aliased tail, a few per cent for sigma = 2).
    const auto& w = s.densityWeights();
    for (double v : w) EXPECT_NEAR(v / w[0], 1.0, 2e-3);
    EXPECT_NEAR(w[0], 1.0, 0.1);
    auto scaled = [&](ComplexArray img) {
        const cdouble a = optimalScale(img, x);
        EXPECT_NEAR(std::abs(a), 1.0, 0.1);
        for (auto& v : img) v *= a;
        return img;
    };
    EXPECT_LT(relativeError(scaled(s.gridKaiserBessel(kaiserBesselGridding(2.0, 4)).image), x), 5e-3);
    // Wider kernels are more accurate, down to the Kaiser-Bessel kernel's truncation
    // (it is 1/I0(beta), not 0, at |z| = W/2).
    EXPECT_LT(relativeError(scaled(s.gridKaiserBessel(kaiserBesselGridding(2.0, 7)).image), x), 1e-3);
}

TEST(Gridding, KaiserBesselReproducesTheInverseFft3DInSinglePrecision) {
    const Grid g = Grid::make3D(12, 10, 8);
    const ComplexArray x = randomComplex(g.voxels(), 2);
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(cartesian(g, x));
    ComplexArray img = s.gridKaiserBessel(kaiserBesselGridding(2.0, 6)).image;
    const cdouble a = optimalScale(img, x);
    for (auto& v : img) v *= a;
    EXPECT_LT(relativeError(img, x), 1e-3);
}

TEST(Gridding, TrilinearSpreadsAnOffGridSampleOntoItsTwoNeighbours) {
    // One sample half-way between two grid nodes (k = (0.5, 0)) with weight 1: the
    // seeds' linear interpolation puts 1/2 on k = 0 and 1/2 on k = 1, so the image is
    // (1/2 + 1/2 exp(i 2 pi x)) / N^d, attenuated towards the FOV's edge as expected
    // without deapodisation.
    const Grid g = Grid::make2D(32, 32);
    auto d = std::make_shared<Dataset>();
    d->name = "one sample";
    d->grid = g;
    d->trajectory.dims = 2;
    d->trajectory.k = {0.5, 0.0, 0.0};
    d->kspace = {1.0};
    d->density = {1.0};
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(d);
    const ComplexArray img = s.gridTrilinear().image;
    for (int y = 0; y < 32; y += 7)
        for (int x = 0; x < 32; ++x) {
            const cdouble expect = (0.5 + 0.5 * std::polar(1.0, 2 * kPi * (x - 16) / 32.0)) / double(g.voxels());
            EXPECT_NEAR(std::abs(img[g.index(x, y, 0)] - expect), 0, 1e-15);
        }
}
