// The coils of SENSE split over several backends (linop/distributed_stack.hpp), checked on
// CPU backends so the split logic runs everywhere (the GPU tests run the same split over
// logical devices of one GPU): forward, adjoint and normal equal the one-backend SENSE
// operator for 1..4 devices, a whole session solve gives the same image, and a device
// failing mid-solve ends with an error naming it, every thread joined.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "../test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/linop/distributed_stack.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/runner.hpp"

using namespace recon;
using namespace recon::test;

namespace {

struct SplitFixture {
    Grid g = Grid::make3D(6, 5, 4);
    Trajectory t = randomTrajectory(g, 150, 7);
    int coils = 5;
    ComplexArray maps = randomComplex(std::size_t(coils) * g.voxels(), 11);
    std::vector<double> phi = std::vector<double>(t.samples(), 0.8);
    // The home backend and the split's devices: separate float32 CPU backends.
    std::shared_ptr<Backend> home = createCpuBackend(Precision::Single, 1);

    LinearOperatorPtr fourierOn(Backend& b, const ComplexArray& q) const {
        return fourierOperator(b, t, g, phi, {"direct"}, b.toeplitzFromQ(g, q));
    }
    ComplexArray q() const {
        const std::vector<double> phi2(t.samples(), 0.64);
        return home->makeToeplitz(g, t, phi2, {"direct"})->q();
    }
    // Device 0 is home itself, as the session sets it up; the others are backends of their own.
    std::vector<SplitDevice> devices(int n) const {
        std::vector<SplitDevice> d{{home, "CPU 0"}};
        for (int i = 1; i < n; ++i) d.push_back({createCpuBackend(Precision::Single, 1), "CPU " + std::to_string(i)});
        return d;
    }
    LinearOperatorPtr split(const std::vector<SplitDevice>& devices, const ComplexArray& q) const {
        return splitSense(*home, devices, maps, g.voxels(), [&](Backend& b) { return fourierOn(b, q); });
    }
};

}  // namespace

TEST(DistributedStack, SplitSenseEqualsOneDeviceForOneToFourDevices) {
    SplitFixture f;
    const ComplexArray q = f.q();
    const SenseOperator whole(f.fourierOn(*f.home, q), f.maps);
    const ComplexArray x = randomComplex(f.g.voxels(), 3), y = randomComplex(whole.outSize(), 4);
    const ComplexArray normal = applyNormal(whole, x), forward = applyForward(whole, x), adjoint = applyAdjoint(whole, y);
    for (int n = 1; n <= 4; ++n) {
        // A temporary list: the stack keeps the devices' backends alive.
        const LinearOperatorPtr op = f.split(f.devices(n), q);
        ASSERT_EQ(op->outSize(), whole.outSize());
        if (n > 1) {
            const auto* stack = dynamic_cast<const DistributedStack*>(op.get());
            ASSERT_NE(stack, nullptr);
            EXPECT_EQ(stack->parts(), std::size_t(n));
            EXPECT_NE(stack->where(n - 1).find("coils"), std::string::npos) << stack->where(n - 1);
        }
        // float32 backends: the shares sum in another order than the one loop over coils.
        EXPECT_LT(relativeError(applyNormal(*op, x), normal), 1e-5) << n << " devices";
        EXPECT_LT(relativeError(applyForward(*op, x), forward), 1e-5) << n << " devices";
        EXPECT_LT(relativeError(applyAdjoint(*op, y), adjoint), 1e-5) << n << " devices";
    }
    // More devices than coils: the extra ones get no share.
    const auto many = f.devices(7);
    const LinearOperatorPtr split = f.split(many, q);  // held: the stack must outlive the checks below
    const auto* stack = dynamic_cast<const DistributedStack*>(split.get());
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack->parts(), std::size_t(f.coils));
}

TEST(DistributedStack, AdjointOfHostDataEqualsTheAdjointForTwoToFourDevices) {
    SplitFixture f;
    const ComplexArray q = f.q();
    const SenseOperator whole(f.fourierOn(*f.home, q), f.maps);
    const ComplexArray y = randomComplex(whole.outSize(), 8);
    const ComplexArray expected = applyAdjoint(whole, y);
    for (int n = 2; n <= 4; ++n) {
        const LinearOperatorPtr op = f.split(f.devices(n), q);
        const auto& stack = dynamic_cast<const DistributedStack&>(*op);
        Vector x = f.home->make(f.g.voxels());
        stack.adjointFromHost(y, x);
        EXPECT_LT(relativeError(f.home->toHost(x), expected), 1e-5) << n << " devices";
        // Twice: the parts' data vectors are released after use and made again.
        stack.adjointFromHost(y, x);
        EXPECT_LT(relativeError(f.home->toHost(x), expected), 1e-5) << n << " devices, again";
        Vector wrong = f.home->make(f.g.voxels() + 1);
        EXPECT_THROW(stack.adjointFromHost(y, wrong), InputError);
        EXPECT_THROW(stack.adjointFromHost(std::span<const cdouble>(y).first(y.size() - 1), x), InputError);
    }
}

