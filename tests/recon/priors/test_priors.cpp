// The sparse priors' pieces: the prox steps against brute-force minimisation, the
// gradient's adjointness, the wavelet transforms' perfect reconstruction and orthogonality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "../test_support.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/priors/priors.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// t sum_g ||y_g|| + 1/2 ||y - x||^2, the objective the group prox minimises.
double proxObjective(const ComplexArray& y, const ComplexArray& x, std::size_t group, double t) {
    const std::size_t stride = x.size() / group;
    double l1 = 0, d2 = 0;
    for (std::size_t i = 0; i < stride; ++i) {
        double n2 = 0;
        for (std::size_t k = 0; k < group; ++k) n2 += std::norm(y[i + k * stride]);
        l1 += std::sqrt(n2);
    }
    for (std::size_t i = 0; i < x.size(); ++i) d2 += std::norm(y[i] - x[i]);
    return t * l1 + 0.5 * d2;
}

ComplexArray prox(Backend& b, const ComplexArray& x, std::size_t group, double t) {
    Vector v = b.fromHost(x), y = b.make(x.size());
    b.groupSoftThreshold(v, group, t, y);
    return b.toHost(y);
}

}  // namespace

TEST(Prox, SoftThresholdMatchesAGridSearch) {
    auto b = createCpuBackend(Precision::Double);
    // One complex value at a time: the minimiser of t|y| + |y - x|^2 / 2 over a fine grid of y.
    for (cdouble x : {cdouble(0.3, -0.4), cdouble(-0.05, 0.02), cdouble(1.2, 0.7), cdouble(0, 0)}) {
        const double t = 0.2;
        const ComplexArray got = prox(*b, {x}, 1, t);
        double best = 1e300;
        cdouble arg;
        const int steps = 1200;
        for (int i = 0; i <= steps; ++i)
            for (int j = 0; j <= steps; ++j) {
                const cdouble y(-1.5 + 3.0 * i / steps, -1.5 + 3.0 * j / steps);
                const double f = proxObjective({y}, {x}, 1, t);
                if (f < best) best = f, arg = y;
            }
        EXPECT_LE(proxObjective(got, {x}, 1, t), best + 1e-12) << x;
        EXPECT_NEAR(std::abs(got[0] - arg), 0.0, 3.0 / steps) << x;
    }
}

TEST(Prox, GroupSoftThresholdIsTheMinimiser) {
    auto b = createCpuBackend(Precision::Double);
    std::mt19937 rng(7);
    std::normal_distribution<double> nd;
    for (std::size_t group : {1u, 2u, 3u}) {
        const std::size_t stride = 5;
        ComplexArray x = randomComplex(group * stride, unsigned(11 + group));
        x[1] *= 0.01;  // a group (partly) below the threshold
        for (std::size_t k = 0; k < group; ++k) x[2 + k * stride] = 0;  // a group of zeros
        const double t = 0.4;
        const ComplexArray y = prox(*b, x, group, t);
        const double f = proxObjective(y, x, group, t);
        // The objective is convex: no point nearby, in any direction, may be lower.
        for (int trial = 0; trial < 4000; ++trial) {
            ComplexArray z = y;
            const double step = trial < 2000 ? 1e-3 : 1e-1;
            for (auto& v : z) v += step * cdouble(nd(rng), nd(rng));
            ASSERT_GE(proxObjective(z, x, group, t), f - 1e-12) << "group " << group << " trial " << trial;
        }
        // A group of zeros stays zero; a small group vanishes entirely.
        for (std::size_t k = 0; k < group; ++k) EXPECT_EQ(y[2 + k * stride], cdouble(0));
    }
    // y may be x.
    ComplexArray x = randomComplex(8, 3);
    Vector v = b->fromHost(x);
    b->groupSoftThreshold(v, 2, 0.3, v);
    EXPECT_LT(relativeError(b->toHost(v), prox(*b, x, 2, 0.3)), 1e-15);
}

