// lambda chosen for the user: the noise estimate against known noise, the sparse rule against
// the best lambda of a sweep (and its scale invariance), the discrepancy principle's crossing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "recon/core/metrics.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;

namespace {

ComplexArray gaussianNoise(std::size_t n, double sigma, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> nd(0.0, sigma / std::sqrt(2.0));  // E|z|^2 = sigma^2
    ComplexArray z(n);
    for (auto& v : z) v = cdouble(nd(rng), nd(rng));
    return z;
}

std::shared_ptr<Dataset> smallCase(double snr_db) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = snr_db;
    return simulate(spec);
}

double psnrAt(ReconstructionSession& s, RegularizerKind kind, double lambda, int iterations) {
    SolveOptions o;
    o.regularizer = kind;
    o.lambda = lambda;
    o.iterations = iterations;
    return measureQuality(s.solve(o).image, s.dataset().truth, false).psnr_db;
}

}  // namespace

TEST(LambdaChoice, NoiseEstimateRecoversKnownNoise) {
    // k-space that is pure noise: the outer samples' median gives sigma back.
    auto d = std::make_shared<Dataset>(*smallCase(0));
    d->kspace = gaussianNoise(d->samples(), 2.0, 4);
    const NoiseEstimate outer = estimateNoise(*d);
    EXPECT_NEAR(outer.sigma, 2.0, 0.16) << outer.source;
    EXPECT_GE(outer.samples, 300u);
    EXPECT_NE(outer.source.find("outer k-space"), std::string::npos);
    // A noise scan wins over the outer k-space.
    d->noise = gaussianNoise(20000, 3.0, 5);
    const NoiseEstimate scan = estimateNoise(*d);
    EXPECT_NEAR(scan.sigma, 3.0, 0.06);
    EXPECT_NE(scan.source.find("noise scan"), std::string::npos);
    // Whitened by its scan (as the session does), k-space's noise is unit: sigma 1 without measuring it,
    // and what the outer k-space measures of the whitened pure noise agrees.
    d->kspace = gaussianNoise(d->samples(), 3.0, 6);
    const std::shared_ptr<Dataset> whitened = prewhitenedCopy(*d);
    const NoiseEstimate unit = estimateNoise(*whitened);
    EXPECT_EQ(unit.sigma, 1.0);
    EXPECT_EQ(unit.samples, 20000u);
    EXPECT_NE(unit.source.find("prewhitening"), std::string::npos) << unit.source;
    whitened->whitened_by_noise_samples = 0;
    EXPECT_NEAR(estimateNoise(*whitened).sigma, 1.0, 0.08);
    // On simulated data with noise it is an upper bound: the phantom's signal remains in the outer k-space.
    CaseSpec clean = demoCase("small-2d");
    const std::shared_ptr<Dataset> c = simulate(clean);
    double power = 0;
    for (const cdouble& v : c->kspace) power += std::norm(v);
    const double sigma = std::sqrt(power / double(c->kspace.size()) / std::pow(10.0, 30 / 10.0));
    const NoiseEstimate noisy = estimateNoise(*smallCase(30));
    EXPECT_GE(noisy.sigma, 0.9 * sigma);
}

// The sparse rule lands within 2 dB of the best of a 6-value sweep on small-2d, with and without
// noise, for TV and wavelets (measured: TV -1.2/-0.7 dB, wavelets -0.25/-0.22 dB).
TEST(LambdaChoice, SparseRuleLandsNearTheBestOfASweep) {
    for (double snr : {0.0, 30.0}) {
        ReconstructionSession s(createCpuBackend(Precision::Single));
        s.setDataset(smallCase(snr));
        for (RegularizerKind kind : {RegularizerKind::TotalVariation, RegularizerKind::Wavelet}) {
            double best = -1e9, best_lambda = 0;
            for (double lambda : {0.025, 0.05, 0.1, 0.2, 0.3, 0.5}) {
                const double p = psnrAt(s, kind, lambda, 200);
                if (p > best) best = p, best_lambda = lambda;
            }
            SolveOptions o;
            o.regularizer = kind;
            CallbackMonitor quiet;
            const LambdaChoice c = s.suggestLambda(o, quiet);
            const double p = psnrAt(s, kind, c.lambda, 200);
            std::printf("  small-2d SNR %g %s: auto lambda %.3g %.2f dB, best of the sweep %.3g %.2f dB\n", snr,
                        toString(kind).c_str(), c.lambda, p, best_lambda, best);
            EXPECT_GT(p, best - 2.0) << toString(kind) << " SNR " << snr << ": auto " << c.lambda << " " << p << " dB, best "
                                     << best_lambda << " " << best << " dB";
            EXPECT_NE(c.rule.find("x m"), std::string::npos) << c.rule;
            EXPECT_GT(c.image_scale, 0.8);  // the phantom's magnitude is 1
            EXPECT_LT(c.image_scale, 1.5);
        }
    }
}

