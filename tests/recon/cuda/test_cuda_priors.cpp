// The sparse priors on the GPU: the prox kernels and the group l1 norm against the CPU
// backend, the TV and wavelet operators (the matrix-free stencil kernels), an ADMM solve and
// FISTA's and POGM's wavelet solves (with the uniform and the density-weighted data term), all within
// float32 tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/priors/priors.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/admm.hpp"

using namespace recon;
using namespace recon::test;

TEST(GpuPriors, GroupSoftThresholdAndNormMatchTheCpu) {
    auto g = gpu(Precision::Single);
    auto c = createCpuBackend(Precision::Double);
    for (std::size_t group : {1u, 2u, 3u}) {
        const std::size_t stride = 70001;  // not a multiple of the block size
        ComplexArray x = randomComplex(group * stride, unsigned(group));
        for (std::size_t k = 0; k < group; ++k) x[5 + k * stride] = 0;  // a group of zeros
        for (double t : {0.0, 0.3, 1.0}) {
            Vector xg = g->fromHost(x), yg = g->make(x.size());
            Vector xc = c->fromHost(x), yc = c->make(x.size());
            g->groupSoftThreshold(xg, group, t, yg);
            c->groupSoftThreshold(xc, group, t, yc);
            EXPECT_LT(relativeError(g->toHost(yg), c->toHost(yc)), 1e-6) << "group " << group << " t " << t;
            g->groupSoftThreshold(xg, group, t, xg);  // in place
            EXPECT_LT(relativeError(g->toHost(xg), c->toHost(yc)), 1e-6);
        }
        Vector xg = g->fromHost(x), xc = c->fromHost(x);
        const double ng = g->groupNorm1(xg, group), nc = c->groupNorm1(xc, group);
        EXPECT_NEAR(ng, nc, 1e-6 * nc) << "group " << group;
    }
    Vector v = g->make(10), y = g->make(10);
    EXPECT_THROW(g->groupSoftThreshold(v, 3, 0.1, y), InputError);
    EXPECT_THROW(g->groupSoftThreshold(v, 1, -1, y), InputError);
    EXPECT_THROW(g->groupNorm1(v, 4), InputError);
}

TEST(GpuPriors, TransformsMatchTheCpu) {
    auto g = gpu(Precision::Single);
    auto c = createCpuBackend(Precision::Double);
    const Grid grid = Grid::make3D(24, 16, 12);
    const ComplexArray x = randomComplex(grid.voxels(), 3);
    const ComplexArray ref = randomComplex(grid.voxels(), 4);
    for (int which = 0; which < 4; ++which) {
        auto make = [&](Backend& b) {
            switch (which) {
                case 0: return totalVariation(b, grid, 1.0);
                case 1: return totalVariation(b, grid, 1.0, false, &ref);
                case 2: return waveletSparsity(b, grid, 1.0, WaveletKind::Haar);
                default: return waveletSparsity(b, grid, 1.0, WaveletKind::Daubechies4);
            }
        };
        const SparseTerm tg = make(*g), tc = make(*c);
        const ComplexArray fg = applyForward(*tg.transform, x), fc = applyForward(*tc.transform, x);
        EXPECT_LT(relativeError(fg, fc), 1e-5) << which;
        EXPECT_LT(relativeError(applyAdjoint(*tg.transform, fc), applyAdjoint(*tc.transform, fc)), 1e-5) << which;
        EXPECT_LT(relativeError(applyNormal(*tg.transform, x), applyNormal(*tc.transform, x)), 1e-5) << which;
    }
}