TEST(Prox, GroupNormAndBadParameters) {
    auto b = createCpuBackend(Precision::Double);
    const ComplexArray x = {cdouble(3, 0), cdouble(0, 1), cdouble(4, 0), cdouble(0, 0)};
    Vector v = b->fromHost(x);
    EXPECT_NEAR(b->groupNorm1(v, 2), 5.0 + 1.0, 1e-14);  // groups {x0, x2} and {x1, x3}
    EXPECT_NEAR(b->norm1(v), 3 + 1 + 4, 1e-14);
    Vector y = b->make(4);
    EXPECT_THROW(b->groupSoftThreshold(v, 3, 0.1, y), InputError);
    EXPECT_THROW(b->groupSoftThreshold(v, 0, 0.1, y), InputError);
    EXPECT_THROW(b->groupSoftThreshold(v, 1, -1.0, y), InputError);
    EXPECT_THROW(b->groupNorm1(v, 3), InputError);
}

TEST(TotalVariation, GradientAndDivergenceAreAdjoint) {
    auto b = createCpuBackend(Precision::Double);
    for (const Grid& g : {Grid::make2D(7, 5), Grid::make3D(4, 6, 3)}) {
        const SparseTerm tv = totalVariation(*b, g, 1.0);
        EXPECT_EQ(tv.group, std::size_t(g.dims));
        EXPECT_EQ(tv.transform->outSize(), std::size_t(g.dims) * g.voxels());
        const ComplexArray x = randomComplex(g.voxels(), 1), y = randomComplex(tv.transform->outSize(), 2);
        const cdouble lhs = inner(applyForward(*tv.transform, x), y);
        const cdouble rhs = inner(x, applyAdjoint(*tv.transform, y));
        EXPECT_NEAR(std::abs(lhs - rhs), 0.0, 1e-12 * std::abs(lhs));
        // The normal (the precomputed gram) equals D^T D.
        EXPECT_LT(relativeError(applyNormal(*tv.transform, x), applyAdjoint(*tv.transform, applyForward(*tv.transform, x))), 1e-13);
        // A ramp along x: gradient (1, 0, 0) inside, zero in the last column.
        ComplexArray ramp(g.voxels());
        for (int z = 0; z < g.n[2]; ++z)
            for (int yy = 0; yy < g.n[1]; ++yy)
                for (int xx = 0; xx < g.n[0]; ++xx) ramp[g.index(xx, yy, z)] = double(xx);
        const ComplexArray d = applyForward(*tv.transform, ramp);
        for (int z = 0; z < g.n[2]; ++z)
            for (int yy = 0; yy < g.n[1]; ++yy)
                for (int xx = 0; xx < g.n[0]; ++xx) {
                    const std::size_t v = g.index(xx, yy, z);
                    EXPECT_EQ(d[v], cdouble(xx + 1 < g.n[0] ? 1.0 : 0.0));
                    for (int a = 1; a < g.dims; ++a) EXPECT_EQ(d[std::size_t(a) * g.voxels() + v], cdouble(0));
                }
    }
    EXPECT_EQ(totalVariation(*b, Grid::make2D(4, 4), 1.0, true).group, 1u);
}

TEST(TotalVariation, AnatomicalWeightsFollowTheReferenceEdges) {
    auto b = createCpuBackend(Precision::Double);
    const Grid g = Grid::make2D(6, 4);
    ComplexArray ref(g.voxels(), 1.0);
    for (int y = 0; y < 4; ++y)
        for (int x = 3; x < 6; ++x) ref[g.index(x, y, 0)] = 2.0;  // an edge between x = 2 and 3
    AnatomicalOptions o;
    o.edge_weight = 0.1;
    const std::vector<double> w = anatomicalEdgeWeights(g, ref, o);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 6; ++x) {
            EXPECT_EQ(w[g.index(x, y, 0)], x == 2 ? 0.1 : 1.0);
            EXPECT_EQ(w[g.voxels() + g.index(x, y, 0)], 1.0);
        }
    const SparseTerm tv = totalVariation(*b, g, 1.0, false, &ref, o);
    EXPECT_EQ(tv.name, "anatomical-tv");
    // The step image costs 0.1 per row across the edge instead of 1.
    const SparseTerm plain = totalVariation(*b, g, 1.0);
    Vector step = b->fromHost(ref), out = b->make(tv.transform->outSize());
    tv.transform->forward(step, out);
    EXPECT_NEAR(b->groupNorm1(out, 2), 4 * 0.1, 1e-14);
    plain.transform->forward(step, out);
    EXPECT_NEAR(b->groupNorm1(out, 2), 4 * 1.0, 1e-14);
    EXPECT_THROW(anatomicalEdgeWeights(g, ComplexArray(3), o), InputError);
    EXPECT_THROW(anatomicalEdgeWeights(g, ComplexArray(g.voxels()), o), InputError);  // all zero
}

