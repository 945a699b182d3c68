// The conventional DD projector: line integrals of a cube and a ball against
// their analytic values, the adjoint identity, threads, bad geometry.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "ct_test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/ct/dd_branchless_cpu.hpp"
#include "recon/ct/dd_projector.hpp"
#include "recon/ct/phantom.hpp"

namespace recon::ct {
namespace {

using test::relativeError;

// A box made of whole voxels: the voxel volume is exactly the object, so the only error
// is DD's (the boundaries mapped from slice mid-planes, one path length per pixel).
void expectBoxProjection(const CtGeometry& g, int first, int last, double tolerance) {
    const VolumeGeometry& vol = g.volume;
    const bool planar = vol.size[2] == 1;
    std::vector<double> volume(vol.voxels(), 0.0);
    for (int k = planar ? 0 : first; k < (planar ? 1 : last); ++k)
        for (int j = first; j < last; ++j)
            for (int i = first; i < last; ++i) volume[(std::size_t(k) * vol.size[1] + j) * vol.size[0] + i] = 0.02;
    std::array<double, 3> lo, hi;
    for (int a = 0; a < 3; ++a) {
        lo[a] = vol.centre(a, first) - 0.5 * vol.voxel_mm[a];
        hi[a] = vol.centre(a, last - 1) + 0.5 * vol.voxel_mm[a];
    }
    const DdProjector dd(g);
    ComplexArray x = test::toComplex(volume), p(g.beam.samples());
    dd.forward(x.data(), p.data());
    const std::vector<double> ref = test::projectBox(g, lo, hi, 0.02, 8);
    const double err = relativeError(test::realPart(p), ref);
    std::printf("box %s: relative error of DD against the analytic pixel means %.4f%%\n",
                planar ? "2D" : "3D", 100 * err);
    EXPECT_LT(err, tolerance);
}

TEST(CtDdProjector, FanBeamCubeMatchesAnalyticLineIntegrals) {
    expectBoxProjection(test::fanBeam(64, 100, 90), 20, 44, 0.01);
}

TEST(CtDdProjector, ConeBeamCubeMatchesAnalyticLineIntegrals) {
    expectBoxProjection(test::coneBeam(32, 48, 48, 24), 8, 24, 0.01);
}

void expectBallProjection(const CtGeometry& g, double tolerance) {
    const int dims = g.volume.size[2] == 1 ? 2 : 3;
    const CtPhantom ball = CtPhantom::ball(dims, {2.5, -1.5, dims == 3 ? 1.0 : 0.0}, 0.3 * g.volume.size[0], 0.02);
    const DdProjector dd(g);
    ComplexArray x = test::toComplex(ball.voxelise(g.volume, 6)), p(g.beam.samples());
    dd.forward(x.data(), p.data());
    const std::vector<double> ref = ball.project(g, 6);
    const double err = relativeError(test::realPart(p), ref);
    std::printf("ball %dD: relative error of DD (voxelised ball) against the analytic pixel means %.4f%%\n", dims,
                100 * err);
    EXPECT_LT(err, tolerance);
}

TEST(CtDdProjector, FanBeamBallMatchesAnalyticLineIntegrals) { expectBallProjection(test::fanBeam(64, 100, 90), 0.01); }

TEST(CtDdProjector, ConeBeamBallMatchesAnalyticLineIntegrals) {
    expectBallProjection(test::coneBeam(32, 48, 48, 24), 0.02);
}

void expectAdjoint(const CtGeometry& g) {
    std::mt19937 rng(3);
    std::normal_distribution<double> n;
    ComplexArray x(g.volume.voxels()), y(g.beam.samples());
    for (auto& v : x) v = {n(rng), n(rng)};
    for (auto& v : y) v = {n(rng), n(rng)};
    const DdProjector dd(g);
    ComplexArray ax(y.size()), aty(x.size());
    dd.forward(x.data(), ax.data());
    dd.adjoint(y.data(), aty.data());
    cdouble lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < y.size(); ++i) lhs += std::conj(ax[i]) * y[i];
    for (std::size_t i = 0; i < x.size(); ++i) rhs += std::conj(x[i]) * aty[i];
    EXPECT_LT(std::abs(lhs - rhs), 1e-12 * std::abs(lhs)) << lhs << " vs " << rhs;
}

TEST(CtDdProjector, FanBeamAdjointIdentity) {
    CtGeometry g = test::fanBeam(33, 50, 37);
    g.volume.offset_mm = {1.3, -2.1, 0};
    g.beam.offset_u_mm = 0.7;
    expectAdjoint(g);
}

TEST(CtDdProjector, ConeBeamAdjointIdentity) {
    CtGeometry g = test::coneBeam(17, 30, 20, 13);
    g.volume.size = {17, 14, 11};
    g.volume.voxel_mm = {1.1, 0.9, 1.3};
    g.beam.offset_v_mm = -1.2;
    expectAdjoint(g);
}

// Through the operator on a float32 CPU backend: the same identity to float rounding,
// and the same numbers as the host projector.
TEST(CtDdProjector, OperatorOnABackendIsTheProjector) {
    const CtGeometry g = test::coneBeam(12, 20, 16, 9);
    auto backend = createCpuBackend(Precision::Single);
    LinearOperatorPtr a = backend->ctProjector(g, {});
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    ComplexArray x(a->inSize()), y(a->outSize());
    for (auto& v : x) v = {u(rng), u(rng)};
    for (auto& v : y) v = {u(rng), u(rng)};
    const ComplexArray ax = applyForward(*a, x), aty = applyAdjoint(*a, y);
    cdouble lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < y.size(); ++i) lhs += std::conj(ax[i]) * y[i];
    for (std::size_t i = 0; i < x.size(); ++i) rhs += std::conj(x[i]) * aty[i];
    EXPECT_LT(std::abs(lhs - rhs), 1e-5 * std::abs(lhs));
    ComplexArray ref(y.size());
    DdProjector(g).forward(x.data(), ref.data());
    double num = 0, den = 0;
    for (std::size_t i = 0; i < y.size(); ++i) num += std::norm(ax[i] - ref[i]), den += std::norm(ref[i]);
    EXPECT_LT(std::sqrt(num / den), 1e-6);
}

