// Several devices on one GPU: the same device index repeated gives logical devices, each
// a CUDA backend with a stream of its own, so the split code paths of a multi-GPU machine
// (peer copies, one thread per device, partial normals summed on the home device) run
// here. SENSE's coils split over 1..4 logical devices equal one device's result; GPU.Multi's
// voxel split over {0}, {0,0}, {0,0,0}, {0,0,0,0} equals one device's F^H d; a device failing
// mid-solve ends the solve with an error naming it and no thread left behind.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/cuda/cuda_backend.hpp"
#include "recon/linop/distributed_stack.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/runner.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// Device 0 `n` times: the first entry is `home` itself, the others backends of their own.
std::vector<SplitDevice> logicalDevices(const std::shared_ptr<Backend>& home, int n) {
    std::vector<SplitDevice> d{{home, "GPU 0"}};
    for (int i = 1; i < n; ++i) {
        std::string why;
        std::shared_ptr<Backend> b = createCudaBackend(Precision::Single, 0, &why);
        if (!b) throw std::runtime_error("no CUDA backend: " + why);
        d.push_back({b, "GPU 0 (stream " + std::to_string(i + 1) + ")"});
    }
    return d;
}

struct SplitCase {
    Grid g = Grid::make3D(20, 18, 16);
    Trajectory t = randomTrajectory(g, 3000, 21);
    int coils = 7;
    ComplexArray maps = randomComplex(std::size_t(coils) * g.voxels(), 22);
    std::vector<double> phi = std::vector<double>(t.samples(), 0.9);
    std::shared_ptr<Backend> home = gpu(Precision::Single);
    ComplexArray q = home->makeToeplitz(g, t, std::vector<double>(t.samples(), 0.81), {"nufft", 1e-6})->q();
    LinearOperatorPtr fourierOn(Backend& b) const {
        return fourierOperator(b, t, g, phi, {"nufft", 1e-6}, b.toeplitzFromQ(g, q));
    }
    LinearOperatorPtr split(const std::vector<SplitDevice>& devices) const {
        return splitSense(*home, devices, maps, g.voxels(), [&](Backend& b) { return fourierOn(b); });
    }
};

}  // namespace

TEST(CudaSplit, SenseOnOneToFourLogicalDevicesEqualsOneDevice) {
    SplitCase c;
    const SenseOperator whole(c.fourierOn(*c.home), c.maps);
    const ComplexArray x = randomComplex(c.g.voxels(), 3), y = randomComplex(whole.outSize(), 4);
    const ComplexArray normal = applyNormal(whole, x), forward = applyForward(whole, x), adjoint = applyAdjoint(whole, y);
    for (int n = 1; n <= 4; ++n) {
        const LinearOperatorPtr op = c.split(logicalDevices(c.home, n));
        if (n > 1) {
            const auto* stack = dynamic_cast<const DistributedStack*>(op.get());
            ASSERT_NE(stack, nullptr);
            EXPECT_EQ(stack->parts(), std::size_t(n));
        }
        // Peer copies are exact; only the order of the float32 sum over coils differs.
        EXPECT_LT(relativeError(applyNormal(*op, x), normal), 1e-5) << n << " devices";
        EXPECT_LT(relativeError(applyForward(*op, x), forward), 1e-5) << n << " devices";
        EXPECT_LT(relativeError(applyAdjoint(*op, y), adjoint), 1e-5) << n << " devices";
        if (n > 1) {
            const DistributedStats st = dynamic_cast<const DistributedStack&>(*op).stats();
            EXPECT_EQ(st.applications, 3);
            EXPECT_GT(st.communication_seconds, 0);
        }
    }
}

TEST(CudaSplit, SessionSenseSolveOnOneToFourLogicalDevicesMatchesOneDevice) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    SolveOptions o;
    o.iterations = 15;
    o.lambda = 0.05;
    o.coil_combination = CoilCombination::Sense;
    std::shared_ptr<Backend> home = gpu(Precision::Single);
    ReconstructionSession one(home);
    one.setDataset(data);
    const SolveResult a = one.solve(o);
    for (int n = 1; n <= 4; ++n) {
        ReconstructionSession split(home);
        split.setDataset(data);
        split.setCoilMaps(one.coilMaps());
        split.setSenseDevices(logicalDevices(home, n));
        const SolveResult b = split.solve(o);
        EXPECT_EQ(b.devices, n);
        ASSERT_EQ(b.complex_image.size(), a.complex_image.size());
        EXPECT_LT(relativeError(b.complex_image, a.complex_image), 1e-4) << n << " devices";
    }
}

TEST(CudaSplit, GpuMultiOnOneToFourLogicalDevicesEqualsOneDevice) {
    const Grid grid = Grid::make3D(23, 14, 9);  // rows not divisible by the shares
    const Trajectory t = randomTrajectory(grid, 1500, 8);
    const SampleGrid sg = SampleGrid::image(grid);
    const ComplexArray x = randomComplex(t.samples(), 9);
    const ComplexArray ref = bruteAdjoint(t, x, sg);
    std::vector<std::complex<float>> xf(x.begin(), x.end()), one;
    cuda::multiGpuAdjoint<float>(t, xf, sg, one, {0});
    EXPECT_LT(relativeError(ComplexArray(one.begin(), one.end()), ref), 1e-4);
    auto backend = gpu(Precision::Single);
    for (const std::vector<int>& devices : {std::vector<int>{0, 0}, {0, 0, 0}, {0, 0, 0, 0}}) {
        std::vector<std::complex<float>> out;
        cuda::multiGpuAdjoint<float>(t, xf, sg, out, devices);
        ASSERT_EQ(out.size(), one.size());
        // Each voxel is the same kernel's sum over the same samples, wherever its share runs.
        EXPECT_LT(relativeError(ComplexArray(out.begin(), out.end()), ComplexArray(one.begin(), one.end())), 1e-6)
            << devices.size() << " devices";
        // Through the backend, as --gpus passes the list to --method multi.
        ComplexArray viaBackend;
        backend->adjointSum(t, x, sg, viaBackend, {"multi", 0, devices});
        EXPECT_LT(relativeError(viaBackend, ComplexArray(one.begin(), one.end())), 1e-6) << devices.size() << " devices";
    }
}

TEST(CudaSplit, ALogicalDeviceFailingMidSolveEndsWithAnErrorNamingIt) {
    SplitCase c;
    const LinearOperatorPtr op = c.split(logicalDevices(c.home, 3));
    auto* stack = const_cast<DistributedStack*>(dynamic_cast<const DistributedStack*>(op.get()));
    ASSERT_NE(stack, nullptr);
    const Vector rhs = c.home->fromHost(applyAdjoint(*op, randomComplex(op->outSize(), 5)));
    NormalEquationsCg cg({{"data", 1.0, op}}, rhs, 1.0);
    stack->resetStats();
    stack->failForTesting(1, 3);  // the second logical device, in CG iteration 3
    RunOptions run;
    run.iterations = 10;
    CallbackMonitor monitor;
    try {
        runIterations(cg, run, monitor);
        FAIL() << "the injected failure did not end the solve";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("GPU 0 (stream 2) (coils 2-3) failed"), std::string::npos) << what;
        EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
    }
    EXPECT_EQ(stack->stats().applications, 2);
    // Every thread came back and the devices still work.
    stack->failForTesting(0, 0);
    const SenseOperator whole(c.fourierOn(*c.home), c.maps);
    const ComplexArray x = randomComplex(c.g.voxels(), 6);
    EXPECT_LT(relativeError(applyNormal(*op, x), applyNormal(whole, x)), 1e-5);
}