TEST(Wavelet, PerfectReconstructionAndOrthogonality) {
    auto b = createCpuBackend(Precision::Double);
    for (WaveletKind kind : {WaveletKind::Haar, WaveletKind::Daubechies4}) {
        for (const Grid& g : {Grid::make2D(32, 24), Grid::make2D(17, 16), Grid::make3D(16, 8, 12), Grid::make2D(5, 3)}) {
            const SparseTerm w = waveletSparsity(*b, g, 1.0, kind);
            const ComplexArray x = randomComplex(g.voxels(), 4);
            const ComplexArray c = applyForward(*w.transform, x);
            EXPECT_LT(relativeError(applyAdjoint(*w.transform, c), x), 1e-13) << toString(kind) << " " << g.describe();
            double nx = 0, nc = 0;
            for (auto v : x) nx += std::norm(v);
            for (auto v : c) nc += std::norm(v);
            EXPECT_NEAR(nc, nx, 1e-12 * nx);
            const ComplexArray y = randomComplex(g.voxels(), 5);
            EXPECT_LT(relativeError(applyForward(*w.transform, applyAdjoint(*w.transform, y)), y), 1e-13);
            EXPECT_LT(relativeError(applyNormal(*w.transform, x), x), 1e-15);
        }
        // A constant image has no detail: only the coarsest low-pass coefficients are non-zero.
        const Grid g = Grid::make2D(32, 32);
        const SparseTerm w = waveletSparsity(*b, g, 1.0, kind, 3);
        const ComplexArray c = applyForward(*w.transform, ComplexArray(g.voxels(), 1.0));
        for (int y = 0; y < 32; ++y)
            for (int x = 0; x < 32; ++x)
                if (x >= 4 || y >= 4) EXPECT_NEAR(std::abs(c[g.index(x, y, 0)]), 0.0, 1e-12) << x << "," << y;
    }
    // Levels: 32 -> 16 -> 8 -> 4 along each axis (three splits of two axes), none along an odd axis.
    EXPECT_EQ(waveletMatrices(Grid::make2D(32, 32), WaveletKind::Haar, 8).size(), 6u);
    EXPECT_EQ(waveletMatrices(Grid::make2D(32, 7), WaveletKind::Haar, 8).size(), 3u);
    EXPECT_THROW(parseWavelet("sym8"), InputError);
    EXPECT_THROW(waveletLevelMatrix(Grid::make2D(6, 6), WaveletKind::Daubechies4, 0, {2, 6, 1}), InputError);
}

// The matrix-free transforms (VectorSpace's stencils) against the CSR matrices they replace.
namespace {

ComplexArray csrProduct(const CsrMatrix& m, const ComplexArray& x) {
    ComplexArray y(std::size_t(m.rows));
    m.multiply(x.data(), y.data());
    return y;
}

const Grid kStencilGrids[] = {Grid::make2D(7, 5), Grid::make2D(8, 6), Grid::make2D(1, 9), Grid::make3D(5, 4, 3),
                              Grid::make3D(6, 4, 8)};

}  // namespace

