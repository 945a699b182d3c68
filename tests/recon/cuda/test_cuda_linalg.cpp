// The CUDA backend's building blocks below the Backend interface: the Toeplitz
// operator's three FFT paths (full cuFFT, pruned cuFFT, pruned with our fused
// column kernel) against the normal operator summed term by term, and the
// float64 reductions the CG takes its scalars from against host sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/backend/backend.hpp"
#include "recon/cuda/cuda_backend.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/linalg.hpp"
#include "recon/operators/regularizer.hpp"

using namespace recon;
using namespace recon::cuda;
using namespace recon::test;

namespace {

const char* name(ToeplitzFfts f) {
    return f == ToeplitzFfts::Full ? "full" : f == ToeplitzFfts::Pruned ? "pruned" : "fused";
}

// F^H diag(w) F x, term by term in float64 (w = 1).
ComplexArray normalOperator(const Trajectory& t, const Grid& g, const ComplexArray& x) {
    return bruteAdjoint(t, bruteForward(t, x, SampleGrid::image(g)), SampleGrid::image(g));
}

template <class T>
DeviceBuffer<std::complex<T>> upload(const ComplexArray& a, cudaStream_t s) {
    std::vector<std::complex<T>> h(a.begin(), a.end());
    DeviceBuffer<std::complex<T>> d(h.size(), "test array");
    d.upload(h.data(), h.size(), s);
    check(cudaStreamSynchronize(s), "test upload");
    return d;
}

template <class T>
ComplexArray download(const DeviceBuffer<std::complex<T>>& d, std::size_t n, cudaStream_t s) {
    std::vector<std::complex<T>> h(n);
    d.download(h.data(), n, s);
    return ComplexArray(h.begin(), h.end());
}

// Every path on one grid; `fusedExpected`: whether the 2N grid's slowest axis lets the fused kernel run.
template <class T>
void checkPaths(const Grid& g, bool fusedExpected, double tol) {
    const Trajectory t = randomTrajectory(g, 300, 23);
    const std::vector<double> ones(t.samples(), 1.0);
    const ComplexArray q = createCpuBackend(Precision::Double)->makeToeplitz(g, t, ones, {"direct"})->q();
    const ComplexArray x = randomComplex(g.voxels(), 5);
    const ComplexArray expect = normalOperator(t, g, x);
    auto stream = std::make_shared<Stream>();
    auto space = gpu(std::is_same_v<T, float> ? Precision::Single : Precision::Double);
    for (ToeplitzFfts mode : {ToeplitzFfts::Full, ToeplitzFfts::Pruned, ToeplitzFfts::Fused}) {
        CudaToeplitz<T> tk(*space, g, upload<T>(q, stream->get()), stream, mode);
        const ToeplitzFfts ran = mode == ToeplitzFfts::Fused && !fusedExpected ? ToeplitzFfts::Pruned : mode;
        EXPECT_EQ(tk.ffts(), ran) << g.describe() << " " << name(mode);
        auto dx = upload<T>(x, stream->get());
        DeviceBuffer<std::complex<T>> dy(g.voxels(), "y");
        // Twice: the fused path leaves the 2N grid's second half stale, which must not matter. The fused
        // mode both ways where every axis can be pruned: the line kernels, then cuFFT on the faster axes.
        const bool everyAxis = mode == ToeplitzFfts::Fused && tk.everyAxisPruned();
        for (int pass = 0; pass < (everyAxis ? 4 : 2); ++pass) {
            if (everyAxis) tk.setEveryAxisPruned(pass < 2);
            tk.applyDevice(dx.data(), dy.data());
            EXPECT_LT(relativeError(download(dy, g.voxels(), stream->get()), expect), tol)
                << g.describe() << " " << name(mode) << " pass " << pass << (tk.everyAxisPruned() ? " every axis pruned" : "");
        }
    }
}

// Which grids get the line kernels on every axis: the fused slowest axis and powers of two (4..1024 in
// float32, ..512 in float64) along the others.
TEST(CudaToeplitzPaths, EveryAxisPrunedWherePowersOfTwo) {
    auto stream = std::make_shared<Stream>();
    auto single = gpu(Precision::Single);
    auto twice = gpu(Precision::Double);
    struct Case {
        Grid g;
        bool single, twice;
    };
    for (const Case& c : {Case{Grid::make3D(8, 8, 8), true, true}, Case{Grid::make3D(2, 16, 4), true, true},
                          Case{Grid::make3D(6, 8, 8), false, false}, Case{Grid::make3D(8, 5, 8), false, false},
                          Case{Grid::make2D(16, 64), true, true}, Case{Grid::make2D(512, 4), true, false},
                          Case{Grid::make2D(11, 8), false, false}}) {
        const ComplexArray q(c.g.doubled().voxels(), 1.0);
        CudaToeplitz<float> f(*single, c.g, upload<float>(q, stream->get()), stream, ToeplitzFfts::Fused);
        CudaToeplitz<double> d(*twice, c.g, upload<double>(q, stream->get()), stream, ToeplitzFfts::Fused);
        EXPECT_EQ(f.everyAxisPruned(), c.single) << c.g.describe();
        EXPECT_EQ(d.everyAxisPruned(), c.twice) << c.g.describe();
        f.setEveryAxisPruned(false);
        EXPECT_FALSE(f.everyAxisPruned());
    }
}

}  // namespace

