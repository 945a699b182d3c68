// Density-weighted least squares (SolveOptions::weighting): the session's CG converges to the
// solution of its own problem, (F^H D F + lambda s_D W^H W) x = F^H D d with s_D = sum w |phi|^2,
// built here as dense matrices from brute-force Fourier sums; a lambda change continues it. The
// sparse priors with the same data term, ||D^{1/2} (F x - d)||^2 + lambda s_D R(x): ADMM's TV and
// FISTA's wavelet solves against a primal-dual method and ISTA on the dense D^{1/2} F, in float64.
// SENSE with the weighted data term, E_D = stack_c D^{1/2} F S_c: its quadratic CG against the dense
// solution of (E_D^H E_D + lambda s_D W^H W) x = E_D^H D^{1/2} d, its TV against Chambolle-Pock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../linop/operator_checks.hpp"
#include "../test_support.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/phantom/coil_sensitivities.hpp"
#include "recon/priors/priors.hpp"
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

// The weighted data term as dense matrices from brute-force sums: E = D^{1/2} F (M x n, row-major,
// phi in F), b = D^{1/2} d, and s_D = sum w phi^2.
struct WeightedSystem {
    std::size_t rows = 0, cols = 0;
    std::vector<cdouble> e;
    ComplexArray b;
    double s = 0;
    ComplexArray apply(const ComplexArray& x) const {  // E x
        ComplexArray y(rows, 0.0);
        for (std::size_t m = 0; m < rows; ++m)
            for (std::size_t j = 0; j < cols; ++j) y[m] += e[m * cols + j] * x[j];
        return y;
    }
    ComplexArray applyAdjoint(const ComplexArray& y) const {  // E^H y
        ComplexArray x(cols, 0.0);
        for (std::size_t m = 0; m < rows; ++m)
            for (std::size_t j = 0; j < cols; ++j) x[j] += std::conj(e[m * cols + j]) * y[m];
        return x;
    }
    double dataTerm(const ComplexArray& x) const {  // ||E x - b||^2
        const ComplexArray ex = apply(x);
        double f = 0;
        for (std::size_t m = 0; m < rows; ++m) f += std::norm(ex[m] - b[m]);
        return f;
    }
};

WeightedSystem weightedSystem(const Dataset& d, const std::vector<double>& w) {
    WeightedSystem sys;
    const std::size_t n = d.grid.voxels(), M = d.samples();
    sys.rows = M;
    sys.cols = n;
    std::vector<double> a(M);  // phi sqrt(w): the rows of D^{1/2} F
    for (std::size_t m = 0; m < M; ++m) {
        const double phi = basisTransform(d.basis, d.grid, d.trajectory.kx(m), d.trajectory.ky(m), d.trajectory.kz(m));
        a[m] = phi * std::sqrt(w[m]);
        sys.s += a[m] * a[m];
    }
    sys.e.resize(M * n);
    for (std::size_t j = 0; j < n; ++j) {
        ComplexArray unit(n, 0.0);
        unit[j] = 1.0;
        const ComplexArray col = bruteForward(d.trajectory, unit, SampleGrid::image(d.grid));
        for (std::size_t m = 0; m < M; ++m) sys.e[m * n + j] = a[m] * col[m];
    }
    sys.b.resize(M);
    for (std::size_t m = 0; m < M; ++m) sys.b[m] = std::sqrt(w[m]) * d.kspace[m];
    return sys;
}

// SENSE's weighted data term densely: E_D = stack_c D^{1/2} F diag(S_c) (maps coils x voxels),
// b = stack_c D^{1/2} d_c, s = s_D (one coil's).
WeightedSystem weightedSenseSystem(const Dataset& d, const std::vector<double>& w, const ComplexArray& maps) {
    const WeightedSystem one = weightedSystem(d, w);
    const std::size_t n = one.cols, M = one.rows, coils = std::size_t(d.coils);
    WeightedSystem sys;
    sys.rows = coils * M;
    sys.cols = n;
    sys.s = one.s;
    sys.e.resize(sys.rows * n);
    sys.b.resize(sys.rows);
    for (std::size_t c = 0; c < coils; ++c)
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t j = 0; j < n; ++j) sys.e[(c * M + m) * n + j] = one.e[m * n + j] * maps[c * n + j];
            sys.b[c * M + m] = std::sqrt(w[m]) * d.coil(int(c))[m];
        }
    return sys;
}

