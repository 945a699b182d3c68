// main() for the GPU tests: listing works anywhere (for test discovery); running
// needs a CUDA device, else the process prints why and exits 77 (ctest: skipped).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "recon/backend/backend.hpp"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (!::testing::GTEST_FLAG(list_tests)) {
        std::string why;
        if (!recon::createCudaBackend(recon::Precision::Single, 0, &why)) {
            std::printf("SKIPPED: no usable GPU for the CUDA backend tests: %s\n", why.c_str());
            return 77;
        }
    }
    return RUN_ALL_TESTS();
}
