// The circulant preconditioner on the GPU, computed and applied there: Q's fold and its N-grid
// FFT equal the host's circulantEigenvalues, the penalty's impulse eigenvalues and M^{-p} equal
// the CPU backend's, the N-grid application equals the Toeplitz-embedded operator, and the
// session's preconditioned solve (and the gridding start) ends at the plain solve's image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/sense/sense_preconditioner.hpp"
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

// SENSE's preconditioner formed on the device (the inside/outside masks from the maps' energy
// there, D, D^{-p/2} and Jacobi outside) and applied there equals the CPU backend's, with and without
// the penalty, in float64 and (to float32's rounding) in float32; the masks are their definition.
TEST(CudaPreconditioner, SenseAppliesLikeTheCpuBackend) {
    const Grid g = Grid::make3D(12, 10, 8);
    const std::size_t n = g.voxels();
    std::vector<double> data(n), penalty(n);
    ComplexArray energy(n);
    double largest = 0;
    for (std::size_t k = 0; k < n; ++k) {
        data[k] = 0.5 + double((k * 13) % 7);
        penalty[k] = double(k % 5);
        const double r = double((k * 7) % 11);
        energy[k] = 0.01 + r * r / 50;  // 4 of 11 residues at or below a tenth of the largest (2.01)
        largest = std::max(largest, energy[k].real());
    }
    auto cpu = createCpuBackend(Precision::Double);
    const ComplexArray x = randomComplex(n, 67);
    auto apply = [&](Backend& b, double weight) {
        const SensePreconditioner sp(b, b.fromHost(energy));
        ComplexArray d(data.begin(), data.end()), p(penalty.begin(), penalty.end());
        const Vector dv = b.fromHost(d), pv = b.fromHost(p);
        LinearOperatorPtr c = weight > 0 ? inverseCirculant(b, g, dv, {weight}, {&pv}, kSenseCirculantExponent)
                                         : inverseCirculant(b, g, dv, {}, {}, kSenseCirculantExponent);
        return applyForward(*sp.make(std::move(c), dv, weight > 0 ? &pv : nullptr, weight, kSenseCirculantExponent), x);
    };
    for (const Precision prec : {Precision::Double, Precision::Single}) {
        auto dev = gpu(prec);
        for (double weight : {0.0, 0.3}) {
            const ComplexArray a = apply(*dev, weight), b = apply(*cpu, weight);
            EXPECT_LT(relativeError(a, b), prec == Precision::Double ? 1e-12 : 2e-6) << weight;
        }
        Vector inside = dev->make(n), outside = dev->make(n);
        const double got = dev->thresholdMasks(dev->fromHost(energy), SensePreconditioner::kInside, inside, outside);
        EXPECT_NEAR(got, largest, prec == Precision::Double ? 0.0 : 1e-6 * largest);
        const ComplexArray in = dev->toHost(inside), out = dev->toHost(outside);
        std::size_t outside_count = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const double expected = energy[k].real() > SensePreconditioner::kInside * largest ? 1.0 : 0.0;
            ASSERT_EQ(in[k], cdouble(expected)) << k;
            ASSERT_EQ(out[k], cdouble(1.0 - expected)) << k;
            outside_count += std::size_t(1.0 - expected);
        }
        EXPECT_GT(outside_count, n / 4);
        EXPECT_LT(outside_count, n / 2);
        ComplexArray bad = energy;
        bad[5] = std::nan("");
        EXPECT_THROW(dev->thresholdMasks(dev->fromHost(bad), 0.1, inside, outside), InputError);
        EXPECT_THROW(SensePreconditioner(*dev, dev->make(n)), InputError);  // maps zero everywhere
    }
}

