// Several devices: every GPU of the machine in turn, and the same device index repeated,
// which gives logical devices (each a CUDA backend with a stream of its own), so on one GPU
// the split code paths of a multi-GPU machine (peer copies, one thread per device, partial
// normals summed on the home device) run too. SENSE's coils split over 1..4 devices equal one
// device's result; the Toeplitz kernel copied device to device has the home kernel's products;
// GPU.Multi's voxel split over 1..4 devices equals one device's F^H d; a device failing
// mid-solve ends the solve with an error naming it and no thread left behind.
#include <gtest/gtest.h>

#include <algorithm>
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

// The GPUs of the machine in turn, n of them: entry i is GPU i mod (visible GPUs), a repeated
// GPU a logical device of it ("GPU 0 (stream 2)"); the first entry is `home` itself (GPU 0).
std::vector<int> deviceList(int n) {
    const int visible = std::max(1, cudaDeviceCount());
    std::vector<int> list;
    for (int i = 0; i < n; ++i) list.push_back(i % visible);
    return list;
}

std::vector<SplitDevice> logicalDevices(const std::shared_ptr<Backend>& home, int n) {
    const std::vector<int> list = deviceList(n);
    std::vector<SplitDevice> d{{home, "GPU 0"}};
    for (int i = 1; i < n; ++i) {
        std::string why;
        std::shared_ptr<Backend> b = createCudaBackend(Precision::Single, list[std::size_t(i)], &why);
        if (!b) throw std::runtime_error("no CUDA backend: " + why);
        const long before = std::count(list.begin(), list.begin() + i, list[std::size_t(i)]);
        d.push_back({b, "GPU " + std::to_string(list[std::size_t(i)]) + (before ? " (stream " + std::to_string(before + 1) + ")" : "")});
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
    for (const std::vector<int>& devices : {deviceList(2), deviceList(3), deviceList(4)}) {
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

TEST(CudaSplit, ToeplitzKernelCopiedDeviceToDeviceHasTheHomeKernelsProducts) {
    SplitCase c;
    const auto kernel = c.home->makeToeplitz(c.g, c.t, std::vector<double>(c.t.samples(), 0.81), {"nufft", 1e-6});
    const auto& home_kernel = dynamic_cast<const cuda::CudaToeplitz<float>&>(*kernel);
    const ComplexArray x = randomComplex(c.g.voxels(), 12);
    const ComplexArray expected = applyForward(*kernel, x);
    const auto devices = logicalDevices(c.home, std::max(2, cudaDeviceCount()));
    for (std::size_t i = 1; i < devices.size(); ++i) {
        Backend& b = *devices[i].backend;
        const auto copy = b.toeplitzCopy(*kernel);
        ASSERT_EQ(&copy->space(), static_cast<VectorSpace*>(&b)) << devices[i].name;
        const auto& copied = dynamic_cast<const cuda::CudaToeplitz<float>&>(*copy);
        EXPECT_EQ(copied.ffts(), home_kernel.ffts()) << devices[i].name;
        EXPECT_NE(copied.spectrum().data(), home_kernel.spectrum().data()) << devices[i].name;
        const ComplexArray got = applyForward(*copy, x);
        if (devices[i].name.find("GPU 0") == 0) {
            // The spectrum's bits and the same plans on the same GPU: identical products.
            EXPECT_EQ(relativeError(got, expected), 0.0) << devices[i].name;
        } else {
            EXPECT_LT(relativeError(got, expected), 1e-6) << devices[i].name;
        }
        EXPECT_LT(relativeError(copy->q(), kernel->q()), 1e-6) << devices[i].name;
    }
    // Another precision has no direct path: the copy goes through Q (the default) and still agrees.
    auto wide = gpu(Precision::Double);
    const auto through_q = wide->toeplitzCopy(*kernel);
    EXPECT_LT(relativeError(applyForward(*through_q, x), expected), 1e-5);
}

TEST(CudaSplit, AdjointOfHostDataOnTwoToFourDevicesEqualsTheAdjoint) {
    SplitCase c;
    const SenseOperator whole(c.fourierOn(*c.home), c.maps);
    const ComplexArray y = randomComplex(whole.outSize(), 13);
    const ComplexArray expected = applyAdjoint(whole, y);
    for (int n = 2; n <= 4; ++n) {
        const LinearOperatorPtr op = c.split(logicalDevices(c.home, n));
        const auto& stack = dynamic_cast<const DistributedStack&>(*op);
        Vector x = c.home->make(c.g.voxels());
        stack.adjointFromHost(y, x);
        EXPECT_LT(relativeError(c.home->toHost(x), expected), 1e-5) << n << " devices";
    }
}

TEST(CudaSplit, GpuMultiExactFastSplitEqualsOneDevice) {
    const Grid grid = Grid::make3D(37, 11, 6);  // rows not divisible by the shares; x not a multiple of 32
    const Trajectory t = randomTrajectory(grid, 1200, 14);
    const SampleGrid sg = SampleGrid::image(grid);
    const ComplexArray x = randomComplex(t.samples(), 15);
    const std::vector<std::complex<float>> xf(x.begin(), x.end());
    std::vector<std::complex<float>> one;
    cuda::multiGpuAdjoint<float>(t, xf, sg, one, {0}, {}, cuda::DirectVersion::ExactFast);
    const ComplexArray ref(one.begin(), one.end());
    EXPECT_LT(relativeError(ref, bruteAdjoint(t, x, sg)), 1e-4);
    for (int n = 2; n <= 4; ++n) {
        std::vector<std::complex<float>> out;
        cuda::multiGpuAdjoint<float>(t, xf, sg, out, deviceList(n), {}, cuda::DirectVersion::ExactFast);
        // The recurrence's runs may start elsewhere in a share: float32 rounding, not the sum, differs.
        EXPECT_LT(relativeError(ComplexArray(out.begin(), out.end()), ref), 1e-5) << n << " devices";
    }
}

TEST(CudaSplit, ALogicalDeviceFailingMidSolveEndsWithAnErrorNamingIt) {
    SplitCase c;
    const auto devices = logicalDevices(c.home, 3);
    const LinearOperatorPtr op = c.split(devices);
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
        EXPECT_NE(what.find(devices[1].name + " (coils 2-3) failed"), std::string::npos) << what;
        EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
    }
    EXPECT_EQ(stack->stats().applications, 2);
    // Every thread came back and the devices still work.
    stack->failForTesting(0, 0);
    const SenseOperator whole(c.fourierOn(*c.home), c.maps);
    const ComplexArray x = randomComplex(c.g.voxels(), 6);
    EXPECT_LT(relativeError(applyNormal(*op, x), applyNormal(whole, x)), 1e-5);
}