// lambda is a threshold in image units: data 1000 times larger get a 1000 times larger lambda
// (the quadratic lambda, relative to s, is unchanged by the scale).
TEST(LambdaChoice, SparseRuleFollowsTheDataScale) {
    auto d = smallCase(30);
    auto big = std::make_shared<Dataset>(*d);
    for (auto& v : big->kspace) v *= 1000.0;
    SolveOptions o;
    o.regularizer = RegularizerKind::TotalVariation;
    CallbackMonitor quiet;
    ReconstructionSession s(createCpuBackend(Precision::Double)), b(createCpuBackend(Precision::Double));
    s.setDataset(d);
    b.setDataset(big);
    const double l = s.suggestLambda(o, quiet).lambda, lb = b.suggestLambda(o, quiet).lambda;
    EXPECT_NEAR(lb / l, 1000.0, 1e-6 * 1000);
}

// The discrepancy principle: the path's residuals fall as lambda falls, and the solve at the
// chosen lambda has ||F x - d||^2 near M sigma^2.
TEST(LambdaChoice, DiscrepancyPrincipleCrossesTheNoiseLevel) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(smallCase(20));
    SolveOptions o;
    o.regularizer = RegularizerKind::FiniteDifference;
    CallbackMonitor quiet;
    const LambdaChoice c = s.suggestLambda(o, quiet);
    ASSERT_GE(c.curve.size(), 2u);
    for (std::size_t i = 1; i < c.curve.size(); ++i) {
        EXPECT_LT(c.curve[i].first, c.curve[i - 1].first);
        EXPECT_LT(c.curve[i].second, c.curve[i - 1].second);
    }
    EXPECT_LE(c.curve.back().second, c.target);
    EXPECT_GT(c.curve[c.curve.size() - 2].second, c.target);
    EXPECT_NEAR(c.target, double(s.dataset().samples()) * c.noise.sigma * c.noise.sigma, 1e-9 * c.target);
    SolveOptions at = o;
    at.lambda = c.lambda;
    at.iterations = 60;
    const SolveResult r = s.solve(at);
    EXPECT_NEAR(r.history.back().data_term / c.target, 1.0, 0.3) << c.rule;
    EXPECT_NE(c.rule.find("discrepancy"), std::string::npos);
    std::atomic<bool> cancel{true};
    CallbackMonitor cancelled({}, &cancel);
    EXPECT_THROW(s.suggestLambda(o, cancelled), Cancelled);
}

// With the density-weighted data term the residual the principle matches is ||D^{1/2} (F x - d)||^2,
// whose noise part is sigma^2 sum w, not M sigma^2: the solve at the chosen lambda lands there.
TEST(LambdaChoice, DiscrepancyPrincipleWithTheWeightedDataTerm) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(smallCase(20));
    SolveOptions o;
    o.regularizer = RegularizerKind::FiniteDifference;
    o.weighting = DataWeighting::Density;
    CallbackMonitor quiet;
    const LambdaChoice c = s.suggestLambda(o, quiet);
    double sum_w = 0;
    for (double w : s.densityWeights(s.weightingDensityMethod())) sum_w += w;
    EXPECT_NEAR(c.target, sum_w * c.noise.sigma * c.noise.sigma, 1e-9 * c.target);
    EXPECT_GT(std::abs(sum_w / double(s.dataset().samples()) - 1), 0.05) << "weights that sum to M test nothing";
    ASSERT_GE(c.curve.size(), 2u);
    EXPECT_LE(c.curve.back().second, c.target);
    EXPECT_GT(c.curve[c.curve.size() - 2].second, c.target);
    SolveOptions at = o;
    at.lambda = c.lambda;
    at.iterations = 60;
    const SolveResult r = s.solve(at);
    EXPECT_NEAR(r.history.back().data_term / c.target, 1.0, 0.3) << c.rule;
    EXPECT_NE(c.rule.find("sum w"), std::string::npos) << c.rule;
}