// The stencil kernels against the CPU backend's loops (themselves checked against the CSR matrices
// in tests/recon/priors): the gradient with and without edge weights in its three products, both
// wavelets forward and back, odd and even sizes, 2D and 3D, both precisions, each applied twice.
TEST(GpuPriors, StencilOperatorsMatchTheCpu) {
    auto c = createCpuBackend(Precision::Double);
    for (Precision prec : {Precision::Single, Precision::Double}) {
        auto g = gpu(prec);
        const double tol = prec == Precision::Single ? 2e-6 : 1e-13;
        for (const Grid& grid : {Grid::make2D(33, 20), Grid::make2D(64, 48), Grid::make3D(17, 10, 9), Grid::make3D(96, 80, 36)}) {
            std::vector<double> w;
            std::mt19937 rng(5);
            std::uniform_real_distribution<double> u(0.0, 2.0);
            for (std::size_t i = 0; i < std::size_t(grid.dims) * grid.voxels(); ++i) w.push_back(i % 5 == 1 ? 0.0 : u(rng));
            for (bool weighted : {false, true}) {
                const std::string what = grid.describe() + (weighted ? " weighted " : " ") + toString(prec);
                const LinearOperatorPtr dg = gradientOperator(*g, grid, weighted ? &w : nullptr);
                const LinearOperatorPtr dc = gradientOperator(*c, grid, weighted ? &w : nullptr);
                for (unsigned pass = 0; pass < 2; ++pass) {
                    const ComplexArray x = randomComplex(grid.voxels(), 20 + pass), y = randomComplex(dc->outSize(), 30 + pass);
                    EXPECT_LT(relativeError(applyForward(*dg, x), applyForward(*dc, x)), tol) << what;
                    EXPECT_LT(relativeError(applyAdjoint(*dg, y), applyAdjoint(*dc, y)), tol) << what;
                    EXPECT_LT(relativeError(applyNormal(*dg, x), applyNormal(*dc, x)), tol) << what;
                }
            }
            for (WaveletKind kind : {WaveletKind::Haar, WaveletKind::Daubechies4}) {
                const std::string what = grid.describe() + " " + toString(kind) + " " + toString(prec);
                const LinearOperatorPtr wg = waveletOperator(*g, grid, kind), wc = waveletOperator(*c, grid, kind);
                for (unsigned pass = 0; pass < 2; ++pass) {
                    const ComplexArray x = randomComplex(grid.voxels(), 40 + pass);
                    EXPECT_LT(relativeError(applyForward(*wg, x), applyForward(*wc, x)), tol) << what;
                    EXPECT_LT(relativeError(applyAdjoint(*wg, x), applyAdjoint(*wc, x)), tol) << what;
                }
            }
        }
    }
}

// The fused Haar prox and l1 norm (one block per tile, the shift folded in) against the CPU
// backend's tile loops (checked against the level-by-level definition in tests/recon/priors):
// 2D and 3D, tiles from 1 to kMaxHaarTile voxels (64^3 with 4 levels: 16^3, 64 KB in float64),
// offsets that wrap, in place, both precisions.
TEST(GpuPriors, HaarShrinkAndNormMatchTheCpu) {
    auto c = createCpuBackend(Precision::Double);
    for (Precision prec : {Precision::Single, Precision::Double}) {
        auto g = gpu(prec);
        const double tol = prec == Precision::Single ? 2e-6 : 1e-13;
        for (auto [grid, levels] : {std::pair{Grid::make2D(33, 20), 4}, std::pair{Grid::make2D(64, 48), 4},
                                    std::pair{Grid::make3D(24, 16, 12), 4}, std::pair{Grid::make3D(64, 64, 64), 4},
                                    std::pair{Grid::make3D(128, 64, 32), 2}, std::pair{Grid::make2D(7, 5), 4}}) {
            const auto splits = haarSplits(grid, levels);
            ASSERT_TRUE(splits.has_value());
            const ComplexArray x = randomComplex(grid.voxels(), 50);
            Vector xg = g->fromHost(x), xc = c->fromHost(x);
            const std::vector<std::size_t> shifts{0, 12345 % grid.voxels(), grid.voxels() - 1};
            const double ng = g->haarNorm1(grid, *splits, {0}, xg), nc = c->haarNorm1(grid, *splits, {0}, xc);
            EXPECT_NEAR(ng, nc, 1e-6 * nc) << grid.describe();
            const double mg = g->haarNorm1(grid, *splits, shifts, xg), mc = c->haarNorm1(grid, *splits, shifts, xc);
            EXPECT_NEAR(mg, mc, 1e-6 * mc) << grid.describe();
            for (std::size_t offset : {std::size_t(0), std::size_t(12345) % grid.voxels(), grid.voxels() - 3}) {
                for (double t : {0.0, 0.5}) {
                    const std::string what = grid.describe() + " offset " + std::to_string(offset) + " t " + std::to_string(t) +
                                             " " + toString(prec);
                    Vector yg = g->make(grid.voxels()), yc = c->make(grid.voxels());
                    g->haarShrink(grid, *splits, offset, t, xg, yg);
                    c->haarShrink(grid, *splits, offset, t, xc, yc);
                    const ComplexArray ref = c->toHost(yc);
                    EXPECT_LT(relativeError(g->toHost(yg), ref), tol) << what;
                    Vector inplace = g->fromHost(x);
                    g->haarShrink(grid, *splits, offset, t, inplace, inplace);
                    EXPECT_LT(relativeError(g->toHost(inplace), ref), tol) << what;
                }
            }
        }
    }
}

