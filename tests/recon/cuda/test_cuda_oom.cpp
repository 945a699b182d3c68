// Out of device memory at every allocation a solve makes: with the device's
// memory capped at 4 kB, 8 kB, ... until the solve fits, each run either fits or
// falls back to the CPU backend with its message — never a crash, a hang or a
// different image.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaOutOfMemory, EveryAllocationOfASolveFallsBackToTheCpuWithTheSameImage) {
    const auto data = simulate(demoCase("small-2d"));
    SolveOptions o;
    o.iterations = 8;
    o.lambda = 0.05;
    ReconstructionSession cpu(createCpuBackend(Precision::Single));
    cpu.setDataset(data);
    const ComplexArray expected = cpu.solve(o).image;

    int fallbacks = 0;
    bool fitted = false;
    for (std::size_t cap = 4096; cap <= (std::size_t(1) << 31) && !fitted; cap *= 2) {
        ReconstructionSession s(gpu(Precision::Single));
        s.setDataset(data);
        testing::internal::CaptureStderr();
        cuda::setDeviceMemoryCap(cap);
        SolveResult r;
        try {
            r = s.solve(o);
        } catch (...) {
            cuda::setDeviceMemoryCap(0);
            const std::string said = testing::internal::GetCapturedStderr();
            FAIL() << "cap " << cap << " bytes: the solve threw instead of falling back; stderr: " << said;
        }
        cuda::setDeviceMemoryCap(0);
        const std::string said = testing::internal::GetCapturedStderr();
        if (said.find("falling back to the CPU backend") != std::string::npos) {
            ++fallbacks;
            EXPECT_NE(said.find("out of memory"), std::string::npos) << said;
            EXPECT_NE(s.cacheStatus().find("nothing cached"), std::string::npos) << s.cacheStatus();
        } else {
            fitted = true;
        }
        // 2e-3: the CPU computes Q on a 1.5x grid, the GPU on a 2x grid, each within the NUFFT's 1e-4;
        // a fall-back part way through mixes the two (measured 1.0e-3 at a 1 MB cap).
        EXPECT_LT(relativeError(r.image, expected), 2e-3) << "cap " << cap << " bytes";
        // After a fall-back the session keeps solving, on the CPU.
        if (!fitted) EXPECT_LT(relativeError(s.solve(o).image, expected), 2e-3);
    }
    EXPECT_TRUE(fitted) << "the solve never fitted under a 2 GB cap";
    EXPECT_GE(fallbacks, 5);  // allocation sites passed one by one as the cap grows
}

// Before a solve the device's free memory (cudaMemGetInfo) is checked against the estimate:
// a problem far beyond it (2^30 voxels: Q's grid alone is 550 GB) falls back to the CPU at once
// with both numbers, and the CPU then refuses it with the host's; gridding is refused directly.
TEST(CudaOutOfMemory, TheEstimateRefusesBeforeAllocating) {
    auto huge = std::make_shared<Dataset>();
    huge->grid = Grid::make3D(2048, 2048, 256);
    huge->trajectory.dims = 3;
    huge->trajectory.k = {0, 0, 0, 1, 2, 3, -4, 5, -6};
    huge->kspace.assign(3, cdouble(1, 0));
    ReconstructionSession s(gpu(Precision::Single));
    s.setDataset(huge);
    try {
        s.gridKaiserBessel();
        ADD_FAILURE() << "gridding was not refused";
    } catch (const OutOfMemory& e) {
        const std::string said = e.what();
        EXPECT_NE(said.find("of device memory"), std::string::npos) << said;
        EXPECT_NE(said.find(" is free"), std::string::npos) << said;
    }
    testing::internal::CaptureStderr();
    try {
        s.solve(SolveOptions{});
        ADD_FAILURE() << "the solve was not refused";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("of host memory; "), std::string::npos) << e.what();
    }
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("of device memory"), std::string::npos) << said;
    EXPECT_NE(said.find("falling back to the CPU backend"), std::string::npos) << said;
}

}  // namespace