// The minimiser of ||E x - b||^2 + lambda s W^H W by dense Gaussian elimination.
ComplexArray denseSolution(const WeightedSystem& sys, const Grid& grid, RegularizerKind kind, double lambda) {
    const std::size_t n = sys.cols, M = sys.rows;
    const Regularizer reg = makeRegularizer(kind, grid);
    std::vector<cdouble> normal(n * n);
    for (std::size_t j = 0; j < n; ++j) {
        ComplexArray unit(n, 0.0), col_w(n);
        unit[j] = 1.0;
        reg.normal.multiply(unit.data(), col_w.data());
        for (std::size_t i = 0; i < n; ++i) {
            cdouble sum = 0;
            for (std::size_t m = 0; m < M; ++m) sum += std::conj(sys.e[m * n + i]) * sys.e[m * n + j];
            normal[i * n + j] = sum + lambda * sys.s * col_w[i];
        }
    }
    return denseSolve(normal, sys.applyAdjoint(sys.b));
}

// The weighted problem's solution, and s_D.
std::pair<ComplexArray, double> denseWeightedSolution(const Dataset& d, const std::vector<double>& w, RegularizerKind kind,
                                                      double lambda) {
    const WeightedSystem sys = weightedSystem(d, w);
    return {denseSolution(sys, d.grid, kind, lambda), sys.s};
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

// The simulation's coil maps on a small grid (unnormalised: their energy varies over the image), no mask.
CoilMaps smallMaps(const Grid& g, int coils) {
    CoilMaps maps;
    maps.coils = coils;
    maps.maps = SyntheticCoils(g.dims, coils).maps(g);
    maps.mask.assign(g.voxels(), 1);
    maps.source = "synthetic";
    return maps;
}

// SENSE's quadratic CG with the weighted data term (plain and with its preconditioner from the weighted
// circulant) converges to the dense solution of (E_D^H E_D + lambda s_D W^H W) x = E_D^H D^{1/2} d, and a
// lambda change continues it to the new lambda's; the uniform SENSE problem's solution is elsewhere.
TEST(DensityWeightedSolve, SenseConvergesToTheWeightedProblemsDenseSolution) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallRadial(7);
    d->coils = 3;
    d->kspace = randomComplex(3 * d->trajectory.samples(), 43);
    s.setDataset(d);
    const CoilMaps maps = smallMaps(d->grid, 3);
    s.setCoilMaps(maps);
    const WeightedSystem sys = weightedSenseSystem(*d, s.densityWeights(s.weightingDensityMethod()), maps.maps);
    for (const PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
        const char* label = pk == PreconditionerKind::None ? "plain" : "circulant";
        SolveOptions o = weighted(RegularizerKind::FiniteDifference, 0.05);
        o.coil_combination = CoilCombination::Sense;
        o.preconditioner = pk;
        const SolveResult r = s.solve(o);
        EXPECT_EQ(r.coil_combination, "sense");
        EXPECT_NEAR(r.lambda_scale, sys.s, 1e-12 * sys.s);  // s_D: the quadratic SENSE prior's s is one coil's
        const ComplexArray expected = denseSolution(sys, d->grid, o.regularizer, 0.05);
        EXPECT_LT(relativeError(r.complex_image, expected), 1e-8) << label;
        // The records carry the weighted cost ||E_D x - b||^2 + lambda s_D ||W x||^2 at the solution.
        const Regularizer reg = makeRegularizer(o.regularizer, d->grid);
        ComplexArray wx(std::size_t(reg.w.rows));
        reg.w.multiply(r.complex_image.data(), wx.data());
        double f = sys.dataTerm(r.complex_image);
        for (const cdouble& v : wx) f += 0.05 * sys.s * std::norm(v);
        EXPECT_NEAR(r.history.back().cost(), f, 1e-8 * f) << label;

        o.lambda = 0.2;
        o.warm_start = true;
        const SolveResult warm = s.solve(o);
        EXPECT_TRUE(warm.warm_started) << label;
        EXPECT_LT(relativeError(warm.complex_image, denseSolution(sys, d->grid, o.regularizer, 0.2)), 1e-8) << label;

        SolveOptions uniform = o;  // warm_start asked: the resident solve's key names the weighting, so a cold one
        uniform.weighting = DataWeighting::Uniform;
        const SolveResult u = s.solve(uniform);
        EXPECT_FALSE(u.warm_started) << label;
        EXPECT_GT(relativeError(u.complex_image, warm.complex_image), 1e-3) << label;
    }
}