TEST(CudaToeplitzPaths, AgreeWithTheNormalOperator3D) {
    // 8^3, 2x16x4 (2N = 4 along x: the shortest line) and 64x32x8 (2N = 128 = 16 x 8 along x) with every axis
    // pruned; the others cuFFT on x and y.
    for (const Grid& g : {Grid::make3D(8, 8, 8), Grid::make3D(2, 16, 4), Grid::make3D(64, 32, 8), Grid::make3D(6, 5, 16),
                          Grid::make3D(3, 4, 32)}) {
        checkPaths<float>(g, true, 1e-5);
        checkPaths<double>(g, true, 1e-11);
    }
    checkPaths<float>(Grid::make3D(7, 6, 5), false, 1e-5);  // 2N = 10 along z: pruned cuFFT
}

TEST(CudaToeplitzPaths, AgreeWithTheNormalOperator2D) {
    for (const Grid& g : {Grid::make2D(11, 8), Grid::make2D(16, 64), Grid::make2D(5, 256)}) {
        checkPaths<float>(g, true, 2e-5);
        checkPaths<double>(g, true, 1e-11);
    }
    // 2N = 1024 along y: the fused kernel's longest column in float32; float64 runs pruned cuFFT.
    checkPaths<float>(Grid::make2D(5, 512), true, 2e-5);
    checkPaths<double>(Grid::make2D(5, 512), false, 1e-11);
    checkPaths<float>(Grid::make2D(4, 1024), false, 2e-5);  // 2N = 2048: beyond it
    // Rows of 2N = 512 (both precisions) and 1024 (float32; float64 cuFFT on x): the line kernels' narrower tiles.
    for (const Grid& g : {Grid::make2D(256, 8), Grid::make2D(512, 4)}) {
        checkPaths<float>(g, true, 2e-5);
        checkPaths<double>(g, true, 1e-11);
    }
}

// At the product's size the fused path must match full cuFFT transforms to float32 rounding.
TEST(CudaToeplitzPaths, FusedMatchesFullCuFftAt128Cubed) {
    const Grid g = Grid::make3D(128, 128, 128);
    const Grid big = g.doubled();
    auto stream = std::make_shared<Stream>();
    const ComplexArray q = randomComplex(big.voxels(), 31), x = randomComplex(g.voxels(), 32);
    ComplexArray results[3];
    int i = 0;
    auto space = gpu(Precision::Single);
    for (ToeplitzFfts mode : {ToeplitzFfts::Full, ToeplitzFfts::Fused}) {
        CudaToeplitz<float> tk(*space, g, upload<float>(q, stream->get()), stream, mode);
        ASSERT_EQ(tk.ffts(), mode);
        auto dx = upload<float>(x, stream->get());
        DeviceBuffer<std::complex<float>> dy(g.voxels(), "y");
        tk.applyDevice(dx.data(), dy.data());
        results[i++] = download(dy, g.voxels(), stream->get());
        if (mode == ToeplitzFfts::Fused) {
            ASSERT_TRUE(tk.everyAxisPruned());
            tk.setEveryAxisPruned(false);  // cuFFT on the faster axes, as before the line kernels
            tk.applyDevice(dx.data(), dy.data());
            results[i++] = download(dy, g.voxels(), stream->get());
        }
    }
    EXPECT_LT(relativeError(results[1], results[0]), 2e-6) << "every axis pruned";
    EXPECT_LT(relativeError(results[2], results[0]), 2e-6) << "cuFFT on the faster axes";
}