// Q folded onto the N grid and transformed on the device (T. Chan's and Strang's) against the
// host's loop in float64, on odd, even and mixed grids in 2D and 3D, in both precisions.
TEST(CudaPreconditioner, DeviceEigenvaluesEqualTheHosts) {
    for (const Precision prec : {Precision::Double, Precision::Single}) {
        auto dev = gpu(prec);
        for (const Grid& g : {Grid::make2D(7, 5), Grid::make2D(16, 12), Grid::make3D(9, 6, 5), Grid::make3D(8, 8, 8)}) {
            auto cpu = createCpuBackend(Precision::Double);
            const Trajectory t = randomTrajectory(g, 300, 23);
            std::vector<double> w(t.samples());
            for (std::size_t m = 0; m < w.size(); ++m) w[m] = 0.5 + double(m % 4);
            const ComplexArray q = cpu->makeToeplitz(g, t, w, {"direct"})->q();
            const auto kernel = dev->toeplitzFromQ(g, q);
            for (const CirculantApproximation a : {CirculantApproximation::Chan, CirculantApproximation::Strang}) {
                const std::vector<double> host = circulantEigenvalues(g, q, a);
                const ComplexArray got = dev->toHost(circulantEigenvalues(*dev, *kernel, a));
                double scale = 0, err = 0;
                for (std::size_t k = 0; k < host.size(); ++k) {
                    scale = std::max(scale, std::abs(host[k]));
                    err = std::max(err, std::abs(got[k] - host[k]));
                }
                EXPECT_LT(err, (prec == Precision::Double ? 1e-11 : 3e-6) * scale) << g.describe();
            }
        }
    }
}