// A piecewise-constant 8 x 8 image seen through `spokes` golden-angle spokes (box basis), with noise;
// `coils` > 1: through smallMaps' coils, coil after coil.
std::shared_ptr<Dataset> smallPiecewiseRadial(int spokes, int coils = 1) {
    auto d = std::make_shared<Dataset>();
    d->name = "small piecewise radial";
    d->grid = Grid::make2D(8, 8);
    d->trajectory = goldenAngleRadial2D(8, spokes, 8);
    d->basis = BasisFunction::BoxVoxel;
    d->coils = coils;
    ComplexArray x(d->grid.voxels());
    for (int y = 0; y < 8; ++y)
        for (int xx = 0; xx < 8; ++xx) x[d->grid.index(xx, y, 0)] = cdouble(xx < 4 ? 1.0 : 2.0, y < 3 ? 0.5 : -0.5);
    const std::size_t n = x.size(), M = d->trajectory.samples();
    const ComplexArray maps = coils > 1 ? smallMaps(d->grid, coils).maps : ComplexArray(n, 1.0);
    for (int c = 0; c < coils; ++c) {
        ComplexArray sx(n);
        for (std::size_t v = 0; v < n; ++v) sx[v] = maps[std::size_t(c) * n + v] * x[v];
        const ComplexArray k = bruteForward(d->trajectory, sx, SampleGrid::image(d->grid));
        d->kspace.insert(d->kspace.end(), k.begin(), k.end());
    }
    const ComplexArray noise = randomComplex(d->kspace.size(), 47);
    for (std::size_t i = 0; i < d->kspace.size(); ++i) {
        const std::size_t m = i % M;
        const double phi = basisTransform(d->basis, d->grid, d->trajectory.kx(m), d->trajectory.ky(m), d->trajectory.kz(m));
        d->kspace[i] = phi * d->kspace[i] + 0.3 * noise[i];
    }
    return d;
}

// ||E||^2 = the largest eigenvalue of E^H E, by power iteration from a unit vector.
double normalNorm(const WeightedSystem& sys) {
    ComplexArray x(sys.cols, 1.0 / std::sqrt(double(sys.cols)));
    double norm = 0;
    for (int it = 0; it < 3000; ++it) {
        const ComplexArray y = sys.applyAdjoint(sys.apply(x));
        double n2 = 0;
        for (const cdouble& v : y) n2 += std::norm(v);
        norm = std::sqrt(n2);  // ||E^H E x|| with ||x|| = 1
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = y[i] / norm;
    }
    return norm;
}

double isotropicTv(const CsrMatrix& grad, const ComplexArray& x) {
    ComplexArray dx(std::size_t(grad.rows));
    grad.multiply(x.data(), dx.data());
    const std::size_t stride = dx.size() / 2;
    double tv = 0;
    for (std::size_t i = 0; i < stride; ++i) tv += std::sqrt(std::norm(dx[i]) + std::norm(dx[i + stride]));
    return tv;
}

// Chambolle-Pock on min f1(E x) + f2(G x), f1(z) = ||z - b||^2, f2 = weight ||G x||_{2,1} (isotropic TV), 2D.
ComplexArray primalDualTv(const WeightedSystem& sys, const Grid& grid, double weight) {
    const CsrMatrix grad = gradientMatrix(grid);
    const CsrMatrix gradt = grad.transposed();
    const std::size_t n = sys.cols, M = sys.rows, r = std::size_t(grad.rows);
    const double step = 0.95 / std::sqrt(normalNorm(sys) + 4.0 * grid.dims);
    ComplexArray x(n, 0.0), xbar(n, 0.0), y1(M, 0.0), y2(r, 0.0), gx(r), t2(n);
    for (int it = 0; it < 100000; ++it) {
        const ComplexArray ex = sys.apply(xbar);
        grad.multiply(xbar.data(), gx.data());
        for (std::size_t i = 0; i < M; ++i) y1[i] = (y1[i] + step * ex[i] - step * sys.b[i]) / (1 + step / 2);
        for (std::size_t i = 0; i < r; ++i) y2[i] += step * gx[i];
        projectOntoGroupBalls(y2, 2, weight);
        const ComplexArray t1 = sys.applyAdjoint(y1);
        gradt.multiply(y2.data(), t2.data());
        for (std::size_t i = 0; i < n; ++i) {
            const cdouble old = x[i];
            x[i] -= step * (t1[i] + t2[i]);
            xbar[i] = 2.0 * x[i] - old;
        }
    }
    return x;
}

