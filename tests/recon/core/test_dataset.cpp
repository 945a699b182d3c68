// Bad input gets a clear message naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "recon/core/dataset.hpp"
#include "recon/core/errors.hpp"
#include "recon/session/demo_cases.hpp"

using namespace recon;

namespace {

Dataset small() {
    Dataset d = *simulate(demoCase("small-2d"));
    d.name = "test";
    return d;
}

void expectError(const Dataset& d, const std::string& fragment) {
    try {
        d.validate("file.h5");
        FAIL() << "no error for " << fragment;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("file.h5"), std::string::npos) << e.what();
    }
}

}  // namespace

TEST(DatasetValidation, AcceptsASimulatedCase) { EXPECT_NO_THROW(small().validate()); }

TEST(DatasetValidation, RejectsMismatchedLengths) {
    Dataset d = small();
    d.kspace.pop_back();
    expectError(d, "k-space has");
}

TEST(DatasetValidation, RejectsNaN) {
    Dataset d = small();
    d.kspace[5] = cdouble(std::nan(""), 0);
    expectError(d, "NaN");
}

// Large k-space is checked in parallel: still the first bad value is named, and the peak and energy
// checks see every coil.
TEST(DatasetValidation, NamesTheFirstNaNOfManyCoils) {
    Dataset d = small();
    const std::size_t m = d.samples();
    d.coils = int(200000 / m) + 2;
    ComplexArray one = d.kspace;
    d.kspace.clear();
    for (int c = 0; c < d.coils; ++c) d.kspace.insert(d.kspace.end(), one.begin(), one.end());
    ASSERT_GT(d.kspace.size(), 65536u);
    EXPECT_NO_THROW(d.validate("file.h5"));
    const int late = d.coils - 1, early = d.coils / 2;
    d.kspace[std::size_t(late) * m + 3] = cdouble(0, std::nan(""));
    d.kspace[std::size_t(early) * m + 7] = cdouble(INFINITY, 0);
    expectError(d, "k-space value 7 of coil " + std::to_string(early) + " is NaN or Inf");
    d.kspace[std::size_t(early) * m + 7] = 0;
    d.kspace[std::size_t(late) * m + 3] = 1e200;  // in the last coil: the energy check must see it
    expectError(d, "overflow single precision");
}

TEST(DatasetValidation, RejectsTrajectoryOutsideTheBand) {
    Dataset d = small();
    d.trajectory.k[3] = 3.0 * d.grid.n[0];  // e.g. radians or a wrong scale
    expectError(d, "outside the band");
}

// A trajectory scaled as a unit mistake scales it is refused with the mistake named.
TEST(DatasetValidation, NamesTheLikelyUnitMistake) {
    const Dataset good = small();
    const double n = good.grid.n[0];
    for (auto [scale, mistake] : {std::pair{n, "= N, as when values in cycles per FOV are declared cycles per voxel"},
                                  std::pair{n / (2 * kPi), "= N/(2 pi), as when values in cycles per FOV are declared radians"},
                                  std::pair{80.0, "scaled by about 80 (this program uses cycles per FOV"}}) {
        Dataset d = good;
        double reach = 0;  // the data's own largest |k| relative to the band's edge
        for (double& k : d.trajectory.k) reach = std::max(reach, std::abs(k) / (n / 2));
        for (double& k : d.trajectory.k) k *= scale / reach;
        expectError(d, mistake);
    }
}

TEST(DatasetValidation, RejectsAbsurdSizesAndWrongTruth) {
    Dataset d = small();
    d.grid.n = {100000, 4, 1};
    expectError(d, "absurdly large");
    d = small();
    d.truth.resize(3);
    expectError(d, "true image has 3 voxels");
}

TEST(DatasetValidation, MemoryEstimateGrowsWithTheGrid) {
    EXPECT_GT(estimateReconstructionBytes(Grid::cube(3, 128), 284592, Precision::Single),
              estimateReconstructionBytes(Grid::cube(3, 64), 284592, Precision::Single) * 7);
}

// Messages print numbers in their shortest exact form (issue 15, item 9: "%f" printed
// 'dims' = 3.000000 and a 300-digit lambda): short, never padded, and read back exactly.
TEST(Messages, NumbersAreShortestAndReadBackExactly) {
    EXPECT_EQ(formatNumber(3), "3");
    EXPECT_EQ(formatNumber(0.02), "0.02");
    EXPECT_EQ(formatNumber(1e300), "1e+300");
    EXPECT_EQ(formatNumber(-2.5), "-2.5");
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> exponent(-300, 300), mantissa(-10, 10);
    for (int i = 0; i < 10000; ++i) {
        const double x = mantissa(rng) * std::pow(10.0, exponent(rng));
        const std::string s = formatNumber(x);
        EXPECT_EQ(std::stod(s), x) << s;
        EXPECT_LE(s.size(), 24u) << s;
    }
}
