// The session's records on a good fit: 3D radial data made by the session's own forward model
// (noiseless or with little noise), where the expanded data term x^H Q x - 2 Re x^H F^H d + ||d||^2
// of float32 products cancels below its accuracy. The recorded data term (CG, ADMM) against
// ||F x - d||^2 computed directly on the host, and the discrepancy principle on low-noise data
// against the direct residual of the solve at its lambda.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/normal_cg.hpp"

using namespace recon;

namespace {

// The default case (3D radial) at 32^3, its k-space replaced by F truth (+ noise of rms sigma).
std::shared_ptr<Dataset> sameModelCase(ReconstructionSession& s, double sigma) {
    CaseSpec spec = demoCase("default");
    spec.trajectory.n = 32;
    spec.trajectory.readouts = 512;
    s.setDataset(simulate(spec));
    auto d = std::make_shared<Dataset>(s.dataset());
    d->kspace = s.forward(d->truth, {});
    std::mt19937 rng(7);
    std::normal_distribution<double> nd(0.0, sigma / std::sqrt(2.0));
    if (sigma > 0)
        for (cdouble& v : d->kspace) v += cdouble(nd(rng), nd(rng));
    s.setDataset(d);
    return d;
}

double norm2(const ComplexArray& a) {
    double n = 0;
    for (const cdouble& v : a) n += std::norm(v);
    return n;
}

// ||F x - d||^2 with F the session's forward (its NUFFT), summed in double on the host.
double directResidual(ReconstructionSession& s, const ComplexArray& x) {
    const ComplexArray fx = s.forward(x, {});
    double r = 0;
    for (std::size_t m = 0; m < fx.size(); ++m) r += std::norm(fx[m] - s.dataset().kspace[m]);
    return r;
}

}  // namespace

TEST(RecordsDataTerm, SessionRecordsTheDirectResidualOnAGoodFit) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    const std::shared_ptr<Dataset> d = sameModelCase(s, 0);
    const double dn = norm2(d->kspace);
    // The defect, at the solver: the same CG without d records the expanded form.
    LinearOperatorPtr f = s.fourierOperator({});
    NormalEquationsCg plain({{"data", 1.0, f}}, *s.adjointData(0, {}), dn);
    NormalEquationsCg direct({{"data", 1.0, f}}, *s.adjointData(0, {}), dn);
    direct.setData(std::make_shared<const Vector>(s.backend().fromHost(d->kspace)));
    RunOptions o;
    o.iterations = 60;
    Monitor quiet;
    const RunResult a = runIterations(plain, o, quiet), b = runIterations(direct, o, quiet);
    const double truth = directResidual(s, b.image);
    std::printf("  CG, 60 its, 32^3 radial, noiseless (same model): ||F x - d||^2 / ||d||^2 = %.3g direct, "
                "expanded form %.3g, recorded %.3g\n",
                truth / dn, a.history.back().data_term / dn, b.history.back().data_term / dn);
    EXPECT_NEAR(b.history.back().data_term, truth, 1e-2 * truth);
    EXPECT_GT(std::abs(a.history.back().data_term - truth), 0.5 * truth);  // without d: off by more than half

    // The session's solves: quadratic CG and ADMM (TV), their last records (the discrepancy
    // principle's reading) against the direct residual of their images.
    SolveOptions cg;
    cg.regularizer = RegularizerKind::FiniteDifference;
    cg.lambda = 1e-5;
    cg.iterations = 60;
    SolveOptions tv = cg;
    tv.regularizer = RegularizerKind::TotalVariation;
    tv.lambda = 1e-5;
    for (const SolveOptions& opts : {cg, tv}) {
        const SolveResult r = s.solve(opts);
        const double residual = directResidual(s, r.image);
        std::printf("  %s (%s), lambda %g: last record %.4g, direct %.4g (/ ||d||^2: %.3g)\n", toString(opts.regularizer).c_str(),
                    r.solver.c_str(), opts.lambda, r.history.back().data_term, residual, residual / dn);
        EXPECT_NEAR(r.history.back().data_term, residual, 1e-2 * residual) << toString(opts.regularizer);
    }
    // The records before the last: the cheap expanded form (clamped here), exact when asked (the GUI's plot).
    SolveOptions every = cg;
    every.exact_records = true;
    const SolveResult cheap = s.solve(cg), exact = s.solve(every);
    ASSERT_GE(cheap.history.size(), 2u);
    EXPECT_EQ(cheap.history[cheap.history.size() - 2].data_term, 0.0);
    EXPECT_GT(exact.history[exact.history.size() - 2].data_term, 0.5 * exact.history.back().data_term);
    EXPECT_EQ(cheap.image, exact.image);
}

// The discrepancy principle on low-noise data: a smooth object (a Gaussian blob, nothing left in the
// outer k-space, so the noise estimate there is the noise's) with rms noise 1e-4 of the samples' rms,
// M sigma^2 ~ 1e-8 ||d||^2: far below the expanded form's accuracy. The solve at the chosen lambda
// has a direct residual near M sigma^2, and the path's residuals fall as lambda falls.
TEST(RecordsDataTerm, DiscrepancyPrincipleOnLowNoiseData) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    auto d = sameModelCase(s, 0);
    const Grid& g = d->grid;
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) {
                const double r2 = std::pow(x - 16.0, 2) + std::pow(y - 15.0, 2) + std::pow(z - 17.0, 2);
                d->truth[g.index(x, y, z)] = std::exp(-r2 / (2 * 3.0 * 3.0));
            }
    d->kspace = s.forward(d->truth, {});
    const double rms = std::sqrt(norm2(d->kspace) / double(d->samples()));
    std::mt19937 rng(7);
    std::normal_distribution<double> nd(0.0, 1e-3 * rms / std::sqrt(2.0));
    for (cdouble& v : d->kspace) v += cdouble(nd(rng), nd(rng));
    s.setDataset(d);
    SolveOptions o;
    o.regularizer = RegularizerKind::FiniteDifference;
    CallbackMonitor quiet;
    const LambdaChoice c = s.suggestLambda(o, quiet);
    std::printf("  sigma %.4g (made %.4g), target / ||d||^2 %.3g\n", c.noise.sigma, 1e-3 * rms, c.target / norm2(d->kspace));
    for (const auto& [lambda, residual] : c.curve) std::printf("  lambda %.4g: ||F x - d||^2 / target %.4g\n", lambda, residual / c.target);
    for (std::size_t i = 1; i < c.curve.size(); ++i) EXPECT_LT(c.curve[i].second, c.curve[i - 1].second);
    SolveOptions at = o;
    at.lambda = c.lambda;
    at.iterations = 60;
    const SolveResult r = s.solve(at);
    const double residual = directResidual(s, r.image);
    std::printf("  chosen lambda %.4g: direct residual / target %.4g\n", c.lambda, residual / c.target);
    EXPECT_NEAR(residual / c.target, 1.0, 0.3) << c.rule;
}