// W^H W's impulse eigenvalues through each regulariser's operator on the device equal the CPU
// backend's (finite differences, anatomical weights), and M^{-p} formed from them does too.
TEST(CudaPreconditioner, PenaltyEigenvaluesAndPowerLikeTheCpuBackend) {
    auto dev = gpu(Precision::Double);
    auto cpu = createCpuBackend(Precision::Double);
    for (const Grid& g : {Grid::make2D(11, 8), Grid::make3D(6, 7, 5)}) {
        ComplexArray ref(g.voxels());
        for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = (i % std::size_t(g.n[0])) < std::size_t(g.n[0] / 2) + 1 ? 1.0 : 0.3;
        for (const RegularizerKind kind : {RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
            const Regularizer reg = makeRegularizer(kind, g, &ref);
            const ComplexArray a = dev->toHost(impulseCirculantEigenvalues(*dev, g, *sparseMatrix(*dev, reg.w)));
            const ComplexArray b = cpu->toHost(impulseCirculantEigenvalues(*cpu, g, *sparseMatrix(*cpu, reg.w)));
            EXPECT_LT(relativeError(a, b), 1e-12) << g.describe() << " " << toString(kind);
        }
        ComplexArray m(g.voxels());
        for (std::size_t k = 0; k < m.size(); ++k) m[k] = k == 3 ? -4.0 : 0.5 + double((k * 13) % 7);
        Vector md = dev->fromHost(m), mc = cpu->fromHost(m);
        dev->inverseCirculantPower(md, 0.75, 1e-2);
        cpu->inverseCirculantPower(mc, 0.75, 1e-2);
        EXPECT_LT(relativeError(dev->toHost(md), cpu->toHost(mc)), 1e-13) << g.describe();
        Vector zero = dev->make(g.voxels());
        EXPECT_THROW(dev->inverseCirculantPower(zero, 0.5, 1e-3), InputError);
        m[2] = std::nan("");
        Vector bad = dev->fromHost(m);
        EXPECT_THROW(dev->inverseCirculantPower(bad, 0.5, 1e-3), InputError);
    }
}

// The N-grid application on the device (cuFFT pair, one kernel) is the same operator as the
// Toeplitz embedding of its kernel on the 2N grid, on odd, even and mixed grids, both precisions.
TEST(CudaPreconditioner, NGridApplicationEqualsTheToeplitzOne) {
    for (const Precision prec : {Precision::Double, Precision::Single}) {
        auto dev = gpu(prec);
        for (const Grid& g : {Grid::make2D(9, 7), Grid::make2D(16, 16), Grid::make3D(10, 7, 6)}) {
            std::vector<double> data(g.voxels()), penalty(g.voxels());
            for (std::size_t k = 0; k < data.size(); ++k) {
                data[k] = 0.5 + double((k * 11) % 7);
                penalty[k] = double(k % 4);
            }
            const ComplexArray x = randomComplex(g.voxels(), 81);
            const ComplexArray a = applyForward(*inverseCirculant(*dev, g, data, penalty, 0.4, 0.75), x);
            const ComplexArray b = applyForward(*dev->toeplitzFromQ(g, inverseCirculantKernel(g, data, penalty, 0.4, 0.75)), x);
            EXPECT_LT(relativeError(a, b), prec == Precision::Double ? 1e-12 : 2e-6) << g.describe();
        }
    }
}

TEST(CudaPreconditioner, PreconditionedSolveReachesThePlainSolution) {
    CaseSpec spec = demoCase("small-2d");
    spec.snr_db = 30;
    ReconstructionSession s(gpu(Precision::Double));
    s.setDataset(simulate(spec));
    for (RegularizerKind kind : {RegularizerKind::Tikhonov, RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
        SolveOptions o;
        o.regularizer = kind;
        o.lambda = kind == RegularizerKind::AnatomicalFiniteDifference ? 1.0 : 0.02;
        o.tolerance = 1e-8;
        o.iterations = 2000;
        o.snapshot_every = 0;
        o.preconditioner = PreconditionerKind::None;
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
    o.preconditioner = PreconditionerKind::None;
    const SolveResult plain = s.solve(o);
    for (const PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
        o.preconditioner = pk;
        o.start = StartImage::Gridding;
        const SolveResult started = s.solve(o);
        EXPECT_LT(started.history.back().residual, 1e-8);
        EXPECT_LT(relativeError(started.image, plain.image), 2e-5) << toString(pk);
    }
}

// --preconditioner auto (the default) on the CUDA backend, single images: the circulant for the anatomical
// prior, plain CG for Tikhonov and finite differences; the same iterates as asking for that one.
TEST(CudaPreconditioner, AutoIsTheCirculantForTheAnatomicalPriorOnly) {
    const auto data = simulate(demoCase("small-2d"));
    ReconstructionSession s(gpu(Precision::Single));
    s.setDataset(data);
    for (RegularizerKind kind : {RegularizerKind::Tikhonov, RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference}) {
        const PreconditionerKind expected =
            kind == RegularizerKind::AnatomicalFiniteDifference ? PreconditionerKind::Circulant : PreconditionerKind::None;
        EXPECT_EQ(resolvePreconditioner(PreconditionerKind::Auto, s.backend().info(), kind), expected) << toString(kind);
        SolveOptions o;
        o.regularizer = kind;
        o.iterations = 12;
        o.snapshot_every = 0;
        ASSERT_EQ(o.preconditioner, PreconditionerKind::Auto);
        const SolveResult automatic = s.solve(o);
        o.preconditioner = expected;
        const SolveResult chosen = s.solve(o);
        o.preconditioner = expected == PreconditionerKind::None ? PreconditionerKind::Circulant : PreconditionerKind::None;
        const SolveResult other = s.solve(o);
        EXPECT_EQ(relativeError(automatic.image, chosen.image), 0.0) << toString(kind);
        EXPECT_GT(relativeError(automatic.image, other.image), 1e-4) << toString(kind);
    }
}

// For SENSE, auto is SENSE's preconditioner on the CUDA backend too: the same iterates as asking for it.
TEST(CudaPreconditioner, AutoPreconditionsSense) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    ReconstructionSession s(gpu(Precision::Single));
    s.setDataset(data);
    EXPECT_EQ(resolvePreconditioner(PreconditionerKind::Auto, s.backend().info(), RegularizerKind::FiniteDifference, true),
              PreconditionerKind::Circulant);
    SolveOptions o;
    o.coil_combination = CoilCombination::Sense;
    o.iterations = 10;
    o.snapshot_every = 0;
    ASSERT_EQ(o.preconditioner, PreconditionerKind::Auto);
    const SolveResult automatic = s.solve(o);
    o.preconditioner = PreconditionerKind::Circulant;
    const SolveResult chosen = s.solve(o);
    o.preconditioner = PreconditionerKind::None;
    const SolveResult plain = s.solve(o);
    EXPECT_EQ(relativeError(automatic.image, chosen.image), 0.0);
    EXPECT_GT(relativeError(automatic.image, plain.image), 1e-4);
}

}  // namespace
