// The circulant preconditioner on the GPU: the session's preconditioned solve ends at the
// plain solve's image, and M^{-p} on the device equals the CPU backend's.
// The gridding start on the device ends there too.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaPreconditioner, AppliesLikeTheCpuBackend) {
    const Grid g = Grid::make3D(12, 10, 8);
    std::vector<double> data(g.voxels()), penalty(g.voxels());
    for (std::size_t k = 0; k < data.size(); ++k) {
        data[k] = 0.5 + double((k * 13) % 7);
        penalty[k] = double(k % 5);
    }
    auto dev = gpu(Precision::Double);
    auto cpu = createCpuBackend(Precision::Double);
    const ComplexArray x = randomComplex(g.voxels(), 61);
    const ComplexArray a = applyForward(*inverseCirculant(*dev, g, data, penalty, 0.3, 0.5), x);
    const ComplexArray b = applyForward(*inverseCirculant(*cpu, g, data, penalty, 0.3, 0.5), x);
    EXPECT_LT(relativeError(a, b), 1e-12);
}

TEST(CudaPreconditioner, PreconditionedSolveReachesThePlainSolution) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = 30;
    ReconstructionSession s(gpu(Precision::Double));
    s.setDataset(simulate(spec));
    for (RegularizerKind kind : {RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
        SolveOptions o;
        o.regularizer = kind;
        o.lambda = kind == RegularizerKind::FiniteDifference ? 0.02 : 1.0;
        o.tolerance = 1e-8;
        o.iterations = 2000;
        o.snapshot_every = 0;
        const SolveResult plain = s.solve(o);
        o.preconditioner = PreconditionerKind::Circulant;
        const SolveResult pre = s.solve(o);
        EXPECT_LT(pre.history.back().residual, 1e-8);
        EXPECT_LT(relativeError(pre.image, plain.image), 2e-5) << toString(kind);
        EXPECT_LT(pre.history.size(), plain.history.size()) << toString(kind);
    }
}

// The gridding start (F^H (w d) on the device, least-squares scaled) alone and with the
// preconditioner ends at plain CG's solution from zero.
TEST(CudaPreconditioner, GriddingStartReachesThePlainSolution) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = 30;
    ReconstructionSession s(gpu(Precision::Double));
    s.setDataset(simulate(spec));
    SolveOptions o;
    o.regularizer = RegularizerKind::AnatomicalFiniteDifference;
    o.lambda = 1.0;
    o.tolerance = 1e-8;
    o.iterations = 2000;
    o.snapshot_every = 0;
    const SolveResult plain = s.solve(o);
    for (const PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
        o.preconditioner = pk;
        o.start = StartImage::Gridding;
        const SolveResult started = s.solve(o);
        EXPECT_LT(started.history.back().residual, 1e-8);
        EXPECT_LT(relativeError(started.image, plain.image), 2e-5) << toString(pk);
    }
}

}  // namespace
