// The seeds' metrics against values worked out by hand.
#include <gtest/gtest.h>

#include "recon/core/metrics.hpp"

using namespace recon;

TEST(Metrics, HandComputedValues) {
    const ComplexArray truth{1.0, 2.0, 0.0, -1.0};
    const ComplexArray image{1.5, 2.0, 0.0, -1.5};
    // errors 0.5, 0, 0, -0.5: MSE = 0.5/4 = 0.125; ||I0||^2 = 6; max|I0| = 2
    const Quality q = measureQuality(image, truth, false);
    EXPECT_DOUBLE_EQ(q.mse, 0.125);
    EXPECT_NEAR(q.psnr_db, 20 * std::log10(2 / std::sqrt(0.125)), 1e-12);  // 15.0515 dB
    EXPECT_NEAR(q.error_percent, 100 * std::sqrt(0.5 / 6), 1e-12);         // 28.87 %
}

TEST(Metrics, OptimalScaleUndoesAComplexGain) {
    const ComplexArray truth{cdouble(1, 1), 2.0, cdouble(0, -3), 0.5};
    const cdouble gain(0.2, -0.7);
    ComplexArray image;
    for (auto v : truth) image.push_back(v / gain);
    EXPECT_NEAR(std::abs(optimalScale(image, truth) - gain), 0, 1e-12);
    const Quality q = measureQuality(image, truth, true);
    EXPECT_LT(q.error_percent, 1e-9);
    EXPECT_GT(measureQuality(image, truth, false).error_percent, 50);
}

TEST(Metrics, FromErrorNormAgreesWithDirectMeasure) {
    const ComplexArray truth{3.0, 1.0, 2.0};
    const ComplexArray image{2.0, 1.0, 2.5};
    const Quality a = measureQuality(image, truth, false);
    const TruthStats s = truthStats(truth);
    const Quality b = qualityFromErrorNorm(1.25, s.norm2, s.max_abs, 3);
    EXPECT_NEAR(a.psnr_db, b.psnr_db, 1e-12);
    EXPECT_NEAR(a.error_percent, b.error_percent, 1e-12);
}
