// The circulant-preconditioned CG ends at the same solution as plain CG, in fewer
// iterations, for each quadratic regulariser (noisy data); a lambda change rebuilds M^{-1}.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// Iterations until the true relative residual falls below `tol`, and the image there.
std::pair<int, ComplexArray> solveTo(ReconstructionSession& s, SolveOptions o, double tol) {
    o.tolerance = tol;
    o.iterations = 2000;
    o.snapshot_every = 0;
    SolveResult r = s.solve(o);
    EXPECT_LT(r.history.back().residual, tol);
    return {int(r.history.size()), std::move(r.image)};
}

struct Case {
    RegularizerKind kind;
    double lambda;
};

TEST(PreconditionedSolve, ReachesThePlainSolutionInFewerIterations) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = 30;  // with noise: the solution differs from the truth, convergence must still meet
    auto data = simulate(spec);
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(data);
    for (const Case& c : {Case{RegularizerKind::Tikhonov, 0.02}, Case{RegularizerKind::FiniteDifference, 0.02},
                          Case{RegularizerKind::AnatomicalFiniteDifference, 1.0}}) {
        SolveOptions o;
        o.regularizer = c.kind;
        o.lambda = c.lambda;
        o.preconditioner = PreconditionerKind::None;
        const auto plain = solveTo(s, o, 1e-8);
        o.preconditioner = PreconditionerKind::Circulant;
        const auto pre = solveTo(s, o, 1e-8);
        // Both stop at a relative residual of 1e-8; the condition number (about 1e3 here) bounds the gap.
        EXPECT_LT(relativeError(pre.second, plain.second), 2e-5) << toString(c.kind) << " lambda " << c.lambda;
        EXPECT_LT(pre.first, plain.first) << toString(c.kind) << " lambda " << c.lambda << ": " << pre.first
                                              << " preconditioned, " << plain.first << " plain";
    }
}

// The gridding start (F^H (w d), least-squares scaled), alone and with the preconditioner,
// ends at plain CG's solution from zero; its first record starts below zero's residual.
TEST(PreconditionedSolve, GriddingStartReachesThePlainSolution) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = 30;
    auto data = simulate(spec);
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(data);
    for (const Case& c : {Case{RegularizerKind::Tikhonov, 0.02}, Case{RegularizerKind::AnatomicalFiniteDifference, 1.0}}) {
        SolveOptions o;
        o.regularizer = c.kind;
        o.lambda = c.lambda;
        const auto plain = solveTo(s, o, 1e-8);
        for (const PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
            o.preconditioner = pk;
            o.start = StartImage::Gridding;
            const auto started = solveTo(s, o, 1e-8);
            EXPECT_LT(relativeError(started.second, plain.second), 2e-5) << toString(c.kind) << " " << toString(pk);
            o.iterations = 1;
            o.tolerance = 0;
            const double first = s.solve(o).history.front().residual;
            o.start = StartImage::Zero;
            EXPECT_LT(first, s.solve(o).history.front().residual) << toString(c.kind) << " " << toString(pk);
            o.iterations = 60;
        }
    }
}

// --preconditioner auto (the default) on the CPU backend: plain CG for every quadratic prior
// (resolvePreconditioner; the CUDA backend's choice is tested in CudaPreconditioner).
TEST(PreconditionedSolve, AutoIsPlainCgOnTheCpu) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(simulate(demoCase("small-2d")));
    for (RegularizerKind kind : {RegularizerKind::Tikhonov, RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
        EXPECT_EQ(resolvePreconditioner(PreconditionerKind::Auto, s.backend().info(), kind), PreconditionerKind::None);
        SolveOptions o;
        o.regularizer = kind;
        o.iterations = 12;
        ASSERT_EQ(o.preconditioner, PreconditionerKind::Auto);
        const SolveResult automatic = s.solve(o);
        o.preconditioner = PreconditionerKind::None;
        EXPECT_EQ(relativeError(automatic.image, s.solve(o).image), 0.0) << toString(kind);
    }
    EXPECT_EQ(parsePreconditioner("auto"), PreconditionerKind::Auto);
    EXPECT_EQ(toString(PreconditionerKind::Auto), "auto");
    EXPECT_THROW(parsePreconditioner("jacobi"), InputError);
}

