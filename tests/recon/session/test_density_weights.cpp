// Density weights: the session's Pipe-Menon iteration count against a long run, and
// each gridding charged its own weights.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"
#include "recon/core/metrics.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// A small variable-density spiral (Pipe-Menon is its only choice) and an undersampled radial case.
std::vector<CaseSpec> cases() {
    CaseSpec spiral = demoCase("spiral-2d");
    spiral.trajectory.n = 48;
    spiral.trajectory.readouts = 8;
    return {spiral, demoCase("small-2d")};
}

// kPipeMenonIterations stands for the fixed point: its weights are within 3 % (RMS) of 40
// iterations' and its Kaiser-Bessel gridding loses at most 0.05 dB.
TEST(DensityWeights, FewPipeMenonIterationsMatchALongRun) {
    for (const CaseSpec& spec : cases()) {
        auto d = simulate(spec);
        auto backend = createCpuBackend(Precision::Double);
        const std::vector<double> few = backend->densityCompensation(d->trajectory, d->grid, kaiserBesselGridding(),
                                                                     kPipeMenonIterations);
        const std::vector<double> many = backend->densityCompensation(d->trajectory, d->grid, kaiserBesselGridding(), 40);
        double num = 0, den = 0;
        for (std::size_t m = 0; m < few.size(); ++m) {
            num += (few[m] - many[m]) * (few[m] - many[m]);
            den += many[m] * many[m];
        }
        EXPECT_LT(std::sqrt(num / den), 0.05) << spec.name;
        auto psnr = [&](const std::vector<double>& w) {
            ComplexArray x(d->samples()), img;
            for (std::size_t m = 0; m < x.size(); ++m) x[m] = w[m] * d->kspace[m];
            backend->grid(d->trajectory, x, d->grid, kaiserBesselGridding(), img);
            return measureQuality(img, d->truth, true).psnr_db;
        };
        EXPECT_GT(psnr(few), psnr(many) - 0.05) << spec.name;
    }
}

// Both griddings of a spiral use Pipe-Menon's weights; the second finds them cached but is
// still charged what they cost, so neither row carries the other's work.
TEST(DensityWeights, EachGriddingIsChargedItsOwnWeights) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(simulate(cases().front()));
    ASSERT_EQ(s.trilinearDensityMethod(), DensityMethod::PipeMenon);
    ASSERT_EQ(s.kaiserBesselDensityMethod(), DensityMethod::PipeMenon);
    const GriddingResult tri = s.gridTrilinear();
    const GriddingResult kb = s.gridKaiserBessel();
    EXPECT_EQ(tri.density, "pipe-menon");
    EXPECT_EQ(kb.density, "pipe-menon");
    EXPECT_GT(tri.density_seconds, 0);
    EXPECT_EQ(kb.density_seconds, tri.density_seconds);
    EXPECT_GE(kb.seconds, kb.density_seconds);
    EXPECT_GE(tri.seconds, tri.density_seconds);
}

}  // namespace