// midBandDensity against the analytic density of full spokes of unit spacing through the centre:
// 2S/(2 pi |k|) per unit area in 2D, 2S/(4 pi |k|^2) per unit volume in 3D; over the shell
// 0.4..0.6 k_max against the mean M / N^d that is 4/pi in 2D and 0.4/(4/3 0.152) / 0.25 = 2.51 in 3D.
TEST(LambdaChoice, MidBandDensityOfRadialSpokes) {
    CaseSpec two = demoCase("radial-2d");
    EXPECT_NEAR(midBandDensity(*simulate(two)), 4.0 / std::acos(-1.0), 0.06 * 4.0 / std::acos(-1.0));
    CaseSpec three = demoCase("default");
    three.trajectory.n = 24;
    three.trajectory.readouts = 144;
    three.reference = false;
    const double kooshball = 0.4 / (4.0 / 3.0 * std::acos(-1.0) * (0.216 - 0.064)) / 0.25;
    EXPECT_NEAR(midBandDensity(*simulate(three)), kooshball, 0.06 * kooshball);
}

// With weights each sample counts its weight: equal weights change nothing; weights |k|^(d-1), the
// inverse of the spokes' density, make the weighted density flat on the disc (ball) the spokes cover,
// k_max = N/2, so the ratio is the N^d grid's area (volume) over the disc's (ball's): 4/pi in 2D, 6/pi
// in 3D. The density-weighted sparse lambda carries that ratio over (densityWeightedSparseLambda).
TEST(LambdaChoice, MidBandDensityCountsTheWeights) {
    const double pi = std::acos(-1.0);
    CaseSpec two = demoCase("radial-2d");
    CaseSpec three = demoCase("default");
    three.trajectory.n = 24;
    three.trajectory.readouts = 144;
    three.reference = false;
    for (const auto& [spec, expected] : {std::pair{two, 4.0 / pi}, std::pair{three, 6.0 / pi}}) {
        const auto d = simulate(spec);
        const int dims = d->grid.dims;
        const std::vector<double> equal(d->samples(), 3.0);
        EXPECT_NEAR(midBandDensity(*d, &equal), midBandDensity(*d), 1e-12) << dims << "D";
        std::vector<double> ramp(d->samples());
        for (std::size_t m = 0; m < ramp.size(); ++m) {
            const double k2 = d->trajectory.kx(m) * d->trajectory.kx(m) + d->trajectory.ky(m) * d->trajectory.ky(m) +
                              d->trajectory.kz(m) * d->trajectory.kz(m);
            ramp[m] = std::pow(k2, (dims - 1) / 2.0);
        }
        EXPECT_NEAR(midBandDensity(*d, &ramp), expected, 0.06 * expected) << dims << "D";
        EXPECT_NEAR(densityWeightedSparseLambda(0.3, *d, ramp), 0.3 * midBandDensity(*d, &ramp) / midBandDensity(*d), 1e-12);
        const std::vector<double> wrong(d->samples() + 1, 1.0);
        EXPECT_THROW(midBandDensity(*d, &wrong), InputError);
    }
}