// The lambda-tuning path with a preconditioner: M^{-1} is rebuilt for the new lambda and
// the resident solve ends at the new lambda's solution.
TEST(PreconditionedSolve, LambdaChangeRebuildsThePreconditioner) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(simulate(demoCase("small-2d")));
    SolveOptions o;
    o.preconditioner = PreconditionerKind::Circulant;
    o.lambda = 0.02;
    o.iterations = 10;
    s.solve(o);
    o.lambda = 0.2;
    o.warm_start = true;
    o.tolerance = 1e-9;
    o.iterations = 500;
    const SolveResult warm = s.solve(o);
    EXPECT_TRUE(warm.warm_started);
    EXPECT_LT(warm.history.back().residual, 1e-9);
    o.warm_start = false;
    o.preconditioner = PreconditionerKind::None;
    o.iterations = 2000;
    const SolveResult cold = s.solve(o);
    EXPECT_LT(relativeError(warm.image, cold.image), 1e-6);
}

}  // namespace

// SENSE's preconditioner (the circulant with its diagonal correction by the maps' energy, Jacobi
// outside the maps' support) ends at plain CG's solution, in fewer iterations, with ESPIRiT's maps
// (normalised, zero outside their mask) and with maps whose energy varies (the same maps times a
// ramp); a lambda change (warm) rebuilds M^{-1} and still ends at the plain solution.
TEST(PreconditionedSolve, SenseReachesThePlainSolutionInFewerIterations) {
    CaseSpec spec = demoCase("radial-2d-8coil");
    spec.trajectory.n = 64;
    spec.trajectory.readouts = 32;
    spec.snr_db = 30;
    auto data = simulate(spec);
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(data);
    CoilMaps espirit = s.coilMaps(CoilMapMethod::Espirit);
    CoilMaps ramped = espirit;
    const std::size_t voxels = data->grid.voxels();
    for (std::size_t i = 0; i < ramped.maps.size(); ++i) {
        const double x = double(i % voxels % std::size_t(data->grid.n[0])) / data->grid.n[0];
        ramped.maps[i] *= 0.3 + 1.4 * x;  // energy from 0.09 to 2.9 times ESPIRiT's across the field of view
    }
    for (const CoilMaps* maps : {&espirit, &ramped}) {
        const std::string which = maps == &espirit ? "ESPIRiT maps" : "ramped maps";
        s.setCoilMaps(*maps);
        SolveOptions o;
        o.coil_combination = CoilCombination::Sense;
        o.lambda = 0.02;
        o.preconditioner = PreconditionerKind::None;
        const auto plain = solveTo(s, o, 1e-8);
        o.preconditioner = PreconditionerKind::Auto;  // SENSE: the circulant with the correction
        const auto pre = solveTo(s, o, 1e-8);
        // Both stop at a relative residual of 1e-8; the voxels outside ESPIRiT's mask, where only the penalty
        // acts, raise the condition number to about 1e4 (measured: 9e-5 apart).
        EXPECT_LT(relativeError(pre.second, plain.second), 3e-4) << which;
        EXPECT_LT(pre.first, plain.first) << which << ": " << pre.first << " preconditioned, " << plain.first << " plain";
        if (maps != &espirit) continue;
        // Warm from lambda 0.02 to 0.05 against a cold plain solve at 0.05.
        o.lambda = 0.05;
        o.preconditioner = PreconditionerKind::None;
        const auto plain_new = solveTo(s, o, 1e-8);
        o.preconditioner = PreconditionerKind::Auto;
        o.lambda = 0.02;
        solveTo(s, o, 1e-8);
        o.lambda = 0.05;
        o.warm_start = true;
        const auto warm = solveTo(s, o, 1e-8);
        EXPECT_LT(relativeError(warm.second, plain_new.second), 3e-4) << which;
    }
}
