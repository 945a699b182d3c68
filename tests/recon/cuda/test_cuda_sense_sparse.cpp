// SENSE with the sparse priors on the GPU: the same ADMM and POGM over the same SENSE operator
// (written from VectorSpace primitives), so the image must match the CPU backend's.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaSenseSparse, TotalVariationAndWaveletSolvesMatchTheCpu) {
    CaseSpec spec = demoCase("radial-2d-8coil");
    spec.trajectory.n = 64;
    spec.trajectory.readouts = 24;
    const auto data = simulate(spec);
    ReconstructionSession cpu(createCpuBackend(Precision::Single)), dev(gpu(Precision::Single));
    cpu.setDataset(data);
    dev.setDataset(data);
    // The same maps on both: estimated maps differ by gridding's rounding, and their mask's edge with them.
    dev.setCoilMaps(cpu.coilMaps());
    SolveOptions o;
    o.coil_combination = CoilCombination::Sense;
    o.iterations = 60;
    // ADMM with its SENSE-corrected circulant preconditioner (made on each backend), then POGM.
    for (RegularizerKind kind : {RegularizerKind::TotalVariation, RegularizerKind::Wavelet}) {
        o.regularizer = kind;
        o.lambda = 0.3;
        const SolveResult a = cpu.solve(o), b = dev.solve(o);
        ASSERT_EQ(a.image.size(), b.image.size());
        EXPECT_EQ(b.coil_combination, "sense");
        EXPECT_EQ(a.solver, b.solver);
        EXPECT_LT(relativeError(b.image, a.image), 2e-3) << toString(kind);
        EXPECT_NEAR(b.history.back().cost(), a.history.back().cost(), 2e-3 * a.history.back().cost()) << toString(kind);
        const Quality qa = measureQuality(a.image, data->truth, false), qb = measureQuality(b.image, data->truth, false);
        EXPECT_NEAR(qb.psnr_db, qa.psnr_db, 0.05) << toString(kind);
    }
    // TV with the density-weighted data term (E_D's normal through the one weighted kernel on each backend).
    o.regularizer = RegularizerKind::TotalVariation;
    o.weighting = DataWeighting::Density;
    const SolveResult da = cpu.solve(o), db = dev.solve(o);
    EXPECT_LT(relativeError(db.image, da.image), 2e-3);
    EXPECT_NEAR(db.history.back().cost(), da.history.back().cost(), 2e-3 * da.history.back().cost());
    o.weighting = DataWeighting::Uniform;
    // A warm lambda change continues the resident solve on both.
    o.regularizer = RegularizerKind::TotalVariation;
    o.lambda = 0.6;
    o.iterations = 30;
    cpu.solve(o);
    dev.solve(o);
    o.warm_start = true;
    o.lambda = 0.3;
    const SolveResult wa = cpu.solve(o), wb = dev.solve(o);
    EXPECT_TRUE(wb.warm_started);
    EXPECT_LT(relativeError(wb.image, wa.image), 2e-3);
}

}  // namespace