// What each device of the split gets: on CPU backends the kernel goes through Q (the default).
TEST(DistributedStack, ToeplitzCopyOnAnotherBackendHasTheSameProducts) {
    SplitFixture f;
    const std::vector<double> phi2(f.t.samples(), 0.64);
    const auto kernel = f.home->makeToeplitz(f.g, f.t, phi2, {"direct"});
    auto other = createCpuBackend(Precision::Double, 1);
    const auto copy = other->toeplitzCopy(*kernel);
    EXPECT_EQ(&copy->space(), static_cast<VectorSpace*>(other.get()));
    const ComplexArray x = randomComplex(f.g.voxels(), 9);
    EXPECT_LT(relativeError(applyForward(*copy, x), applyForward(*kernel, x)), 1e-5);
    EXPECT_LT(relativeError(copy->q(), kernel->q()), 1e-6);
}

// Both data terms: density-weighted, each device holds D^{1/2} F and its copy of the weighted kernel.
TEST(DistributedStack, SessionSenseSolveIsTheSameOnOneToFourDevices) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    // Density-weighted too: each device holds D^{1/2} F and its copy of the one weighted kernel.
    for (const DataWeighting weighting : {DataWeighting::Uniform, DataWeighting::Density}) {
        SolveOptions o;
        o.iterations = 12;
        o.lambda = 0.05;
        o.coil_combination = CoilCombination::Sense;
        o.weighting = weighting;
        std::shared_ptr<Backend> home = createCpuBackend(Precision::Single);
        ReconstructionSession reference(home);
        reference.setDataset(data);
        const SolveResult a = reference.solve(o);
        EXPECT_EQ(a.devices, 1);
        const std::vector<int> counts = weighting == DataWeighting::Uniform ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{3};
        for (int n : counts) {
            ReconstructionSession split(home);
            split.setDataset(data);
            split.setCoilMaps(reference.coilMaps());
            std::vector<SplitDevice> devices{{home, "CPU 0"}};
            for (int i = 1; i < n; ++i) devices.push_back({createCpuBackend(Precision::Single, 1), "CPU " + std::to_string(i)});
            split.setSenseDevices(devices);
            const SolveResult b = split.solve(o);
            EXPECT_EQ(b.devices, n);
            ASSERT_EQ(b.complex_image.size(), a.complex_image.size());
            EXPECT_LT(relativeError(b.complex_image, a.complex_image), 1e-4) << n << " devices, " << toString(weighting);
            if (n > 1) EXPECT_GT(b.communication_seconds, 0) << n << " devices";
        }
    }
}

TEST(DistributedStack, ADeviceFailingMidSolveEndsWithAnErrorNamingIt) {
    SplitFixture f;
    const ComplexArray q = f.q();
    const auto devices = f.devices(3);
    const LinearOperatorPtr op = f.split(devices, q);
    auto* stack = const_cast<DistributedStack*>(dynamic_cast<const DistributedStack*>(op.get()));
    ASSERT_NE(stack, nullptr);
    const Vector rhs = f.home->fromHost(applyAdjoint(*op, randomComplex(op->outSize(), 5)));
    NormalEquationsCg cg({{"data", 1.0, op}}, rhs, 1.0);
    stack->resetStats();
    stack->failForTesting(2, 4);  // the third device, in the 4th application from now (CG iteration 4)
    RunOptions run;
    run.iterations = 10;
    CallbackMonitor monitor;
    try {
        runIterations(cg, run, monitor);
        FAIL() << "the injected failure did not end the solve";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("CPU 2 (coils 3-4) failed"), std::string::npos) << what;
        EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
    }
    EXPECT_EQ(stack->stats().applications, 3);  // the three before it completed
    // Every thread came back: the operator works again, with the same result as before.
    stack->failForTesting(0, 0);
    const ComplexArray x = randomComplex(f.g.voxels(), 6);
    const SenseOperator whole(f.fourierOn(*f.home, q), f.maps);
    EXPECT_LT(relativeError(applyNormal(*op, x), applyNormal(whole, x)), 1e-5);
}

TEST(DistributedStack, BadPartsAreNamed) {
    SplitFixture f;
    const ComplexArray q = f.q();
    auto other = createCpuBackend(Precision::Single, 1);
    const LinearOperatorPtr small = identity(*other, 7);
    try {
        DistributedStack s(*f.home, {{f.fourierOn(*f.home, q), "CPU 0"}, {small, "CPU 1"}});
        FAIL() << "parts of different input sizes accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("CPU 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(DistributedStack(*f.home, {}), InputError);
    EXPECT_THROW(DistributedStack(*f.home, {{nullptr, "CPU 3"}}), InputError);
}
