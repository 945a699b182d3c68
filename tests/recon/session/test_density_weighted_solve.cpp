// Density-weighted least squares (SolveOptions::weighting): the session's CG converges to the
// solution of its own problem, (F^H D F + lambda s_D W^H W) x = F^H D d with s_D = sum w |phi|^2,
// built here as dense matrices from brute-force Fourier sums; a lambda change continues it.
#include <gtest/gtest.h>

#include <cmath>

#include "../linop/operator_checks.hpp"
#include "../test_support.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/trajectory/trajectories.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// An undersampled golden-angle radial set (Jackson's weights) or spokes at Nyquist (the ramp),
// random data, the box basis (phi != 1).
std::shared_ptr<Dataset> smallRadial(int spokes) {
    auto d = std::make_shared<Dataset>();
    d->name = "small radial";
    d->grid = Grid::make2D(12, 12);
    d->trajectory = goldenAngleRadial2D(12, spokes, 12);
    d->kspace = randomComplex(d->trajectory.samples(), 41);
    d->basis = BasisFunction::BoxVoxel;
    return d;
}

// The weighted problem's solution by dense Gaussian elimination, and s_D.
std::pair<ComplexArray, double> denseWeightedSolution(const Dataset& d, const std::vector<double>& w, RegularizerKind kind,
                                                      double lambda) {
    const std::size_t n = d.grid.voxels(), M = d.samples();
    std::vector<double> a(M);  // phi sqrt(w): the rows of D^{1/2} F
    double s = 0;
    for (std::size_t m = 0; m < M; ++m) {
        const double phi = basisTransform(d.basis, d.grid, d.trajectory.kx(m), d.trajectory.ky(m), d.trajectory.kz(m));
        a[m] = phi * std::sqrt(w[m]);
        s += a[m] * a[m];
    }
    std::vector<cdouble> e(M * n);
    const Regularizer reg = makeRegularizer(kind, d.grid);
    std::vector<cdouble> wtw(n * n);
    for (std::size_t j = 0; j < n; ++j) {
        ComplexArray unit(n, 0.0), col_w(n);
        unit[j] = 1.0;
        const ComplexArray col = bruteForward(d.trajectory, unit, SampleGrid::image(d.grid));
        for (std::size_t m = 0; m < M; ++m) e[m * n + j] = a[m] * col[m];
        reg.normal.multiply(unit.data(), col_w.data());
        for (std::size_t i = 0; i < n; ++i) wtw[i * n + j] = col_w[i];
    }
    std::vector<cdouble> normal(n * n);
    ComplexArray rhs(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            cdouble sum = 0;
            for (std::size_t m = 0; m < M; ++m) sum += std::conj(e[m * n + i]) * e[m * n + j];
            normal[i * n + j] = sum + lambda * s * wtw[i * n + j];
        }
        for (std::size_t m = 0; m < M; ++m) rhs[i] += std::conj(e[m * n + i]) * std::sqrt(w[m]) * d.kspace[m];
    }
    return {denseSolve(normal, rhs), s};
}

SolveOptions weighted(RegularizerKind kind, double lambda) {
    SolveOptions o;
    o.regularizer = kind;
    o.lambda = lambda;
    o.weighting = DataWeighting::Density;
    o.method = {"direct", 0};
    o.iterations = 2000;
    o.tolerance = 1e-12;
    o.snapshot_every = 0;
    return o;
}

TEST(DensityWeightedSolve, ConvergesToTheWeightedProblemsDenseSolution) {
    for (int spokes : {7, 19}) {
        ReconstructionSession s(createCpuBackend(Precision::Double));
        auto d = smallRadial(spokes);
        s.setDataset(d);
        const DensityMethod method = s.weightingDensityMethod();
        EXPECT_EQ(method, spokes == 7 ? DensityMethod::Jackson : DensityMethod::RadialRamp) << spokes << " spokes";
        const std::vector<double> w = s.densityWeights(method);
        for (const auto& [kind, lambda] : {std::pair{RegularizerKind::FiniteDifference, 0.05}, std::pair{RegularizerKind::Tikhonov, 0.01}}) {
            const auto [expected, scale] = denseWeightedSolution(*d, w, kind, lambda);
            SolveOptions o = weighted(kind, lambda);
            const SolveResult r = s.solve(o);
            EXPECT_NEAR(r.lambda_scale, scale, 1e-12 * scale);
            EXPECT_LT(relativeError(r.image, expected), 1e-8) << spokes << " spokes, " << toString(kind);
            // Another problem than plain least squares: its solution is elsewhere.
            o.weighting = DataWeighting::Uniform;
            EXPECT_GT(relativeError(s.solve(o).image, expected), 1e-3) << spokes << " spokes, " << toString(kind);
        }
    }
}