TEST(PriorOperators, GradientEqualsTheCsrMatrix) {
    auto b = createCpuBackend(Precision::Double);
    for (const Grid& g : kStencilGrids) {
        for (bool weighted : {false, true}) {
            std::vector<double> w;
            if (weighted) {
                std::mt19937 rng(3);
                std::uniform_real_distribution<double> u(0.0, 2.0);
                for (std::size_t i = 0; i < std::size_t(g.dims) * g.voxels(); ++i) w.push_back(i % 7 == 3 ? 0.0 : u(rng));
            }
            const std::vector<double>* wp = weighted ? &w : nullptr;
            const CsrMatrix d = gradientMatrix(g, wp), dt = d.transposed(), gram = d.gram(dt);
            const LinearOperatorPtr op = gradientOperator(*b, g, wp);
            const std::string what = g.describe() + (weighted ? " weighted" : "");
            const ComplexArray x = randomComplex(g.voxels(), 5), y = randomComplex(op->outSize(), 6);
            // Applied twice: nothing of the first call may leak into the second.
            for (int pass = 0; pass < 2; ++pass) {
                const ComplexArray xp = pass ? randomComplex(g.voxels(), 7) : x;
                EXPECT_LT(relativeError(applyForward(*op, xp), csrProduct(d, xp)), 1e-14) << what;
                EXPECT_LT(relativeError(applyAdjoint(*op, y), csrProduct(dt, y)), 1e-14) << what;
                EXPECT_LT(relativeError(applyNormal(*op, xp), csrProduct(gram, xp)), 1e-13) << what;
            }
            const cdouble lhs = inner(applyForward(*op, x), y), rhs = inner(x, applyAdjoint(*op, y));
            EXPECT_NEAR(std::abs(lhs - rhs), 0.0, 1e-12 * std::abs(lhs)) << what;
        }
    }
}

// The unweighted normal product D^H D takes a vectorised loop on inner lines; with unit weights the
// general loop runs instead. Both must give the same bits (the CG iterates must not change), in both
// precisions, on grids with inner lines and on grids of only boundary lines.
TEST(PriorOperators, UnweightedNormalEqualsUnitWeightsBitForBit) {
    for (auto p : {Precision::Single, Precision::Double}) {
        auto b = createCpuBackend(p);
        for (const Grid& g : {Grid::make2D(7, 5), Grid::make2D(3, 3), Grid::make2D(2, 6), Grid::make3D(6, 4, 5),
                              Grid::make3D(5, 3, 3), Grid::make2D(37, 19)}) {
            const std::string what = g.describe() + " " + toString(p);
            const Vector x = b->fromHost(randomComplex(g.voxels(), 31));
            const Vector ones = b->fromHost(ComplexArray(std::size_t(g.dims) * g.voxels(), cdouble(1)));
            Vector plain = b->make(g.voxels()), unit = b->make(g.voxels());
            b->gradient(g, nullptr, Product::Normal, x, plain);
            b->gradient(g, &ones, Product::Normal, x, unit);
            const ComplexArray a = b->toHost(plain), c = b->toHost(unit);
            ASSERT_EQ(a.size(), c.size());
            for (std::size_t v = 0; v < a.size(); ++v) ASSERT_EQ(a[v], c[v]) << what << " voxel " << v;
        }
    }
}