template <class T>
void checkReductions(std::size_t n) {
    Stream stream;
    const cudaStream_t s = stream.get();
    DeviceReductions red;
    std::vector<ComplexArray> v;
    std::vector<DeviceBuffer<std::complex<T>>> d;
    for (unsigned k = 0; k <= kMaxDots; ++k) {
        ComplexArray a = randomComplex(n, 40 + k);
        for (auto& z : a) z = std::complex<double>(std::complex<T>(z));  // the values the device holds
        d.push_back(upload<T>(a, s));
        v.push_back(std::move(a));
    }
    for (int count = 1; count <= kMaxDots; ++count) {
        std::vector<const std::complex<T>*> bs;
        for (int k = 1; k <= count; ++k) bs.push_back(d[std::size_t(k)].data());
        std::vector<std::complex<double>> got(static_cast<std::size_t>(count));
        red.dots<T>(d[0].data(), bs.data(), count, n, got.data(), s);
        for (int k = 0; k < count; ++k) {
            const std::complex<double> expect = inner(v[0], v[std::size_t(k) + 1]);
            EXPECT_LT(std::abs(got[std::size_t(k)] - expect), 1e-12 * (std::sqrt(double(n)) + 1) * 4)
                << "n " << n << " count " << count << " k " << k;
        }
    }
    // y += a x with ||y||^2 from the same pass; y as the device computes it in T.
    const double a = -0.37;
    const double norm2 = red.axpyNorm2<T>(a, d[1].data(), d[2].data(), n, s);
    const ComplexArray y = download(d[2], n, s);
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 5000); ++i) {
        const std::complex<T> yi = std::complex<T>(v[2][i]) + T(a) * std::complex<T>(v[1][i]);
        EXPECT_LT(std::abs(std::complex<double>(yi) - y[i]), 1e-6) << i;
    }
    double expectNorm2 = 0;
    for (const auto& z : y) expectNorm2 += std::norm(z);
    EXPECT_NEAR(norm2, expectNorm2, 1e-12 * expectNorm2) << "n " << n;
}

TEST(CudaReductions, MatchFloat64HostSums) {
    for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(262145), std::size_t(3000001)}) {
        checkReductions<float>(n);
        checkReductions<double>(n);
    }
}

// F^H d left on the device solves exactly like the same F^H d handed in from the host.
TEST(CudaSolver, ResidentRightHandSideMatchesHostCopy) {
    const Grid g = Grid::make3D(12, 10, 8);
    const Trajectory t = randomTrajectory(g, 700, 3);
    const ComplexArray c = randomComplex(t.samples(), 4);
    auto dev = gpu(Precision::Single);
    const FourierMethod nufft{"nufft", 1e-6};
    auto resident = dev->adjointOnBackend(t, c, SampleGrid::image(g), nufft);
    const ComplexArray host = dev->toHost(*resident);
    ComplexArray direct;
    dev->adjointSum(t, c, SampleGrid::image(g), direct, nufft);
    EXPECT_LT(relativeError(host, direct), 1e-6);  // two runs of the NUFFT: its atomics add in any order
    EXPECT_LT(relativeError(host, bruteAdjoint(t, c, SampleGrid::image(g))), 1e-5);

    std::vector<double> ones(t.samples(), 1.0);
    auto tk = dev->makeToeplitz(g, t, ones, nufft);
    const Regularizer fd = makeRegularizer(RegularizerKind::FiniteDifference, g);
    const std::vector<NormalTerm> terms{
        {"data", 1.0, fourierOperator(*dev, t, g, std::vector<double>(t.samples(), 1.0), nufft, tk)},
        {"penalty", 0.05 * double(t.samples()), sparseMatrix(*dev, fd.w, &fd.normal, "W")}};
    NormalEquationsCg a(terms, *resident, 0.0), b(terms, dev->fromHost(host), 0.0);
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(a.step());
        ASSERT_TRUE(b.step());
        EXPECT_DOUBLE_EQ(a.record().residual, b.record().residual) << i;
    }
    ComplexArray xa, xb;
    a.image(xa);
    b.image(xb);
    EXPECT_EQ(xa, xb);
}