// Jackson's weights are Pipe-Menon's first iterate: the backend's one-iteration weights.
TEST(DensityWeightedSolve, JacksonWeightsArePipeMenonsFirstIterate) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallRadial(7);
    s.setDataset(d);
    auto backend = createCpuBackend(Precision::Double);
    const std::vector<double> one = backend->densityCompensation(d->trajectory, d->grid, kaiserBesselGridding(), 1);
    const std::vector<double>& jackson = s.densityWeights(DensityMethod::Jackson);
    ASSERT_EQ(jackson.size(), one.size());
    for (std::size_t m = 0; m < one.size(); ++m) EXPECT_DOUBLE_EQ(jackson[m], one[m]);
    EXPECT_NE(jackson, s.densityWeights(DensityMethod::PipeMenon));
}

// A lambda change continues the resident weighted solve and ends at the new lambda's solution.
TEST(DensityWeightedSolve, LambdaChangeEndsAtTheNewLambdasSolution) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallRadial(7);
    s.setDataset(d);
    SolveOptions o = weighted(RegularizerKind::FiniteDifference, 0.05);
    o.iterations = 5;
    o.tolerance = 0;
    s.solve(o);
    o.lambda = 0.1;
    o.warm_start = true;
    o.iterations = 2000;
    o.tolerance = 1e-12;
    const SolveResult warm = s.solve(o);
    EXPECT_TRUE(warm.warm_started);
    const auto [expected, scale] = denseWeightedSolution(*d, s.densityWeights(s.weightingDensityMethod()), o.regularizer, 0.1);
    EXPECT_LT(relativeError(warm.image, expected), 1e-8);
}

TEST(DensityWeightedSolve, RefusesSparsePriorsWithAMessage) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(smallRadial(7));
    SolveOptions o = weighted(RegularizerKind::TotalVariation, 0.1);
    o.iterations = 3;
    try {
        s.solve(o);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("density-weighted"), std::string::npos) << e.what();
    }
}

}  // namespace

// With kept directions (SolveOptions::kept_directions) the session's lambda changes, there and back,
// end at each lambda's dense solution, both data terms, with and without the circulant preconditioner.
TEST(DensityWeightedSolve, RecycledLambdaChangesEndAtTheDenseSolutions) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallRadial(7);
    s.setDataset(d);
    const std::vector<double> w = s.densityWeights(s.weightingDensityMethod());
    const std::vector<double> ones(d->samples(), 1.0);
    const std::vector<double> lambdas{0.1, 0.05, 0.2};
    for (const DataWeighting weighting : {DataWeighting::Density, DataWeighting::Uniform}) {
        std::vector<ComplexArray> expected;
        for (const double lambda : lambdas)
            expected.push_back(
                denseWeightedSolution(*d, weighting == DataWeighting::Density ? w : ones, RegularizerKind::FiniteDifference, lambda).first);
        for (const PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
            SolveOptions o = weighted(RegularizerKind::FiniteDifference, 0.05);
            o.weighting = weighting;
            o.preconditioner = pk;
            o.kept_directions = 8;
            o.iterations = 12;
            o.tolerance = 0;
            s.solve(o);
            for (std::size_t k = 0; k < lambdas.size(); ++k) {
                const double lambda = lambdas[k];
                o.lambda = lambda;
                o.warm_start = true;
                o.iterations = 2000;
                o.tolerance = 1e-12;
                const SolveResult r = s.solve(o);
                EXPECT_TRUE(r.warm_started);
                EXPECT_LT(relativeError(r.image, expected[k]), 1e-8)
                    << toString(weighting) << ", " << (pk == PreconditionerKind::None ? "plain" : "circulant") << ", lambda " << lambda;
            }
        }
    }
}