// The session's quadratic penalties without matrices: the (weighted) gradient's normal product
// must be makeRegularizer's CSR W^T W (the anatomical weights enter squared there, as pairs
// w (x_b - x_a)), and ||W x||^2 (the cost records) the CSR's, on odd and even 2D/3D grids.
TEST(PriorOperators, QuadraticRegularizerEqualsTheCsrNormal) {
    auto b = createCpuBackend(Precision::Double);
    for (const Grid& g : kStencilGrids) {
        // A reference with many edges at threshold 0.3, and a weight whose square differs from it.
        ComplexArray ref = randomComplex(g.voxels(), 11);
        AnatomicalOptions opts;
        opts.edge_threshold = 0.3;
        opts.edge_weight = 0.05;
        const std::vector<double> w = anatomicalEdgeWeights(g, ref, opts);
        if (g.voxels() > 9) {
            const auto edges = std::count(w.begin(), w.end(), 0.05);
            ASSERT_GT(edges, 0) << g.describe();
            ASSERT_LT(std::size_t(edges), w.size() / 2) << g.describe();
        }
        for (RegularizerKind kind : {RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
            const std::string what = g.describe() + " " + toString(kind);
            const Regularizer csr = makeRegularizer(kind, g, &ref, opts);
            const LinearOperatorPtr op = quadraticRegularizer(*b, kind, g, &ref, opts);
            EXPECT_EQ(op->inSize(), g.voxels()) << what;
            for (unsigned seed : {21u, 22u}) {
                const ComplexArray x = randomComplex(g.voxels(), seed);
                EXPECT_LT(relativeError(applyNormal(*op, x), csrProduct(csr.normal, x)), 1e-14) << what;
                double free2 = 0, csr2 = 0;
                for (const cdouble v : applyForward(*op, x)) free2 += std::norm(v);
                for (const cdouble v : csrProduct(csr.w, x)) csr2 += std::norm(v);
                EXPECT_NEAR(free2, csr2, 1e-13 * csr2) << what;
            }
        }
    }
    const Grid g = Grid::make2D(4, 4);
    EXPECT_THROW(quadraticRegularizer(*b, RegularizerKind::AnatomicalFiniteDifference, g, nullptr), InputError);
    EXPECT_THROW(quadraticRegularizer(*b, RegularizerKind::Tikhonov, g), InputError);
    EXPECT_THROW(quadraticRegularizer(*b, RegularizerKind::TotalVariation, g), InputError);
}

TEST(PriorOperators, WaveletEqualsTheCsrLevels) {
    auto b = createCpuBackend(Precision::Double);
    for (WaveletKind kind : {WaveletKind::Haar, WaveletKind::Daubechies4}) {
        for (const Grid& g : {Grid::make2D(32, 24), Grid::make2D(17, 16), Grid::make2D(5, 3), Grid::make3D(16, 8, 12),
                              Grid::make3D(24, 9, 16)}) {
            const std::string what = toString(kind) + " " + g.describe();
            const std::vector<CsrMatrix> levels = waveletMatrices(g, kind);
            const LinearOperatorPtr op = waveletOperator(*b, g, kind);
            for (int pass = 0; pass < 2; ++pass) {
                const ComplexArray x = randomComplex(g.voxels(), unsigned(8 + pass));
                ComplexArray fwd = x, adj = x;
                for (const CsrMatrix& m : levels) fwd = csrProduct(m, fwd);
                for (auto it = levels.rbegin(); it != levels.rend(); ++it) adj = csrProduct(it->transposed(), adj);
                EXPECT_LT(relativeError(applyForward(*op, x), fwd), 1e-14) << what;
                EXPECT_LT(relativeError(applyAdjoint(*op, x), adj), 1e-14) << what;
                EXPECT_LT(relativeError(applyAdjoint(*op, applyForward(*op, x)), x), 1e-14) << what;
            }
            const ComplexArray x = randomComplex(g.voxels(), 11), y = randomComplex(g.voxels(), 12);
            const cdouble lhs = inner(applyForward(*op, x), y), rhs = inner(x, applyAdjoint(*op, y));
            EXPECT_NEAR(std::abs(lhs - rhs), 0.0, 1e-12 * std::abs(lhs)) << what;
        }
    }
}

TEST(PriorOperators, WaveletLevelWritesOnlyItsExtent) {
    auto b = createCpuBackend(Precision::Double);
    const Grid g = Grid::make2D(16, 12);
    const ComplexArray x = randomComplex(g.voxels(), 1), before = randomComplex(g.voxels(), 2);
    const std::array<int, 3> box{8, 12, 1}, extent{12, 12, 1};
    for (bool inverse : {false, true}) {
        Vector xv = b->fromHost(x), yv = b->fromHost(before);
        b->waveletLevel(g, 0, box, extent, waveletLowPass(WaveletKind::Daubechies4), inverse, xv, yv);
        const ComplexArray y = b->toHost(yv);
        CsrMatrix m = waveletLevelMatrix(g, WaveletKind::Daubechies4, 0, box);
        const ComplexArray ref = csrProduct(inverse ? m.transposed() : m, x);
        for (int yy = 0; yy < 12; ++yy)
            for (int xx = 0; xx < 16; ++xx) {
                const std::size_t v = g.index(xx, yy, 0);
                EXPECT_NEAR(std::abs(y[v] - (xx < extent[0] ? ref[v] : before[v])), 0.0, 1e-14) << xx << "," << yy;
            }
    }
}

TEST(PriorOperators, StencilsRejectBadShapes) {
    auto b = createCpuBackend(Precision::Double);
    const Grid g = Grid::make2D(8, 6);
    Vector x = b->make(g.voxels()), d = b->make(2 * g.voxels()), small = b->make(5);
    EXPECT_THROW(b->gradient(g, nullptr, Product::Forward, x, x), InputError);        // output too short
    EXPECT_THROW(b->gradient(g, nullptr, Product::Adjoint, x, d), InputError);        // input is not D's output
    EXPECT_THROW(b->gradient(g, &small, Product::Forward, x, d), InputError);         // weights of the wrong size
    EXPECT_THROW(b->gradient(Grid::make2D(0, 6), nullptr, Product::Normal, x, x), InputError);
    EXPECT_THROW(b->gradient(g, nullptr, Product::Normal, x, x), InputError);         // in place
    const std::vector<double> h = waveletLowPass(WaveletKind::Haar);
    Vector y = b->make(g.voxels());
    EXPECT_THROW(b->waveletLevel(g, 0, {7, 6, 1}, {8, 6, 1}, h, false, x, y), InputError);  // odd length
    EXPECT_THROW(b->waveletLevel(g, 0, {8, 6, 1}, {4, 6, 1}, h, false, x, y), InputError);  // extent inside the box
    EXPECT_THROW(b->waveletLevel(g, 2, {8, 6, 1}, {8, 6, 1}, h, false, x, y), InputError);  // no such axis
    EXPECT_THROW(b->waveletLevel(g, 0, {8, 6, 1}, {8, 6, 1}, {1.0}, false, x, y), InputError);
    EXPECT_THROW(b->waveletLevel(g, 0, {8, 6, 1}, {8, 6, 1}, h, false, x, x), InputError);  // in place
    EXPECT_THROW(b->waveletLevel(g, 0, {8, 6, 1}, {8, 6, 1}, h, false, x, small), InputError);
}

// The fused Haar prox (VectorSpace::haarShrink, one pass of tiles with the shift folded in) against
// its definition through the level-by-level transform (itself checked against the CSR matrices
// above) and cyclicShift: P^H W^H soft(W P x, t), and ||W x||_1; the generic path (db4, tiles
// too large) against the same.
namespace {

ComplexArray shrinkByDefinition(Backend& b, const LinearOperator& w, const ComplexArray& x, std::size_t offset, double t) {
    Vector xv = b.fromHost(x), shifted = b.make(x.size()), c = b.make(x.size());
    cyclicShift(b, xv, offset, shifted);
    w.forward(shifted, c);
    b.softThreshold(c, t, c);
    w.adjoint(c, shifted);
    cyclicShift(b, shifted, x.size() - offset % x.size(), xv);
    return b.toHost(xv);
}

}  // namespace

TEST(Wavelet, HaarShrinkEqualsTheLevelsWithTheShift) {
    auto b = createCpuBackend(Precision::Double);
    EXPECT_EQ(*haarSplits(Grid::make3D(128, 128, 128), 4), (std::array<int, 3>{4, 4, 4}));
    EXPECT_EQ(*haarSplits(Grid::make2D(32, 7), 8), (std::array<int, 3>{3, 0, 0}));
    EXPECT_FALSE(haarSplits(Grid::make2D(512, 512), 8).has_value());  // a tile of 128^2 voxels
    int checked = 0;
    for (const Grid& g : {Grid::make2D(32, 24), Grid::make2D(17, 16), Grid::make3D(16, 8, 12), Grid::make3D(20, 16, 8),
                          Grid::make2D(64, 64), Grid::make2D(5, 3)}) {
        for (int levels : {1, 2, 4, 6}) {
            const auto splits = haarSplits(g, levels);
            if (!splits) continue;
            const SparseTerm term = waveletSparsity(*b, g, 1.0, WaveletKind::Haar, levels);
            const auto* shrinker = dynamic_cast<const ShrinkableTransform*>(term.transform.get());
            ASSERT_NE(shrinker, nullptr);
            const ComplexArray x = randomComplex(g.voxels(), 7);
            const ComplexArray wx = applyForward(*term.transform, x);
            double l1 = 0;
            for (const cdouble& c : wx) l1 += std::abs(c);
            Vector xv = b->fromHost(x);
            EXPECT_NEAR(b->haarNorm1(g, *splits, {0}, xv), l1, 1e-12 * l1) << g.describe() << " levels " << levels;
            EXPECT_NEAR(shrinker->norm1(xv, {0}), l1, 1e-12 * l1);
            // The mean over shifts: ||W P x||_1 through cyclicShift and the levels.
            double shifted_l1 = 0;
            Vector px = b->make(g.voxels());
            cyclicShift(*b, xv, 37, px);
            for (const cdouble& c : applyForward(*term.transform, b->toHost(px))) shifted_l1 += std::abs(c);
            const double mean = (l1 + shifted_l1) / 2;
            EXPECT_NEAR(b->haarNorm1(g, *splits, {0, 37}, xv), mean, 1e-12 * mean) << g.describe();
            EXPECT_NEAR(shrinker->norm1(xv, {0, 37}), mean, 1e-12 * mean);
            for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(37), g.voxels() - 1}) {
                for (double t : {0.0, 0.3, 1.5}) {
                    const std::string what = g.describe() + " levels " + std::to_string(levels) + " offset " +
                                             std::to_string(offset) + " t " + std::to_string(t);
                    const ComplexArray ref = shrinkByDefinition(*b, *term.transform, x, offset, t);
                    Vector y = b->make(g.voxels());
                    b->haarShrink(g, *splits, offset, t, xv, y);
                    EXPECT_LT(relativeError(b->toHost(y), ref), 1e-13) << what;
                    Vector inplace = b->fromHost(x);
                    shrinker->shrink(inplace, offset, t, inplace);
                    EXPECT_LT(relativeError(b->toHost(inplace), ref), 1e-13) << what;
                    if (t == 0) EXPECT_LT(relativeError(ref, x), 1e-13) << what;  // soft(., 0) is the identity
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 100);
    // The generic path (db4; Haar with tiles beyond kMaxHaarTile) computes the same definition.
    for (auto [g, kind, levels] : {std::tuple{Grid::make2D(32, 24), WaveletKind::Daubechies4, 4},
                                   std::tuple{Grid::make2D(512, 256), WaveletKind::Haar, 8}}) {
        const SparseTerm term = waveletSparsity(*b, g, 1.0, kind, levels);
        const auto* shrinker = dynamic_cast<const ShrinkableTransform*>(term.transform.get());
        ASSERT_NE(shrinker, nullptr);
        const ComplexArray x = randomComplex(g.voxels(), 8);
        Vector y = b->fromHost(x);
        shrinker->shrink(y, 101, 0.4, y);
        EXPECT_LT(relativeError(b->toHost(y), shrinkByDefinition(*b, *term.transform, x, 101, 0.4)), 1e-13) << g.describe();
    }
    // Tiles that do not divide the grid, a tile too large, a negative threshold.
    Vector x = b->make(Grid::make2D(12, 8).voxels()), y = b->make(x.size());
    EXPECT_THROW(b->haarShrink(Grid::make2D(12, 8), {3, 0, 0}, 0, 0.1, x, y), InputError);
    EXPECT_THROW(b->haarShrink(Grid::make2D(12, 8), {1, 1, 1}, 0, 0.1, x, y), InputError);  // a split of an absent axis
    EXPECT_THROW(b->haarShrink(Grid::make2D(12, 8), {2, 3, 0}, 0, -0.1, x, y), InputError);
    Vector big = b->make(256 * 64);
    EXPECT_THROW(b->haarNorm1(Grid::make2D(256, 64), {8, 5, 0}, {0}, big), InputError);
    EXPECT_THROW(b->haarNorm1(Grid::make2D(12, 8), {2, 3, 0}, {}, x), InputError);  // no shift
}
