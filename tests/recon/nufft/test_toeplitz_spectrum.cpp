// Q and its real spectrum (recon/nufft/toeplitz_spectrum) against brute force: Q by the
// pruned, 1.5x-oversampled real NUFFT (the CPU backend's) equals the term-by-term sum on the 2N grid to the
// tolerance; the spectrum equals the complex FFT of that sum's circular embedding, whose
// imaginary part is rounding once the unused d = -N entries are zero (and is not before).
// The NUFFT's pruned type-1 at each oversampling against the direct sum (F^H d).
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/nufft/spread_kernel.hpp"
#include "recon/nufft/toeplitz_spectrum.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// Q(d) = sum_m w_m exp(+i 2 pi k_m . d / N) summed term by term, index d + N per axis,
// with the entries where an axis holds d = -N set to zero (they are outside any product).
ComplexArray bruteQ(const Grid& g, const Trajectory& t, const std::vector<double>& w, bool zero_minus_n = true) {
    ComplexArray c(w.begin(), w.end());
    ComplexArray q = bruteAdjoint(t, c, SampleGrid::differences(g));
    const Grid big = g.doubled();
    if (zero_minus_n)
        for (int z = 0; z < big.n[2]; ++z)
            for (int y = 0; y < big.n[1]; ++y)
                for (int x = 0; x < big.n[0]; ++x)
                    if (x == 0 || y == 0 || (g.dims == 3 && z == 0)) q[big.index(x, y, z)] = 0;
    return q;
}

std::vector<double> positiveWeights(std::size_t m) {
    std::vector<double> w(m);
    for (std::size_t i = 0; i < m; ++i) w[i] = 0.3 + 0.7 * double((i * 7919) % 13) / 13.0;
    return w;
}

// The circular embedding's spectrum by a whole complex FFT: s(k) = (2N)^-d sum_d Q(d) e^{-i 2 pi k d / 2N}.
ComplexArray complexSpectrum(const Grid& g, const ComplexArray& q) {
    const Grid big = g.doubled();
    ComplexArray s(big.voxels());
    for (int z = 0; z < big.n[2]; ++z)
        for (int y = 0; y < big.n[1]; ++y)
            for (int x = 0; x < big.n[0]; ++x) {
                const int cx = (x - g.n[0] + big.n[0]) % big.n[0], cy = (y - g.n[1] + big.n[1]) % big.n[1];
                const int cz = g.dims == 3 ? (z - g.n[2] + big.n[2]) % big.n[2] : 0;
                s[big.index(cx, cy, cz)] = q[big.index(x, y, z)] / double(big.voxels());
            }
    FftPlan<double>(big.n, g.dims, FftDirection::Forward).execute(s.data());
    return s;
}

class QByNufft : public ::testing::TestWithParam<std::tuple<Grid, double>> {};

TEST_P(QByNufft, EqualsTheDirectSum) {
    const auto [grid, tol] = GetParam();
    const Trajectory t = randomTrajectory(grid, 400, 11);
    const std::vector<double> w = positiveWeights(t.samples());
    const ComplexArray exact = bruteQ(grid, t, w);
    const SpreadKernel kernel = SpreadKernel::forTolerance(tol, 1.5);
    const ComplexArray q = qFromToeplitzSpectrum(grid, toeplitzSpectrum<double>(t, w, grid, kernel));
    EXPECT_LT(relativeError(q, exact), tol) << grid.describe() << ", " << kernel.describe();
    const ComplexArray qf = qFromToeplitzSpectrum(grid, toeplitzSpectrum<float>(t, w, grid, SpreadKernel::forTolerance(1e-4, 1.5)));
    EXPECT_LT(relativeError(qf, exact), 1e-4) << grid.describe() << ", float32";
}

INSTANTIATE_TEST_SUITE_P(OddEvenAndTolerances, QByNufft,
                         ::testing::Combine(::testing::Values(Grid::make2D(16, 12), Grid::make2D(15, 9), Grid::make3D(8, 6, 10),
                                                              Grid::make3D(9, 7, 5)),
                                            ::testing::Values(1e-3, 1e-6, 1e-9)));

TEST(ToeplitzSpectrum, RealAndEqualToTheComplexFftOfQ) {
    for (const Grid& g : {Grid::make2D(10, 7), Grid::make3D(6, 5, 7)}) {
        const Trajectory t = randomTrajectory(g, 150, 12);
        const std::vector<double> w = positiveWeights(t.samples());
        const ComplexArray s = complexSpectrum(g, bruteQ(g, t, w));
        double largest = 0, imag = 0;
        for (const auto& v : s) {
            largest = std::max(largest, std::abs(v));
            imag = std::max(imag, std::abs(v.imag()));
        }
        EXPECT_LT(imag, 1e-13 * largest) << g.describe() << ": the spectrum's imaginary part is rounding";
        // With the unused -N entries as the sum gives them, Q's embedding is not Hermitian.
        const ComplexArray raw = complexSpectrum(g, bruteQ(g, t, w, false));
        double raw_imag = 0;
        for (const auto& v : raw) raw_imag = std::max(raw_imag, std::abs(v.imag()));
        EXPECT_GT(raw_imag, 1e-3 * largest) << g.describe();

        const std::vector<double> real = toeplitzSpectrumFromQ<double>(g, bruteQ(g, t, w, false));
        ASSERT_EQ(real.size(), s.size());
        double diff = 0;
        for (std::size_t i = 0; i < s.size(); ++i) diff = std::max(diff, std::abs(real[i] - s[i].real()));
        EXPECT_LT(diff, 1e-13 * largest) << g.describe();
        // And back: Q with its -N entries zero.
        EXPECT_LT(relativeError(qFromToeplitzSpectrum(g, real), bruteQ(g, t, w)), 1e-13) << g.describe();
    }
}

TEST(ToeplitzSpectrum, RefusesAQThatIsNotHermitian) {
    const Grid g = Grid::make2D(6, 6);
    ComplexArray q = randomComplex(g.doubled().voxels(), 13);
    try {
        (void)toeplitzSpectrumFromQ<float>(g, q);
        FAIL() << "a random Q was taken";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("not Hermitian"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)toeplitzSpectrumFromQ<float>(g, ComplexArray(10)), InputError);
}

// F^H d: the pruned type-1 at sigma 1.5 and 2 meets the tolerance against the direct sum, on
// odd and even image and difference grids (1.25 misses it by up to 2 %: not used).
TEST(NufftOversampling, PrunedAdjointMeetsToleranceAtEachSigma) {
    for (const Grid& g : {Grid::make2D(17, 12), Grid::make3D(10, 9, 7)}) {
        const Trajectory t = randomTrajectory(g, 300, 14);
        const ComplexArray c = randomComplex(t.samples(), 15);
        for (const SampleGrid& sg : {SampleGrid::image(g), SampleGrid::differences(g)}) {
            const ComplexArray exact = bruteAdjoint(t, c, sg);
            for (double sigma : {1.5, 2.0})
                for (double tol : {1e-3, 1e-6}) {
                    const SpreadKernel k = SpreadKernel::forTolerance(tol, sigma);
                    ComplexArray approx(sg.points());
                    NufftPlan<double>(t, sg, k).adjoint(c.data(), approx.data());
                    EXPECT_LT(relativeError(approx, exact), tol) << g.describe() << " " << sg.size[0] << " " << k.describe();
                }
        }
    }
}

}  // namespace
