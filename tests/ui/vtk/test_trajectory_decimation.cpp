// Which samples the trajectory view keeps: whole readouts, within the budget.
#include <gtest/gtest.h>

#include <vector>

#include "ui/vtk/trajectory_decimation.hpp"

using reconstudio::vtkviews::DecimationPlan;
using reconstudio::vtkviews::planDecimation;

namespace {

std::vector<std::size_t> kept(const DecimationPlan& p) {
    std::vector<std::size_t> v;
    p.forEachKept([&](std::size_t m) { v.push_back(m); });
    return v;
}

}  // namespace

TEST(TrajectoryDecimation, KeepsEverythingWithinBudget) {
    const auto p = planDecimation(6400, 64, 6400);
    EXPECT_EQ(p.stride, 1u);
    EXPECT_EQ(p.drawn, 6400u);
    const auto v = kept(p);
    ASSERT_EQ(v.size(), 6400u);
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], i);
}

TEST(TrajectoryDecimation, KeepsWholeReadoutsWithinBudget) {
    // 100 readouts of 64; 1000 points hold 15 readouts -> every 7th -> 15 kept.
    const auto p = planDecimation(6400, 64, 1000);
    EXPECT_EQ(p.unitLength, 64u);
    EXPECT_EQ(p.stride, 7u);
    EXPECT_EQ(p.drawn, 960u);
    const auto v = kept(p);
    ASSERT_EQ(v.size(), p.drawn);
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t readout = v[i] / 64, within = v[i] % 64;
        EXPECT_EQ(readout % 7, 0u);
        EXPECT_EQ(within, i % 64);  // complete readouts, in order
    }
}

TEST(TrajectoryDecimation, NeverExceedsBudget) {
    for (std::size_t samples : {1u, 999u, 1000u, 1001u, 123457u, 8192u * 128u})
        for (int readout : {0, 1, 7, 64, 128, 5000})
            for (std::size_t budget : {1u, 10u, 1000u, 65536u, 1000000u}) {
                const auto p = planDecimation(samples, readout, budget);
                EXPECT_LE(p.drawn, budget) << samples << " " << readout << " " << budget;
                EXPECT_GE(p.drawn, 1u);
                EXPECT_EQ(kept(p).size(), p.drawn);
                // Not needlessly sparse: the next smaller stride would overflow the budget.
                if (p.stride > 1) {
                    const std::size_t units = p.units();
                    const std::size_t denser = (units + p.stride - 2) / (p.stride - 1);
                    EXPECT_GT(denser * p.unitLength, budget) << samples << " " << readout << " " << budget;
                }
            }
}

TEST(TrajectoryDecimation, UnknownOrOverlongReadoutsFallBackToSamples) {
    const auto unknown = planDecimation(1000, 0, 100);
    EXPECT_EQ(unknown.unitLength, 1u);
    EXPECT_EQ(unknown.stride, 10u);
    EXPECT_EQ(unknown.drawn, 100u);
    const auto overlong = planDecimation(10000, 5000, 1000);  // one readout exceeds the budget
    EXPECT_EQ(overlong.unitLength, 1u);
    EXPECT_EQ(overlong.drawn, 1000u);
}

TEST(TrajectoryDecimation, PartialLastReadoutCounts) {
    // 130 samples in readouts of 64: the third readout holds 2.
    const auto p = planDecimation(130, 64, 1000);
    EXPECT_EQ(p.units(), 3u);
    EXPECT_EQ(p.drawn, 130u);
}