namespace {

// The same solve on a GPU session (float32) and a CPU one (float64): the image, the final cost and
// the PSNR agree. Returns the GPU's result; `gpu_session` keeps its resident solve.
SolveResult expectGpuFollowsCpu(ReconstructionSession& gpu_session, const std::shared_ptr<Dataset>& d, const SolveOptions& o,
                                const std::string& label) {
    ReconstructionSession sc(createCpuBackend(Precision::Double));
    sc.setDataset(d);
    const SolveResult rg = gpu_session.solve(o), rc = sc.solve(o);
    EXPECT_NEAR(rg.lambda_scale, rc.lambda_scale, 1e-5 * rc.lambda_scale) << label;
    EXPECT_LT(relativeError(rg.image, rc.image), 2e-3) << label;
    EXPECT_NEAR(rg.history.back().cost(), rc.history.back().cost(), 1e-3 * rc.history.back().cost()) << label;
    EXPECT_NEAR(measureQuality(rg.image, d->truth, false).psnr_db, measureQuality(rc.image, d->truth, false).psnr_db, 0.05) << label;
    return rg;
}

}  // namespace

TEST(GpuPriors, SessionTotalVariationMatchesTheCpu) {
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    SolveOptions o;
    o.regularizer = RegularizerKind::TotalVariation;
    o.lambda = defaultSparseLambda(o.regularizer);
    o.iterations = 100;
    ReconstructionSession sg(gpu(Precision::Single));
    sg.setDataset(d);
    expectGpuFollowsCpu(sg, d, o, "tv");
}

// The wavelet prior's proximal gradient solves (the shifts drawn on the host: the same on both).
TEST(GpuPriors, SessionWaveletFistaAndPogmMatchTheCpu) {
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    for (SparseSolver solver : {SparseSolver::Fista, SparseSolver::Pogm}) {
        SolveOptions o;
        o.regularizer = RegularizerKind::Wavelet;
        o.lambda = defaultSparseLambda(o.regularizer);
        o.sparse_solver = solver;
        o.iterations = 100;
        ReconstructionSession sg(gpu(Precision::Single));
        sg.setDataset(d);
        EXPECT_EQ(expectGpuFollowsCpu(sg, d, o, toString(solver)).solver, toString(solver));
    }
}

// The density-weighted data term (F^H D F, F^H D d, s_D, ADMM's circulant of Q_D, FISTA's ||F^H D F||)
// with TV (ADMM) and wavelets (POGM): the GPU's solve follows the CPU's, and it is the weighted
// problem's (the uniform one's image is elsewhere).
TEST(GpuPriors, SessionDensityWeightedTvAndWaveletMatchTheCpu) {
    const std::shared_ptr<Dataset> d = simulate(demoCase("small-2d"));
    for (RegularizerKind kind : {RegularizerKind::TotalVariation, RegularizerKind::Wavelet}) {
        SolveOptions o;
        o.regularizer = kind;
        o.lambda = defaultSparseLambda(kind);
        o.weighting = DataWeighting::Density;
        o.iterations = 100;
        ReconstructionSession sg(gpu(Precision::Single));
        sg.setDataset(d);
        const SolveResult rg = expectGpuFollowsCpu(sg, d, o, toString(kind));
        SolveOptions uniform = o;
        uniform.weighting = DataWeighting::Uniform;
        EXPECT_GT(relativeError(sg.solve(uniform).image, rg.image), 1e-2) << toString(kind);
    }
}
