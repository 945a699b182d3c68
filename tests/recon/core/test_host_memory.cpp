#include <gtest/gtest.h>

#include "recon/core/host_memory.hpp"

using namespace recon;

TEST(HostMemory, ResizeForOverwriteGivesTheSizeAndKeepsABlockThatFits) {
    ComplexArray a;
    const std::size_t big = std::size_t(3) << 20;  // 48 MiB: a new block, on huge pages where offered
    resizeForOverwrite(a, big);
    ASSERT_EQ(a.size(), big);
    for (std::size_t i = 0; i < big; i += 4096) a[i] = cdouble(double(i), 1);
    EXPECT_EQ(a[big - 4096], cdouble(double(big - 4096), 1));
    const cdouble* block = a.data();
    resizeForOverwrite(a, big / 2);  // fits: the same block
    EXPECT_EQ(a.size(), big / 2);
    EXPECT_EQ(a.data(), block);
    resizeForOverwrite(a, big);
    EXPECT_EQ(a.data(), block);
    resizeForOverwrite(a, 0);
    EXPECT_TRUE(a.empty());
}