// The session's TV solve `o` (ADMM, 5000 steps) reaches the minimiser of ||E x - b||^2 + lambda s TV(x) that
// Chambolle-Pock finds on the dense `sys`: s to 1e-12, objective to 1e-7, image to 1e-4, the records' cost; the
// uniform problem's minimiser is elsewhere (5e-3 for one coil when written). SENSE: its complex image.
void expectTheWeightedTvMinimiser(ReconstructionSession& s, const WeightedSystem& sys, const Grid& grid, double lambda, double scale,
                                  SolveOptions o) {
    const double weight = lambda * scale;
    const CsrMatrix grad = gradientMatrix(grid);
    const ComplexArray x = primalDualTv(sys, grid, weight);
    const double f_ref = sys.dataTerm(x) + weight * isotropicTv(grad, x);
    o.sparse_solver = SparseSolver::Admm;
    o.iterations = 5000;
    o.tolerance = 0;
    const bool sense = o.coil_combination == CoilCombination::Sense;
    const SolveResult res = s.solve(o);
    const ComplexArray& image = sense ? res.complex_image : res.image;
    EXPECT_EQ(res.solver, "admm");
    EXPECT_NEAR(res.lambda_scale, scale, 1e-12 * scale);
    const double f = sys.dataTerm(image) + weight * isotropicTv(grad, image);
    EXPECT_NEAR(f, f_ref, 1e-7 * f_ref);
    EXPECT_LT(relativeError(image, x), 1e-4);
    EXPECT_NEAR(res.history.back().cost(), f, 1e-6 * f);  // the records carry the weighted problem's cost

    SolveOptions uniform = o;
    uniform.weighting = DataWeighting::Uniform;
    const SolveResult u = s.solve(uniform);
    EXPECT_GT(relativeError(sense ? u.complex_image : u.image, x), 1e-3);
}

// TV (ADMM, its defaults: balanced rho, over-relaxation, the circulant of F^H D F as the inner
// CG's preconditioner) with the weighted data term reaches the minimiser of
// ||E x - b||^2 + lambda s_D TV(x) that Chambolle-Pock finds on the dense E in float64; the
// uniform problem's minimiser is elsewhere.
TEST(DensityWeightedSolve, TotalVariationMatchesAPrimalDualSolutionOfTheWeightedObjective) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallPiecewiseRadial(5);
    s.setDataset(d);
    ASSERT_EQ(s.weightingDensityMethod(), DensityMethod::Jackson);
    const WeightedSystem sys = weightedSystem(*d, s.densityWeights(s.weightingDensityMethod()));
    expectTheWeightedTvMinimiser(s, sys, d->grid, 0.05, sys.s, weighted(RegularizerKind::TotalVariation, 0.05));
}

