// The operator layer on the CUDA backend: its VectorSpace primitives against the
// CPU backend's, and the operator written outside the engine (tests/recon/linop)
// composed with the GPU's Fourier operator and solved against a dense float64
// solve — with no line of CUDA code for it.
#include <gtest/gtest.h>

#include "../linop/operator_checks.hpp"
#include "gpu_test_support.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaLinop, VectorSpaceMatchesTheCpuBackend) {
    for (auto p : {Precision::Single, Precision::Double}) {
        auto dev = gpu(p);
        auto cpu = createCpuBackend(Precision::Double);
        const double tol = p == Precision::Single ? 1e-6 : 1e-14;
        const std::size_t n = 70001;
        const ComplexArray a = randomComplex(n, 1), b = randomComplex(n, 2);
        auto both = [&](auto&& f) {
            Vector ga = dev->fromHost(a), gb = dev->fromHost(b), ca = cpu->fromHost(a), cb = cpu->fromHost(b);
            f(*dev, ga, gb);
            f(*cpu, ca, cb);
            EXPECT_LT(relativeError(dev->toHost(gb), cpu->toHost(cb)), tol) << toString(p);
        };
        both([](Backend& s, Vector& x, Vector& y) { s.multiply(x, y, y, true); });
        both([](Backend& s, Vector& x, Vector& y) { s.multiply(x, y, y, false); });
        both([](Backend& s, Vector&, Vector& y) { s.scale(cdouble(0.5, -1.5), y); });
        both([](Backend& s, Vector& x, Vector& y) { s.copyRange(x, 10, y, 1000, 5000); });
        both([](Backend& s, Vector& x, Vector& y) {  // more terms than one kernel launch combines
            std::vector<const Vector*> xs(7, &x);
            s.combine({1, 2, 3, 4, 5, 6, 7}, xs, y);
        });
        Vector ga = dev->fromHost(a), gb = dev->fromHost(b);
        std::vector<const Vector*> many(11, &gb);
        const auto dots = dev->dots(ga, many);
        ASSERT_EQ(dots.size(), 11u);
        EXPECT_NEAR(std::abs(dots[10] - inner(a, b)), 0.0, 1e-5 * std::abs(inner(a, b)));
        // dotPairs: more pairs than one launch takes, each against the CPU backend's.
        Vector ca = cpu->fromHost(a), cb = cpu->fromHost(b);
        std::vector<VectorSpace::VectorPair> gpairs, cpairs;
        for (int k = 0; k < 11; ++k) {
            gpairs.push_back(k % 3 == 0 ? VectorSpace::VectorPair{&ga, &gb} : k % 3 == 1 ? VectorSpace::VectorPair{&gb, &gb} : VectorSpace::VectorPair{&gb, &ga});
            cpairs.push_back(k % 3 == 0 ? VectorSpace::VectorPair{&ca, &cb} : k % 3 == 1 ? VectorSpace::VectorPair{&cb, &cb} : VectorSpace::VectorPair{&cb, &ca});
        }
        const auto gp = dev->dotPairs(gpairs), cp = cpu->dotPairs(cpairs);
        ASSERT_EQ(gp.size(), 11u);
        for (std::size_t k = 0; k < gp.size(); ++k) EXPECT_LT(std::abs(gp[k] - cp[k]), 1e-5 * std::abs(cp[k])) << k;
        EXPECT_THROW(dev->copyRange(ga, n - 5, gb, 0, 10), InputError);
    }
}

TEST(CudaLinop, CustomOperatorComposedWithFourierSolvesLikeDenseFloat64) {
    auto dev = gpu(Precision::Double);
    checkCustomOperatorSolve(*dev, 1e-7);
}

TEST(CudaLinop, CustomOperatorComposedWithFourierSolvesLikeDenseFloat32) {
    auto dev = gpu(Precision::Single);
    checkCustomOperatorSolve(*dev, 2e-3);
}

TEST(CudaLinop, NufftFourierOperatorMatchesTheCpuOne) {
    const Grid g = Grid::make3D(12, 10, 8);
    const Trajectory t = randomTrajectory(g, 900, 5);
    std::vector<double> phi(t.samples(), 0.9);
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Double);
    auto fg = fourierOperator(*dev, t, g, phi, {"nufft", 1e-6}, nullptr);
    auto fc = fourierOperator(*cpu, t, g, phi, {"direct"}, nullptr);
    const ComplexArray x = randomComplex(g.voxels(), 6), y = randomComplex(t.samples(), 7);
    EXPECT_LT(relativeError(applyForward(*fg, x), applyForward(*fc, x)), 1e-5);
    EXPECT_LT(relativeError(applyAdjoint(*fg, y), applyAdjoint(*fc, y)), 1e-5);
}

}  // namespace
