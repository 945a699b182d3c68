// The branchless DD on the GPU against the CPU's (float64 inside): the software path to
// float32 rounding, the texture path within the bound its 8-bit weights allow; the
// adjoint identity on the device; the operator on the CUDA backend's complex vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

#include "recon/ct/dd_branchless_cpu.hpp"
#include "recon/cuda/ct_dd.hpp"
#include "tests/recon/ct/ct_reference.hpp"
#include "tests/recon/cuda/gpu_test_support.hpp"

namespace recon::cuda {
namespace {

using ct::CtGeometry;
using ct::DdInterpolation;

std::vector<float> randomValues(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

struct Errors {
    double max_rel = 0, rms_rel = 0;  // relative to the reference's largest value / its rms
};
Errors compare(const std::vector<float>& got, const std::vector<float>& ref) {
    double peak = 0, err2 = 0, ref2 = 0, worst = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
        peak = std::max(peak, std::abs(double(ref[k])));
        const double e = double(got[k]) - ref[k];
        worst = std::max(worst, std::abs(e));
        err2 += e * e;
        ref2 += double(ref[k]) * ref[k];
    }
    return {worst / peak, std::sqrt(err2 / ref2)};
}

struct Case {
    const char* name;
    CtGeometry geometry;
};
// More columns than a backprojection block has threads, more voxels along a row too.
CtGeometry wideFan() {
    CtGeometry g = test::ct::fanGeometry(270, 300, 12);
    g.volume.voxel_mm = {0.25, 0.22, 1.0};
    g.beam.pixel_u_mm = 0.4;
    return g;
}
std::vector<Case> cases() {
    return {
        {"fan 2D", test::ct::fanGeometry(40, 64, 36)},
        {"fan 2D wide", wideFan()},
        {"cone 3D", test::ct::coneGeometry({24, 20, 16}, 40, 30, 20)},
        {"cone 3D odd", test::ct::coneGeometry({33, 17, 9}, 53, 11, 13)},
    };
}

// Both directions on the GPU against the CPU reference; returns the worse of the two.
Errors gpuAgainstCpu(const CtGeometry& g, DdInterpolation interpolation, const char* name) {
    ct::BranchlessDdCpu cpu(g);
    CudaDdProjector gpu(g, interpolation);
    const auto x = randomValues(cpu.voxels(), 11), y = randomValues(cpu.samples(), 12);
    std::vector<float> p_cpu(cpu.samples()), p_gpu(cpu.samples()), b_cpu(cpu.voxels()), b_gpu(cpu.voxels());
    cpu.project(x.data(), p_cpu.data());
    cpu.backproject(y.data(), b_cpu.data());
    gpu.projectHost(x.data(), p_gpu.data());
    gpu.backprojectHost(y.data(), b_gpu.data());
    const Errors fp = compare(p_gpu, p_cpu), bp = compare(b_gpu, b_cpu);
    std::printf("%-12s %s: projection max %.2e rms %.2e, backprojection max %.2e rms %.2e\n", name,
                interpolation == DdInterpolation::Hardware ? "texture " : "software", fp.max_rel, fp.rms_rel,
                bp.max_rel, bp.rms_rel);
    return {std::max(fp.max_rel, bp.max_rel), std::max(fp.rms_rel, bp.rms_rel)};
}

TEST(CudaCtDd, SoftwareInterpolationEqualsTheCpuToFloatRounding) {
    // float32 running sums (integral images of up to a quarter slice; the adjoint's sum over
    // up to 300 columns) and float32 geometry against float64 on the CPU: each difference
    // of two sums is off by about float32's epsilon times the terms summed, 6e-8 x 300 = 2e-5
    // at worst. Measured on an H100: fan 2D 1.0e-6 (max), 256^3 cone 7.9e-5 (benchmark).
    for (const Case& c : cases()) {
        const Errors e = gpuAgainstCpu(c.geometry, DdInterpolation::Software, c.name);
        EXPECT_LT(e.max_rel, 1e-4) << c.name;
        EXPECT_LT(e.rms_rel, 2e-5) << c.name;
    }
}

TEST(CudaCtDd, TextureInterpolationIsWithinTheBoundOfItsWeights) {
    // The texture unit rounds each interpolation weight to 8 fractional bits: each sample
    // is off by up to 1/512 of the integral's step between neighbouring nodes, about 1/512
    // of a footprint's content per corner, so a cell's value by a few tenths of a per cent.
    // Measured on an H100: fan 2D 1.6e-3 max, 3.6e-4 rms; 256^3 cone backprojection 3.1e-3, 8.2e-4.
    for (const Case& c : cases()) {
        const Errors e = gpuAgainstCpu(c.geometry, DdInterpolation::Hardware, c.name);
        EXPECT_LT(e.max_rel, 1e-2) << c.name;
        EXPECT_LT(e.rms_rel, 3e-3) << c.name;
    }
}

double adjointMismatch(const CtGeometry& g, DdInterpolation interpolation) {
    CudaDdProjector gpu(g, interpolation);
    const auto x = randomValues(gpu.voxels(), 13), y = randomValues(gpu.samples(), 14);
    std::vector<float> ax(gpu.samples()), aty(gpu.voxels());
    gpu.projectHost(x.data(), ax.data());
    gpu.backprojectHost(y.data(), aty.data());
    double lhs = 0, rhs = 0;
    for (std::size_t k = 0; k < ax.size(); ++k) lhs += double(ax[k]) * y[k];
    for (std::size_t k = 0; k < aty.size(); ++k) rhs += double(x[k]) * aty[k];
    return std::abs(lhs - rhs) / std::abs(lhs);
}

TEST(CudaCtDd, BackprojectorIsTheAdjointOnTheDevice) {
    for (const Case& c : cases()) {
        const double sw = adjointMismatch(c.geometry, DdInterpolation::Software);
        const double hw = adjointMismatch(c.geometry, DdInterpolation::Hardware);
        std::printf("%-12s adjoint mismatch: software %.2e, texture %.2e\n", c.name, sw, hw);
        // Measured on an H100: fan 2D 2.8e-9 and 3.6e-6; 256^3 cone 7e-9 and 7e-8.
        EXPECT_LT(sw, 1e-5) << c.name;
        EXPECT_LT(hw, 1e-3) << c.name;  // each direction rounds its own weights
    }
}

TEST(CudaCtDd, OperatorOnTheBackendProjectsBothPartsLikeTheCpu) {
    const CtGeometry g = test::ct::coneGeometry({20, 18, 12}, 32, 20, 15);
    ct::BranchlessDdCpu cpu(g);
    const auto re = randomValues(cpu.voxels(), 15), im = randomValues(cpu.voxels(), 16);
    std::vector<float> p_re(cpu.samples()), p_im(cpu.samples());
    cpu.project(re.data(), p_re.data());
    cpu.project(im.data(), p_im.data());
    for (Precision precision : {Precision::Single, Precision::Double}) {
        auto backend = test::gpu(precision);
        ct::ProjectorOptions options;
        options.interpolation = DdInterpolation::Software;
        auto op = cudaDdProjector(*backend, g, options);
        ComplexArray x(cpu.voxels()), real_only(cpu.voxels());
        for (std::size_t k = 0; k < x.size(); ++k) {
            x[k] = cdouble(re[k], im[k]);
            real_only[k] = re[k];
        }
        const ComplexArray y = applyForward(*op, x), y_real = applyForward(*op, real_only);
        std::vector<float> got_re(y.size()), got_im(y.size());
        for (std::size_t k = 0; k < y.size(); ++k) {
            got_re[k] = float(y[k].real());
            got_im[k] = float(y[k].imag());
            ASSERT_EQ(y_real[k].imag(), 0.0);
            ASSERT_EQ(y_real[k].real(), y[k].real());
        }
        EXPECT_LT(compare(got_re, p_re).max_rel, 1e-4);
        EXPECT_LT(compare(got_im, p_im).max_rel, 1e-4);
        // <A x, w> = <x, A^H w> through the operator, complex vectors.
        ComplexArray w(cpu.samples());
        const auto wr = randomValues(w.size(), 17), wi = randomValues(w.size(), 18);
        for (std::size_t k = 0; k < w.size(); ++k) w[k] = cdouble(wr[k], wi[k]);
        const ComplexArray ahw = applyAdjoint(*op, w);
        cdouble lhs = 0, rhs = 0;
        for (std::size_t k = 0; k < y.size(); ++k) lhs += std::conj(y[k]) * w[k];
        for (std::size_t k = 0; k < x.size(); ++k) rhs += std::conj(x[k]) * ahw[k];
        EXPECT_LT(std::abs(lhs - rhs) / std::abs(lhs), 1e-5);
    }
}

TEST(CudaCtDd, HostCallsInPiecesAndSlabsGiveTheDeviceCalls) {
    // A tall volume (several z slabs) and enough views for several pieces: the host calls'
    // pipeline (pieces of views, the backprojection's last piece gathered slab by slab onto
    // the earlier pieces' sum) against one device call over all views.
    CtGeometry g = test::ct::coneGeometry({12, 10, 300}, 24, 140, 40);
    g.volume.voxel_mm[2] = 0.2;  // 60 mm tall: the detector's 140 rows see all of it
    for (DdInterpolation interpolation : {DdInterpolation::Software, DdInterpolation::Hardware}) {
        CudaDdProjector gpu(g, interpolation);
        const auto x = randomValues(gpu.voxels(), 19), y = randomValues(gpu.samples(), 20);
        std::vector<float> p_host(gpu.samples()), p_dev(gpu.samples()), b_host(gpu.voxels()), b_dev(gpu.voxels());
        gpu.projectHost(x.data(), p_host.data());
        gpu.backprojectHost(y.data(), b_host.data());
        DeviceBuffer<float> dx(gpu.voxels(), "test volume"), dy(gpu.samples(), "test projections"),
            dp(gpu.samples(), "test projections"), db(gpu.voxels(), "test volume");
        dx.upload(x.data(), x.size(), gpu.stream());
        dy.upload(y.data(), y.size(), gpu.stream());
        gpu.project(dx.data(), dp.data());
        gpu.backproject(dy.data(), db.data());
        dp.download(p_dev.data(), p_dev.size(), gpu.stream());
        db.download(b_dev.data(), b_dev.size(), gpu.stream());
        check(cudaStreamSynchronize(gpu.stream()), "test");
        // The same kernels per view: the same bits. The backprojection adds the pieces' sums
        // in another order than one pass over all views: float32 rounding of 40 terms.
        EXPECT_EQ(compare(p_host, p_dev).max_rel, 0.0);
        const Errors e = compare(b_host, b_dev);
        EXPECT_LT(e.max_rel, 1e-5);
        double lowest = 1e300;
        for (float v : b_dev) lowest = std::min(lowest, double(v));
        EXPECT_GT(lowest, 0.0);  // every voxel is seen by the detector: a slab left out would show as zeros
    }
}

TEST(CudaCtDd, RefusesBadGeometry) {
    CtGeometry g = test::ct::coneGeometry();
    g.beam.source_to_detector_mm = 50.0;
    EXPECT_THROW(CudaDdProjector(g, DdInterpolation::Hardware), InputError);
}

}  // namespace
}  // namespace recon::cuda