// SENSE + TV (ADMM, its inner CG preconditioned by the weighted circulant corrected by the maps' energy)
// with the weighted data term reaches the minimiser of ||E_D x - b||^2 + lambda s TV(x), s = s_D times the
// maps' mean energy inside (senseLambdaScale), that Chambolle-Pock finds on the dense E_D in float64.
TEST(DensityWeightedSolve, SenseTotalVariationMatchesAPrimalDualSolutionOfTheWeightedObjective) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallPiecewiseRadial(5, 3);
    s.setDataset(d);
    const CoilMaps maps = smallMaps(d->grid, 3);
    s.setCoilMaps(maps);
    const WeightedSystem sys = weightedSenseSystem(*d, s.densityWeights(s.weightingDensityMethod()), maps.maps);
    // The maps' mean energy over the voxels above 0.1 of its largest (SensePreconditioner::kInside).
    const std::size_t n = d->grid.voxels();
    std::vector<double> g(n, 0.0);
    for (std::size_t v = 0; v < n; ++v)
        for (int c = 0; c < 3; ++c) g[v] += std::norm(maps.maps[std::size_t(c) * n + v]);
    const double largest = *std::max_element(g.begin(), g.end());
    double inside_sum = 0;
    int inside = 0;
    for (double e : g)
        if (e > 0.1 * largest) inside_sum += e, ++inside;
    SolveOptions o = weighted(RegularizerKind::TotalVariation, 0.05);
    o.coil_combination = CoilCombination::Sense;
    expectTheWeightedTvMinimiser(s, sys, d->grid, 0.05, sys.s * inside_sum / inside, o);
}

// The wavelet prior (FISTA, fixed shifts) with the weighted data term reaches the minimiser of
// ||E x - b||^2 + lambda s_D ||W x||_1 that ISTA converges to on the dense E in float64 (more
// samples than voxels: strongly convex, one minimiser).
TEST(DensityWeightedSolve, WaveletMatchesIstasSolutionOfTheWeightedObjective) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallPiecewiseRadial(13);
    s.setDataset(d);
    const WeightedSystem sys = weightedSystem(*d, s.densityWeights(s.weightingDensityMethod()));
    ASSERT_GT(sys.rows, sys.cols);
    const double lambda = 0.05, weight = lambda * sys.s;
    const std::vector<CsrMatrix> levels = waveletMatrices(d->grid, WaveletKind::Haar);
    auto forward = [&](ComplexArray v) {
        ComplexArray y(v.size());
        for (const CsrMatrix& l : levels) {
            l.multiply(v.data(), y.data());
            std::swap(v, y);
        }
        return v;
    };
    auto adjoint = [&](ComplexArray c) {
        ComplexArray y(c.size());
        for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
            it->transposed().multiply(c.data(), y.data());
            std::swap(c, y);
        }
        return c;
    };
    auto objective = [&](const ComplexArray& v) {
        double f = sys.dataTerm(v);
        for (const cdouble& c : forward(v)) f += weight * std::abs(c);
        return f;
    };
    // ISTA: x <- prox(x - grad / L), grad = E^H (E x - b) (half the gradient of ||E x - b||^2).
    const double lipschitz = normalNorm(sys) * 1.01;
    ComplexArray x(sys.cols, 0.0);
    for (int it = 0; it < 20000; ++it) {
        ComplexArray res = sys.apply(x);
        for (std::size_t m = 0; m < sys.rows; ++m) res[m] -= sys.b[m];
        const ComplexArray g = sys.applyAdjoint(res);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] -= g[i] / lipschitz;
        ComplexArray c = forward(x);
        const double t = weight / (2 * lipschitz);
        for (auto& ci : c) ci = std::abs(ci) > t ? ci * (1 - t / std::abs(ci)) : cdouble(0);
        x = adjoint(c);
    }
    int zeros = 0;  // the l1 term matters: some coefficients are zero
    for (const cdouble& c : forward(x)) zeros += std::abs(c) < 1e-12;
    ASSERT_GE(zeros, 4);
    const double f_ref = objective(x);

    SolveOptions o = weighted(RegularizerKind::Wavelet, lambda);
    o.sparse_solver = SparseSolver::Fista;
    o.wavelet_shifts = WaveletShifts::Fixed;
    o.wavelet = WaveletKind::Haar;
    o.iterations = 3000;
    o.tolerance = 0;
    const SolveResult res = s.solve(o);
    EXPECT_EQ(res.solver, "fista");
    const double f = objective(res.image);
    EXPECT_NEAR(f, f_ref, 1e-10 * f_ref);
    EXPECT_LT(relativeError(res.image, x), 1e-7);
    EXPECT_NEAR(res.history.back().cost(), f, 1e-9 * f);

    SolveOptions uniform = o;
    uniform.weighting = DataWeighting::Uniform;
    EXPECT_GT(relativeError(s.solve(uniform).image, x), 1e-3);  // 9e-3 when written: another problem
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
