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
        EXPECT_LT(relativeError(r.image, expected), 1e-3) << "cap " << cap << " bytes";
        // After a fall-back the session keeps solving, on the CPU.
        if (!fitted) EXPECT_LT(relativeError(s.solve(o).image, expected), 1e-3);
    }
    EXPECT_TRUE(fitted) << "the solve never fitted under a 2 GB cap";
    EXPECT_GE(fallbacks, 5);  // allocation sites passed one by one as the cap grows
}

}  // namespace
