#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/operators/regularizer.hpp"

using namespace recon;
using namespace recon::test;

namespace {
ComplexArray applyNormal(const Regularizer& r, const ComplexArray& x) {
    ComplexArray wx(std::size_t(r.w.rows)), out(x.size());
    r.w.multiply(x.data(), wx.data());
    r.w.transposed().multiply(wx.data(), out.data());
    return out;
}
}  // namespace

TEST(Regularizer, FiniteDifferenceNormalIsTheNeumannLaplacian) {
    const Grid g = Grid::make3D(4, 3, 5);
    const Regularizer r = makeRegularizer(RegularizerKind::FiniteDifference, g);
    EXPECT_EQ(r.w.rows, 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4);
    const ComplexArray x = randomComplex(g.voxels(), 1);
    const ComplexArray y = applyNormal(r, x);
    for (int z = 0; z < 5; ++z)
        for (int yy = 0; yy < 3; ++yy)
            for (int xx = 0; xx < 4; ++xx) {
                cdouble expect = 0;
                const int p[3] = {xx, yy, z};
                for (int a = 0; a < 3; ++a)
                    for (int s : {-1, 1}) {
                        int q[3] = {p[0], p[1], p[2]};
                        q[a] += s;
                        if (q[a] < 0 || q[a] >= g.n[a]) continue;
                        expect += x[g.index(p[0], p[1], p[2])] - x[g.index(q[0], q[1], q[2])];
                    }
                EXPECT_NEAR(std::abs(y[g.index(xx, yy, z)] - expect), 0, 1e-12);
            }
}

TEST(Regularizer, TikhonovIsIdentity) {
    const Grid g = Grid::make2D(5, 4);
    const Regularizer r = makeRegularizer(RegularizerKind::Tikhonov, g);
    const ComplexArray x = randomComplex(g.voxels(), 2);
    EXPECT_LT(relativeError(applyNormal(r, x), x), 1e-15);
}

TEST(Regularizer, AnatomicalWeightsStopSmoothingAtReferenceEdges) {
    const Grid g = Grid::make2D(8, 1);
    ComplexArray ref(8, 0.0);
    for (int i = 4; i < 8; ++i) ref[i] = 1.0;  // an edge between voxels 3 and 4
    const Regularizer r = makeRegularizer(RegularizerKind::AnatomicalFiniteDifference, g, &ref);
    // x = the reference itself: only the edge row is non-zero, and it is down-weighted.
    ComplexArray wx(std::size_t(r.w.rows));
    r.w.multiply(ref.data(), wx.data());
    double energy = 0;
    for (auto v : wx) energy += std::norm(v);
    AnatomicalOptions defaults;
    EXPECT_NEAR(energy, defaults.edge_weight * defaults.edge_weight, 1e-15);
    EXPECT_THROW(makeRegularizer(RegularizerKind::AnatomicalFiniteDifference, g, nullptr), std::exception);
}

TEST(Regularizer, TransposeIsExact) {
    const Grid g = Grid::make2D(6, 5);
    const Regularizer r = makeRegularizer(RegularizerKind::FiniteDifference, g);
    const ComplexArray x = randomComplex(g.voxels(), 3), y = randomComplex(std::size_t(r.w.rows), 4);
    ComplexArray wx(y.size()), wty(x.size());
    r.w.multiply(x.data(), wx.data());
    r.w.transposed().multiply(y.data(), wty.data());
    EXPECT_NEAR(std::abs(inner(wx, y) - inner(x, wty)), 0, 1e-12);
}

// The solvers apply the precomputed W^T W; it must equal the two products for every kind.
TEST(Regularizer, PrecomputedNormalMatrixEqualsTwoProducts) {
    const Grid g = Grid::make3D(5, 4, 3);
    const ComplexArray ref = randomComplex(g.voxels(), 7);
    const ComplexArray x = randomComplex(g.voxels(), 8);
    for (auto kind : {RegularizerKind::Tikhonov, RegularizerKind::FiniteDifference,
                      RegularizerKind::AnatomicalFiniteDifference}) {
        const Regularizer r = makeRegularizer(kind, g, &ref, AnatomicalOptions{0.2, 0.05});
        ASSERT_EQ(r.normal.rows, std::int64_t(g.voxels()));
        ASSERT_EQ(r.normal.cols, std::int64_t(g.voxels()));
        const ComplexArray expect = applyNormal(r, x);
        ComplexArray got(x.size());
        r.normal.multiply(x.data(), got.data());
        EXPECT_LT(relativeError(got, expect), 1e-14) << toString(kind);
        // Symmetric, and at most the 7-point stencil per row.
        for (std::int64_t i = 0; i < r.normal.rows; ++i) {
            EXPECT_LE(r.normal.row_ptr[i + 1] - r.normal.row_ptr[i], 7);
            for (std::int64_t e = r.normal.row_ptr[i]; e < r.normal.row_ptr[i + 1]; ++e) {
                const std::int64_t j = r.normal.col[e];
                bool found = false;
                for (std::int64_t f = r.normal.row_ptr[j]; f < r.normal.row_ptr[j + 1]; ++f)
                    if (r.normal.col[f] == i) found = r.normal.val[f] == r.normal.val[e];
                EXPECT_TRUE(found) << toString(kind) << " row " << i << " col " << j;
            }
        }
    }
}

// W^T W is built directly from the pairs' weights (no sparse product): it must be exactly
// the general sparse product W^T W, entry for entry, on grids with a side of 1 or 2 too, and
// with anatomical weights that are 0 across edges (those entries drop out).
TEST(Regularizer, DirectNormalEqualsTheSparseProduct) {
    const std::vector<Grid> grids{Grid::make3D(4, 3, 5), Grid::make3D(1, 3, 2), Grid::make2D(5, 2), Grid::make2D(1, 1)};
    for (const Grid& g : grids)
        for (RegularizerKind kind : {RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference,
                                     RegularizerKind::Tikhonov}) {
            ComplexArray reference = randomComplex(g.voxels(), 3);
            AnatomicalOptions opts;
            opts.edge_weight = 0;  // pairs across an edge weigh nothing
            opts.edge_threshold = 0.3;
            const Regularizer r = makeRegularizer(kind, g, &reference, opts);
            const CsrMatrix expect = r.w.gram(r.w.transposed());
            SCOPED_TRACE(g.describe() + " " + toString(kind));
            EXPECT_EQ(r.normal.rows, expect.rows);
            EXPECT_EQ(r.normal.cols, expect.cols);
            EXPECT_EQ(r.normal.row_ptr, expect.row_ptr);
            EXPECT_EQ(r.normal.col, expect.col);
            ASSERT_EQ(r.normal.val.size(), expect.val.size());
            for (std::size_t k = 0; k < expect.val.size(); ++k) EXPECT_NEAR(r.normal.val[k], expect.val[k], 1e-15);
        }
}
