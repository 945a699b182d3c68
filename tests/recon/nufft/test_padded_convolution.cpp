// The pruned, fused Toeplitz product (recon/nufft/padded_convolution) against two references:
// the plain one (whole 2N-grid FFTs, product, whole inverse, crop) and, on small grids, the
// circular convolution summed term by term.
#include <fftw3.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "recon/nufft/fft.hpp"
#include "recon/nufft/fftw_planner.hpp"
#include "recon/nufft/padded_convolution.hpp"
#include "tests/recon/test_support.hpp"

namespace recon {
namespace {

using test::randomComplex;
using test::relativeError;

template <class T>
std::vector<std::complex<T>> toPrecision(const ComplexArray& a) {
    return std::vector<std::complex<T>>(a.begin(), a.end());
}
template <class T>
ComplexArray toDouble(const std::vector<std::complex<T>>& a) {
    return ComplexArray(a.begin(), a.end());
}

// pad -> whole FFT -> product -> whole inverse FFT -> crop, in precision T.
template <class T>
ComplexArray fullProduct(const Grid& g, const std::vector<T>& spectrum, const ComplexArray& x) {
    const Grid big = g.doubled();
    std::vector<std::complex<T>> w(big.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int i = 0; i < g.n[0]; ++i) w[big.index(i, y, z)] = std::complex<T>(x[g.index(i, y, z)]);
    FftPlan<T>(big.n, g.dims, FftDirection::Forward).execute(w.data());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] *= spectrum[i];
    FftPlan<T>(big.n, g.dims, FftDirection::Backward).execute(w.data());
    ComplexArray y(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int yy = 0; yy < g.n[1]; ++yy)
            for (int i = 0; i < g.n[0]; ++i) y[g.index(i, yy, z)] = cdouble(w[big.index(i, yy, z)]);
    return y;
}

// y_n = sum_m kernel[(n - m) mod 2N] x_m: what IFFT(FFT(kernel)/size .* FFT(pad x)) computes.
ComplexArray circularConvolution(const Grid& g, const ComplexArray& kernel, const ComplexArray& x) {
    const Grid big = g.doubled();
    ComplexArray y(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int yy = 0; yy < g.n[1]; ++yy)
            for (int i = 0; i < g.n[0]; ++i) {
                cdouble acc = 0;
                for (int mz = 0; mz < g.n[2]; ++mz)
                    for (int my = 0; my < g.n[1]; ++my)
                        for (int mx = 0; mx < g.n[0]; ++mx) {
                            const int dx = (i - mx + big.n[0]) % big.n[0], dy = (yy - my + big.n[1]) % big.n[1],
                                      dz = (z - mz + big.n[2]) % big.n[2];
                            acc += kernel[big.index(dx, dy, dz)] * x[g.index(mx, my, mz)];
                        }
                y[g.index(i, yy, z)] = acc;
            }
    return y;
}

template <class T>
void checkGrid(const Grid& g, int tile_columns, double tolerance, bool brute) {
    const Grid big = g.doubled();
    // A Hermitian kernel, kernel(-d) = conj kernel(d) on the circular 2N grid, has a real spectrum.
    ComplexArray kernel = randomComplex(big.voxels(), 3);
    const ComplexArray x = randomComplex(g.voxels(), 4);
    for (int z = 0; z < big.n[2]; ++z)
        for (int y = 0; y < big.n[1]; ++y)
            for (int i = 0; i < big.n[0]; ++i) {
                const std::size_t a = big.index(i, y, z), b = big.index((big.n[0] - i) % big.n[0], (big.n[1] - y) % big.n[1], (big.n[2] - z) % big.n[2]);
                if (b < a) kernel[a] = std::conj(kernel[b]);
                if (a == b) kernel[a] = kernel[a].real();
            }
    std::vector<std::complex<T>> transformed = toPrecision<T>(kernel);
    FftPlan<T>(big.n, g.dims, FftDirection::Forward).execute(transformed.data());
    std::vector<T> spectrum(transformed.size());
    double imag = 0, largest = 0;
    for (std::size_t i = 0; i < transformed.size(); ++i) {
        spectrum[i] = transformed[i].real() * T(1.0 / double(big.voxels()));
        imag = std::max(imag, double(std::abs(transformed[i].imag())));
        largest = std::max(largest, double(std::abs(transformed[i])));
    }
    ASSERT_LT(imag, (std::is_same_v<T, float> ? 1e-5 : 1e-13) * largest) << "a Hermitian kernel's spectrum is real";
    PaddedConvolution<T> product(g, spectrum, tile_columns);
    const std::vector<std::complex<T>> xt = toPrecision<T>(x);
    std::vector<std::complex<T>> y(g.voxels(), std::complex<T>(7));
    product.apply(xt.data(), y.data());
    const ComplexArray pruned = toDouble(y), full = fullProduct<T>(g, spectrum, x);
    const std::string what = g.describe() + (std::is_same_v<T, float> ? " float" : " double") + ", tiles of " + std::to_string(tile_columns);
    EXPECT_LT(relativeError(pruned, full), tolerance) << what;
    if (brute) EXPECT_LT(relativeError(pruned, circularConvolution(g, kernel, x)), tolerance) << what;
    // A second product reuses the work buffers: nothing of the first may leak into it.
    const ComplexArray x2 = randomComplex(g.voxels(), 5);
    const std::vector<std::complex<T>> x2t = toPrecision<T>(x2);
    product.apply(x2t.data(), y.data());
    EXPECT_LT(relativeError(toDouble(y), fullProduct<T>(g, spectrum, x2)), tolerance) << what << ", second product";
    EXPECT_EQ(product.spectrum(), spectrum) << what << ", spectrum kept";
}

// 2D grids up to kSerialGridBytes run on one thread (rows, transposed columns), larger ones in
// parallel (slabs, tiles): 100 x 90 and 101 x 91 are larger in both precisions.
TEST(PaddedConvolution, EqualsTheFullProduct2D) {
    for (Grid g : {Grid::make2D(7, 6), Grid::make2D(16, 16), Grid::make2D(37, 21), Grid::make2D(100, 90), Grid::make2D(101, 91)})
        for (int tiles : {0, 3, 8}) {
            checkGrid<double>(g, tiles, 1e-13, g.voxels() < 1000);
            checkGrid<float>(g, tiles, 2e-6, g.voxels() < 1000);
        }
}

TEST(PaddedConvolution, EqualsTheFullProduct3D) {
    for (Grid g : {Grid::make3D(5, 6, 7), Grid::make3D(8, 8, 8), Grid::make3D(13, 10, 9)})
        for (int tiles : {0, 5}) {
            checkGrid<double>(g, tiles, 1e-13, g.voxels() < 400);
            checkGrid<float>(g, tiles, 2e-6, g.voxels() < 400);
        }
    checkGrid<float>(Grid::cube(3, 32), 0, 2e-6, false);  // several tiles of the default width
}

// A product made for one thread and run with three (each thread's tile and slab buffers made
// on first use), and one made for three run with one, against the full product.
TEST(PaddedConvolution, ThreadsOtherThanAtPlanning) {
    const int before = omp_get_max_threads();
    for (Grid g : {Grid::make2D(101, 91), Grid::make3D(13, 10, 9)})
        for (auto [planned, run] : {std::pair{1, 3}, std::pair{3, 1}}) {
            const Grid big = g.doubled();
            std::vector<float> spectrum(big.voxels());
            const ComplexArray values = randomComplex(big.voxels(), 21);
            for (std::size_t i = 0; i < spectrum.size(); ++i) spectrum[i] = float(values[i].real());
            omp_set_num_threads(planned);
            PaddedConvolution<float> product(g, spectrum, 5);
            omp_set_num_threads(run);
            const ComplexArray x = randomComplex(g.voxels(), 22);
            const std::vector<std::complex<float>> xt = toPrecision<float>(x);
            std::vector<std::complex<float>> y(g.voxels());
            product.apply(xt.data(), y.data());
            omp_set_num_threads(before);
            EXPECT_LT(relativeError(toDouble(y), fullProduct<float>(g, spectrum, x)), 2e-6)
                << g.describe() << ", planned with " << planned << " threads, run with " << run;
        }
}

// SENSE's normal with one kernel, applyCoilSum (map products fused into the padding and the
// cropping; threads over coils, or coil after coil on one thread), against the products coil by
// coil: sum_c conj(S_c) .* apply(S_c .* x). 2D and 3D; 1 to 3 threads with fewer, as many and
// more coils than threads; y's old values must not leak in; a second call reuses the buffers.
template <class T>
void checkCoilSum(const Grid& g, int coils, int threads, double tolerance) {
    const Grid big = g.doubled();
    std::vector<T> spectrum(big.voxels());
    const ComplexArray values = randomComplex(big.voxels(), 31);
    for (std::size_t i = 0; i < spectrum.size(); ++i) spectrum[i] = T(values[i].real());
    PaddedConvolution<T> product(g, spectrum);
    const std::vector<std::complex<T>> maps = toPrecision<T>(randomComplex(std::size_t(coils) * g.voxels(), 32));
    std::vector<const std::complex<T>*> ptrs;
    for (int c = 0; c < coils; ++c) ptrs.push_back(maps.data() + std::size_t(c) * g.voxels());
    const std::string what = g.describe() + (std::is_same_v<T, float> ? " float, " : " double, ") + std::to_string(coils) +
                             " coils, " + std::to_string(threads) + " threads";
    const int before = omp_get_max_threads();
    for (int round = 0; round < 2; ++round) {
        const std::vector<std::complex<T>> x = toPrecision<T>(randomComplex(g.voxels(), 40 + round));
        ComplexArray expected(g.voxels());
        std::vector<std::complex<T>> weighted(g.voxels()), term(g.voxels());
        for (int c = 0; c < coils; ++c) {
            for (std::size_t i = 0; i < g.voxels(); ++i) weighted[i] = ptrs[std::size_t(c)][i] * x[i];
            product.apply(weighted.data(), term.data());
            for (std::size_t i = 0; i < g.voxels(); ++i) expected[i] += cdouble(std::conj(ptrs[std::size_t(c)][i]) * term[i]);
        }
        std::vector<std::complex<T>> y(g.voxels(), std::complex<T>(7, -3));
        omp_set_num_threads(threads);
        product.applyCoilSum(ptrs, x.data(), y.data());
        omp_set_num_threads(before);
        EXPECT_LT(relativeError(toDouble(y), expected), tolerance) << what << ", round " << round;
    }
    std::vector<std::complex<T>> out(g.voxels());
    EXPECT_THROW(product.applyCoilSum({}, maps.data(), out.data()), InputError);
}

TEST(PaddedConvolution, CoilSumEqualsTheProductsCoilByCoil) {
    for (Grid g : {Grid::make2D(16, 12), Grid::make2D(37, 21), Grid::make3D(5, 6, 7)})
        for (int coils : {1, 3, 8})
            for (int threads : {1, 2, 3}) {
                checkCoilSum<double>(g, coils, threads, 1e-13);
                checkCoilSum<float>(g, coils, threads, 2e-6);
            }
}

// Measured plans kept as wisdom: a first plan writes the file, a new process (here: the folder
// read again) finds its plans there, a damaged file is ignored with a note and replaced, a
// precision's file is read only by a plan of that precision, and an empty folder name plans by
// estimate without files.
TEST(FftWisdom, SavedReadAndDamagedFileReplaced) {
    namespace fs = std::filesystem;
    const fs::path folder = fs::temp_directory_path() / ("reconstudio-wisdom-test-" + std::to_string(::getpid()));
    fs::remove_all(folder);
    auto use = [](const std::string& f) {
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        fftw::useWisdomFolder(f);
    };
    auto text = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    use(folder.string());
    EXPECT_EQ(fftw::planningFlags(64), unsigned(FFTW_MEASURE));
    EXPECT_EQ(fftw::planningFlags(fftw::kMeasureLimit + 1), unsigned(FFTW_ESTIMATE)) << "too large to measure";
    const fs::path f32 = fftw::wisdomPath(true);
    EXPECT_EQ(f32.parent_path(), folder);
    { FftPlan<float> plan({48, 40, 1}, 2, FftDirection::Forward); }
    ASSERT_TRUE(fs::exists(f32)) << f32;
    const std::string saved = text(f32);
    EXPECT_NE(saved.find("fftw"), std::string::npos) << saved.substr(0, 200);
    // Read back: the same plan adds nothing, so the file is not rewritten.
    use(folder.string());
    const auto written = fs::last_write_time(f32);
    { FftPlan<float> plan({48, 40, 1}, 2, FftDirection::Forward); }
    EXPECT_EQ(text(f32), saved);
    EXPECT_EQ(fs::last_write_time(f32), written);
    // Damaged: a note when the first plan of its precision reads it (a double plan does not), no
    // failure, and that plan writes a good file over it.
    { std::ofstream(f32, std::ios::binary) << "(fftw-3.3.10 fftwf_wisdom #x1234 (garbage"; }
    testing::internal::CaptureStderr();
    use(folder.string());
    { FftPlan<double> plan({8, 6, 1}, 2, FftDirection::Forward); }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    testing::internal::CaptureStderr();
    { FftPlan<float> plan({48, 40, 1}, 2, FftDirection::Forward); }
    const std::string note = testing::internal::GetCapturedStderr();
    EXPECT_NE(note.find("damaged"), std::string::npos) << note;
    EXPECT_NE(note.find(f32.string()), std::string::npos) << note;
    EXPECT_NE(text(f32).find("fftwf_wisdom"), std::string::npos);
    EXPECT_EQ(text(f32).find("garbage"), std::string::npos);
    for (const auto& e : fs::directory_iterator(folder)) EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
    // Disabled: estimate, and no file written.
    use("");
    EXPECT_EQ(fftw::planningFlags(64), unsigned(FFTW_ESTIMATE));
    fs::remove_all(folder);
    { FftPlan<float> plan({30, 18, 1}, 2, FftDirection::Forward); }
    EXPECT_FALSE(fs::exists(folder));
    use(fftw::wisdomFolder());  // as the environment asks, for the tests that follow
    fs::remove_all(folder);
}

}  // namespace
}  // namespace recon