TEST(CtDdProjector, OneThreadAndAllThreadsAgreeExactly) {
    const CtGeometry g = test::coneBeam(16, 24, 20, 11);
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(0, 1);
    ComplexArray x(g.volume.voxels()), y(g.beam.samples());
    for (auto& v : x) v = u(rng);
    for (auto& v : y) v = u(rng);
    ComplexArray p1(y.size()), p0(y.size()), b1(x.size()), b0(x.size());
    DdProjector(g, 1).forward(x.data(), p1.data());
    DdProjector(g, 0).forward(x.data(), p0.data());
    DdProjector(g, 1).adjoint(y.data(), b1.data());
    DdProjector(g, 0).adjoint(y.data(), b0.data());
    EXPECT_EQ(p1, p0);
    EXPECT_EQ(b1, b0);
}

// trace(A^T W A) from the weights equals sum_v ||A e_v||_W^2 by brute force.
TEST(CtDdProjector, WeightedTraceIsTheSumOfWeightedColumnNorms) {
    const CtGeometry g = test::fanBeam(9, 16, 7);
    const DdProjector dd(g);
    std::vector<double> w(g.beam.samples());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 + 0.1 * (i % 7);
    double brute = 0;
    ComplexArray e(g.volume.voxels()), col(w.size());
    for (std::size_t v = 0; v < e.size(); ++v) {
        std::fill(e.begin(), e.end(), cdouble(0));
        e[v] = 1;
        dd.forward(e.data(), col.data());
        for (std::size_t i = 0; i < w.size(); ++i) brute += w[i] * std::norm(col[i]);
    }
    EXPECT_NEAR(dd.weightedTrace(w), brute, 1e-10 * brute);
}

TEST(CtDdProjector, BadGeometryIsRefusedWithItsName) {
    auto expectMessage = [](CtGeometry g, const std::string& words) {
        try {
            DdProjector dd(g);
            ADD_FAILURE() << "accepted: " << words;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    CtGeometry g = test::fanBeam(32, 48, 10);
    CtGeometry front = g;
    front.beam.source_to_detector_mm = 300;  // D_so 400: the detector between source and isocentre
    expectMessage(front, "behind the isocentre");
    CtGeometry zero = g;
    zero.beam.source_to_isocentre_mm = 0;
    expectMessage(zero, "source-to-isocentre distance");
    CtGeometry zero_sd = g;
    zero_sd.beam.source_to_detector_mm = 0;
    expectMessage(zero_sd, "source-to-detector distance");
    CtGeometry nan = g;
    nan.beam.angles_rad[3] = std::nan("");
    expectMessage(nan, "angle of view 3");
    CtGeometry big = g;
    big.volume.voxel_mm = {20, 20, 1};  // 640 mm across: reaches the orbit
    expectMessage(big, "reaches the source's orbit");
}

}  // namespace
}  // namespace recon::ct

namespace recon::ct {
namespace {

// The conventional DD (the paper's reference) and the branchless form are the same method:
// on a random volume their projections agree far inside DD's own error against the analytic
// line integrals (0.2-1.4 %, the tests above). They are not bit-equal: the branchless form
// samples float32 integral images at the footprint corners (measured: 5e-5 fan, 4e-4 cone).
double conventionalVersusBranchless(const CtGeometry& g) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 0.04f);
    std::vector<float> volume(g.volume.voxels());
    for (float& v : volume) v = u(rng);
    const DdProjector conventional(g);
    const ComplexArray x(volume.begin(), volume.end());
    ComplexArray p(g.beam.samples());
    conventional.forward(x.data(), p.data());
    const BranchlessDdCpu branchless(g);
    std::vector<float> q(g.beam.samples());
    branchless.project(volume.data(), q.data());
    return relativeError(std::vector<double>(q.begin(), q.end()), test::realPart(p));
}

TEST(CtDdProjector, ConventionalAndBranchlessFormsAgree) {
    const double fan = conventionalVersusBranchless(test::fanBeam(32, 48, 24));
    const double cone = conventionalVersusBranchless(test::coneBeam(16, 24, 20, 12));
    std::printf("conventional vs branchless DD, relative difference: fan %.2e, cone %.2e\n", fan, cone);
    EXPECT_LT(fan, 2e-4);
    EXPECT_LT(cone, 2e-3);
}

}  // namespace
}  // namespace recon::ct
