// SENSE on the GPU: the operators of recon/sense are written from VectorSpace
// primitives only, so the CUDA backend runs them with no code of its own; the
// image must match the CPU backend's.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaSense, EightCoilSolveMatchesTheCpu) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    SolveOptions o;
    o.iterations = 15;
    o.lambda = 0.05;
    o.coil_combination = CoilCombination::Sense;
    ReconstructionSession cpu(createCpuBackend(Precision::Single)), dev(gpu(Precision::Single));
    cpu.setDataset(data);
    dev.setDataset(data);
    // The same maps on both: estimated maps differ by gridding's rounding, and their mask's edge with them.
    dev.setCoilMaps(cpu.coilMaps());
    const SolveResult a = cpu.solve(o), b = dev.solve(o);
    ASSERT_EQ(a.image.size(), b.image.size());
    EXPECT_LT(relativeError(b.image, a.image), 2e-3);
    const Quality qa = measureQuality(a.image, data->truth, false), qb = measureQuality(b.image, data->truth, false);
    EXPECT_NEAR(qb.psnr_db, qa.psnr_db, 0.05);
}

}  // namespace