// In 3D the rule lands within 0.5 dB of the best of a sweep: TV and wavelets on a noiseless 32^3
// kooshball at the default case's undersampling (256 spokes, M = N^3/4). Measured: TV auto 0.112
// 25.60 dB (best 0.2, 25.58), wavelets auto 0.316 25.48 dB (best 0.5, 25.67). The rule before
// (lambda = kappa m, no density ratio) fails TV here: 0.054, 24.75 dB (wavelets 0.108, 25.22 dB).
TEST(LambdaChoice, SparseRuleLandsNearTheBestOfASweepIn3D) {
    CaseSpec spec = demoCase("default");
    spec.trajectory.n = 32;
    spec.trajectory.readouts = 256;
    spec.reference = false;
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(simulate(spec));
    for (RegularizerKind kind : {RegularizerKind::TotalVariation, RegularizerKind::Wavelet}) {
        double best = -1e9, best_lambda = 0;
        for (double lambda : {0.1, 0.2, 0.5}) {
            const double p = psnrAt(s, kind, lambda, 100);
            if (p > best) best = p, best_lambda = lambda;
        }
        SolveOptions o;
        o.regularizer = kind;
        CallbackMonitor quiet;
        const LambdaChoice c = s.suggestLambda(o, quiet);
        const double p = psnrAt(s, kind, c.lambda, 100);
        std::printf("  32^3 kooshball %s: auto lambda %.3g %.2f dB, best of the sweep %.3g %.2f dB\n", toString(kind).c_str(),
                    c.lambda, p, best_lambda, best);
        EXPECT_GT(p, best - 0.5) << toString(kind) << ": auto " << c.lambda << " " << p << " dB, best " << best_lambda << " "
                                 << best << " dB; " << c.rule;
        EXPECT_GT(c.band_density, 2.3) << c.rule;
    }
}

// The sparse rule's noise floor: the same small-2d data with more noise get a larger lambda, the
// noise's sigma comes back from the outer k-space's white part, noiseless data keep the signal's rule,
// and on the noisiest the floor beats the signal's rule alone (measured: TV 20.17 against 16.27 dB,
// wavelets 19.92 against 16.51 dB).
TEST(LambdaChoice, SparseRuleGrowsWithTheNoise) {
    CaseSpec clean = demoCase("small-2d");
    const std::shared_ptr<Dataset> c0 = simulate(clean);
    double power = 0;
    for (const cdouble& v : c0->kspace) power += std::norm(v);
    SolveOptions o;
    o.regularizer = RegularizerKind::TotalVariation;
    CallbackMonitor quiet;
    double detail = 0;  // the noiseless phantom's own white part (its unresolved detail), not noise
    {
        ReconstructionSession s(createCpuBackend(Precision::Single));
        s.setDataset(c0);
        const LambdaChoice c = s.suggestLambda(o, quiet);
        detail = c.noise.sigma;
        EXPECT_EQ(c.noise_lambda, 0.0) << c.rule;
        EXPECT_EQ(c.lambda, c.signal_lambda) << c.rule;
    }
    double previous = 0;
    for (double snr : {20.0, 15.0, 10.0}) {
        ReconstructionSession s(createCpuBackend(Precision::Single));
        s.setDataset(smallCase(snr));
        const LambdaChoice c = s.suggestLambda(o, quiet);
        const double sigma = std::sqrt(power / double(c0->kspace.size()) / std::pow(10.0, snr / 10));
        std::printf("  small-2d SNR %g: sigma %.3g (true %.3g), lambda %.3g = max(%.3g, %.3g)\n", snr, c.noise.sigma, sigma,
                    c.lambda, c.signal_lambda, c.noise_lambda);
        // The noise and the phantom's detail add in power (measured within 3 %).
        EXPECT_NEAR(c.noise.sigma / std::hypot(sigma, detail), 1.0, 0.1) << c.rule;
        EXPECT_GT(c.noise_lambda, c.signal_lambda) << c.rule;
        EXPECT_GT(c.lambda, 1.3 * previous) << c.rule;
        previous = c.lambda;
        if (snr == 10.0) {
            for (RegularizerKind kind : {RegularizerKind::TotalVariation, RegularizerKind::Wavelet}) {
                SolveOptions w = o;
                w.regularizer = kind;
                const LambdaChoice k = s.suggestLambda(w, quiet);
                const double p = psnrAt(s, kind, k.lambda, 200), before = psnrAt(s, kind, k.signal_lambda, 200);
                std::printf("  small-2d SNR 10 %s: auto %.3g %.2f dB, the signal's rule alone %.3g %.2f dB\n",
                            toString(kind).c_str(), k.lambda, p, k.signal_lambda, before);
                EXPECT_GT(p, before + 1.0) << k.rule;
            }
        }
    }
}
