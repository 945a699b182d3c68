// SENSE on the GPU: the operators of recon/sense are written from VectorSpace
// primitives only, so the CUDA backend runs them with no code of its own; the
// image must match the CPU backend's.
#include <gtest/gtest.h>

#include <algorithm>

#include "../test_support.hpp"
#include "gpu_test_support.hpp"
#include "recon/cuda/cuda_backend.hpp"
#include "recon/cuda/linalg.hpp"
#include "recon/sense/espirit.hpp"
#include "recon/sense/small_linalg.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

using namespace recon;
using namespace recon::test;

namespace {

TEST(CudaSense, EightCoilSolveMatchesTheCpu) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    SolveOptions o;
    o.iterations = 15;
    o.lambda = 0.05;
    o.coil_combination = CoilCombination::Sense;
    // Plain CG on both (the preconditioned solves are compared in CudaPreconditioner.SenseAppliesLikeTheCpuBackend).
    o.preconditioner = PreconditionerKind::None;
    ReconstructionSession cpu(createCpuBackend(Precision::Single)), dev(gpu(Precision::Single));
    cpu.setDataset(data);
    dev.setDataset(data);
    // The same maps on both: estimated maps differ by gridding's rounding, and their mask's edge with them.
    dev.setCoilMaps(cpu.coilMaps());
    const SolveResult a = cpu.solve(o), b = dev.solve(o);
    ASSERT_EQ(a.image.size(), b.image.size());
    EXPECT_LT(relativeError(b.image, a.image), 2e-3);
    const Quality qa = measureQuality(a.image, data->truth, false), qb = measureQuality(b.image, data->truth, false);
    EXPECT_NEAR(qb.psnr_db, qa.psnr_db, 0.05);
}

// The preconditioned SENSE solve gives the CPU's image on the GPU: the maps' energy, D, the
// inside/outside split and the circulant all made on the device; and a warm lambda change (M^{-1}
// rebuilt there) too; and both with the density-weighted data term.
TEST(CudaSense, PreconditionedSolveMatchesTheCpu) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    SolveOptions o;
    o.iterations = 15;
    o.lambda = 0.05;
    o.coil_combination = CoilCombination::Sense;
    o.preconditioner = PreconditionerKind::Circulant;
    ReconstructionSession cpu(createCpuBackend(Precision::Single)), dev(gpu(Precision::Single));
    cpu.setDataset(data);
    dev.setDataset(data);
    dev.setCoilMaps(cpu.coilMaps());
    const SolveResult a = cpu.solve(o), b = dev.solve(o);
    EXPECT_LT(relativeError(b.image, a.image), 2e-3);
    EXPECT_LT(std::abs(b.history.back().residual - a.history.back().residual), 0.02 * a.history.back().residual);
    o.lambda = 0.02;
    o.warm_start = true;
    o.iterations = 5;
    const SolveResult wa = cpu.solve(o), wb = dev.solve(o);
    ASSERT_TRUE(wa.warm_started && wb.warm_started);
    EXPECT_LT(relativeError(wb.image, wa.image), 2e-3);
    // Preconditioned: the GPU's 15 iterations end below plain CG's residual there.
    o.warm_start = false;
    o.lambda = 0.05;
    o.iterations = 15;
    o.preconditioner = PreconditionerKind::None;
    const SolveResult plain = dev.solve(o);
    EXPECT_LT(b.history.back().residual, plain.history.back().residual);
    // Density-weighted (D^{1/2} F, the one weighted kernel T_D, F^H D d and the weighted circulant made
    // on each backend): the same image, cold and after a warm lambda change.
    o.weighting = DataWeighting::Density;
    o.preconditioner = PreconditionerKind::Circulant;
    const SolveResult da = cpu.solve(o), db = dev.solve(o);
    EXPECT_LT(relativeError(db.image, da.image), 2e-3);
    EXPECT_NEAR(db.lambda_scale, da.lambda_scale, 1e-5 * da.lambda_scale);
    o.lambda = 0.02;
    o.warm_start = true;
    o.iterations = 5;
    const SolveResult dwa = cpu.solve(o), dwb = dev.solve(o);
    ASSERT_TRUE(dwa.warm_started && dwb.warm_started);
    EXPECT_LT(relativeError(dwb.image, dwa.image), 2e-3);
}

// ESPIRiT's calibration matrix's right singular vectors on the device (cuBLAS + cuSOLVER,
// float64): A^H A v = lambda v against a brute-force product on the host, and the same
// eigenvalues and eigenvectors (up to their phase) as the host's Eigen.
TEST(CudaSense, GramEigenMatchesTheHost) {
    const std::size_t rows = 150, cols = 24;
    const ComplexArray a = randomComplex(rows * cols, 5);
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Single);
    std::vector<double> vg, vc;
    ComplexArray eg, ec;
    dev->gramEigen(a, rows, cols, vg, eg);
    cpu->gramEigen(a, rows, cols, vc, ec);
    ASSERT_EQ(vg.size(), cols);
    ASSERT_EQ(eg.size(), cols * cols);
    for (std::size_t j = 0; j < cols; ++j) {
        EXPECT_NEAR(vg[j], vc[j], 1e-10 * vc.back());
        if (j > 0) EXPECT_LE(vg[j - 1], vg[j]);  // ascending
        // (A^H A v)_i = sum_r conj(a_ri) sum_k a_rk v_k, by brute force.
        double residual = 0, phase_fit = 0;
        for (std::size_t i = 0; i < cols; ++i) {
            cdouble s = 0;
            for (std::size_t r = 0; r < rows; ++r) {
                cdouble av = 0;
                for (std::size_t k = 0; k < cols; ++k) av += a[r + rows * k] * eg[k + cols * j];
                s += std::conj(a[r + rows * i]) * av;
            }
            residual += std::norm(s - vg[j] * eg[i + cols * j]);
        }
        cdouble inner = 0;
        for (std::size_t i = 0; i < cols; ++i) inner += std::conj(ec[i + cols * j]) * eg[i + cols * j];
        phase_fit = std::abs(inner);
        EXPECT_LT(std::sqrt(residual), 1e-9 * vc.back()) << "eigenpair " << j;
        EXPECT_NEAR(phase_fit, 1.0, 1e-9) << "eigenvector " << j;
    }
}

// The ESPIRiT maps estimated on the GPU (calibration fit, the calibration matrix's
// eigen-decomposition) agree with the CPU backend's inside both masks.
TEST(CudaSense, EspiritMapsMatchTheCpu) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Single);
    const CoilMaps a = estimateCoilMapsEspirit(*cpu, *data), b = estimateCoilMapsEspirit(*dev, *data);
    ASSERT_EQ(a.maps.size(), b.maps.size());
    std::vector<std::uint8_t> both(a.mask.size());
    std::size_t differ = 0, inside = 0;
    for (std::size_t v = 0; v < both.size(); ++v) {
        both[v] = a.mask[v] && b.mask[v];
        differ += a.mask[v] != b.mask[v];
        inside += a.mask[v];
    }
    ASSERT_GT(inside, 0u);
    EXPECT_LT(double(differ), 0.01 * double(inside));  // the masks' edges move by rounding only
    const CoilMapAgreement agree = compareCoilMaps(b.maps, a.maps, data->coils, both);
    EXPECT_LT(agree.rms_error, 2e-3);
    EXPECT_LT(agree.max_error, 2e-2);
}

// The coil maps' last step on the device (a Jacobi solver per voxel): for random Hermitian
// matrices of 2, 8 and 12 coils (and all-zero ones), A v = lambda v by brute force, lambda the
// largest eigenvalue of the host's Eigen, the same vector up to its phase.
TEST(CudaSense, DominantEigenvectorsMatchTheHost) {
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Single);
    for (int n : {2, 8, 12}) {
        const std::size_t voxels = 1000, pairs = std::size_t(n) * std::size_t(n + 1) / 2;
        ComplexArray upper = randomComplex(pairs * voxels, 11 + unsigned(n));
        for (int r = 0; r < n; ++r)  // a Hermitian matrix's diagonal is real
            for (std::size_t v = 0; v < voxels; ++v) {
                cdouble& d = upper[(std::size_t(r) * n - std::size_t(r) * (r - 1) / 2) * voxels + v];
                d = d.real();
            }
        for (std::size_t p = 0; p < pairs; ++p) upper[p * voxels + voxels - 1] = 0;  // the last voxel: all zero
        ComplexArray vg, vc;
        std::vector<double> lg, lc;
        dev->dominantEigenvectors(n, voxels, upper, vg, lg);
        cpu->dominantEigenvectors(n, voxels, upper, vc, lc);
        ASSERT_EQ(vg.size(), std::size_t(n) * voxels);
        auto at = [&](int r, int c, std::size_t v) {
            if (r <= c) return upper[(std::size_t(r) * n - std::size_t(r) * (r - 1) / 2 + std::size_t(c - r)) * voxels + v];
            return std::conj(upper[(std::size_t(c) * n - std::size_t(c) * (c - 1) / 2 + std::size_t(r - c)) * voxels + v]);
        };
        double worst_residual = 0, worst_fit = 0;
        for (std::size_t v = 0; v + 1 < voxels; ++v) {
            double residual = 0, norm = 0;
            cdouble inner = 0;
            for (int r = 0; r < n; ++r) {
                cdouble av = 0;
                for (int c = 0; c < n; ++c) av += at(r, c, v) * vg[std::size_t(c) * voxels + v];
                residual += std::norm(av - lg[v] * vg[std::size_t(r) * voxels + v]);
                norm += std::norm(vg[std::size_t(r) * voxels + v]);
                inner += std::conj(vc[std::size_t(r) * voxels + v]) * vg[std::size_t(r) * voxels + v];
            }
            EXPECT_NEAR(lg[v], lc[v], 1e-10 * (1 + std::abs(lc[v]))) << n << " coils, voxel " << v;
            EXPECT_NEAR(norm, 1.0, 1e-10);
            worst_residual = std::max(worst_residual, std::sqrt(residual) / (1 + std::abs(lc[v])));
            worst_fit = std::max(worst_fit, 1 - std::abs(inner));
        }
        EXPECT_LT(worst_residual, 1e-10) << n << " coils";
        EXPECT_LT(worst_fit, 1e-8) << n << " coils";
        EXPECT_EQ(lg[voxels - 1], 0.0);
    }
}

// A coil field of 8 coils on a 3D grid from random blocks: the coils' 6x5x4 blocks and ESPIRiT's
// 36 pair kernels (5^3, the diagonal ones Hermitian-symmetric so G_rr(x) is real), or Walsh's
// box-summed outer products.
CoilField randomCoilField(bool pair_kernels) {
    CoilField f;
    f.coils = 8;
    f.object_threshold = 0.3;
    f.coil_blocks.shape = {6, 5, 4};
    f.coil_blocks.first = {-3, -2, -2};
    f.coil_blocks.values = randomComplex(8 * 120, 21);
    if (pair_kernels) {
        FrequencyBlocks& k = f.pair_blocks;
        k.shape = {5, 5, 5};
        k.first = {-2, -2, -2};
        k.sign = -1;
        k.values = randomComplex(36 * 125, 22);
        for (int r = 0, pair = 0; r < 8; ++r)
            for (int c = r; c < 8; ++c, ++pair) {
                if (c != r) continue;
                cdouble* b = k.values.data() + std::size_t(pair) * 125;
                ComplexArray sym(125);
                for (std::size_t i = 0; i < 125; ++i) sym[i] = 0.5 * (b[i] + std::conj(b[124 - i]));  // b(-f) = conj b(f)
                std::copy(sym.begin(), sym.end(), b);
            }
    } else {
        f.half_width = 2;
    }
    return f;
}

// The coil field on the device (images, object, ESPIRiT's G(x) or Walsh's covariance, the
// eigenpairs; the field never on the host) against the host's path: the same object, the same
// largest eigenvalues, the same eigenvectors up to their phase where the top eigenvalue is
// separated from the next (checked on the host's own field by the full decomposition).
TEST(CudaSense, CoilFieldMatchesTheHost) {
    const Grid grid = Grid::make3D(20, 18, 16);
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Single);
    for (bool pair_kernels : {true, false}) {
        const CoilField field = randomCoilField(pair_kernels);
        const CoilFieldEigen a = cpu->coilFieldEigenvectors(grid, field), b = dev->coilFieldEigenvectors(grid, field);
        // The field itself on the host, from its definition (coil_field.hpp).
        const HermitianField field_pairs(8, 0);
        ComplexArray upper;
        if (pair_kernels) {
            upper = blockImages(field.pair_blocks, grid);
        } else {
            const ComplexArray images = blockImages(field.coil_blocks, grid);
            for (int r = 0; r < 8; ++r)
                for (int c = r; c < 8; ++c) {
                    ComplexArray product(grid.voxels());
                    for (std::size_t v = 0; v < grid.voxels(); ++v)
                        product[v] = images[std::size_t(r) * grid.voxels() + v] * std::conj(images[std::size_t(c) * grid.voxels() + v]);
                    for (int axis = 0; axis < 3; ++axis) boxSumAlongAxis(product.data(), grid, axis, 2);
                    upper.insert(upper.end(), product.begin(), product.end());
                }
        }
        ASSERT_EQ(a.object, b.object);
        std::size_t inside = 0, compared = 0;
        double worst_value = 0, worst_vector = 0, scale = 0;
        for (double v : a.values) scale = std::max(scale, std::abs(v));
        const std::size_t voxels = grid.voxels();
        for (std::size_t v = 0; v < voxels; ++v) {
            if (!a.object[v]) {
                EXPECT_EQ(b.values[v], 0.0);
                continue;
            }
            ++inside;
            worst_value = std::max(worst_value, std::abs(a.values[v] - b.values[v]) / scale);
            SquareMatrix m(8);
            for (int r = 0; r < 8; ++r)
                for (int c = r; c < 8; ++c) {
                    m(r, c) = upper[field_pairs.pairIndex(r, c) * voxels + v];
                    m(c, r) = std::conj(m(r, c));
                }
            for (int r = 0; r < 8; ++r) m(r, r) = m(r, r).real();
            const HermitianEigen full = hermitianEigen(m);  // descending
            EXPECT_NEAR(b.values[v], full.values[0], 1e-10 * scale);
            if (full.values[0] - full.values[1] < 1e-3 * scale) continue;  // a near tie: any vector of the pair
            cdouble inner = 0;
            for (int c = 0; c < 8; ++c) inner += std::conj(a.vectors[std::size_t(c) * voxels + v]) * b.vectors[std::size_t(c) * voxels + v];
            worst_vector = std::max(worst_vector, 1 - std::abs(inner));
            ++compared;
        }
        ASSERT_GT(inside, voxels / 4) << "the object";
        ASSERT_GT(compared, inside * 9 / 10) << "voxels with a separated top eigenvalue";
        EXPECT_LT(worst_value, 1e-10) << (pair_kernels ? "ESPIRiT" : "Walsh");
        EXPECT_LT(worst_vector, 1e-6) << (pair_kernels ? "ESPIRiT" : "Walsh") << ", " << compared << " voxels";
    }
}

// SENSE's normal with the coils batched (pad with the maps, one batched FFT per chunk, crop and
// sum with the conjugate maps) against E^H E applied term by term through the samples in float64
// on the host, and against the host's coil-by-coil sum with the same kernel (GPU = CPU): odd and
// even coils, chunks of 1, 3, all and the free memory's; 2D and 3D grids with the fused
// transform and one without it (coil by coil on the device). The output is overwritten.
TEST(CudaSense, CoilSumNormalBatchedEqualsThePerCoilSum) {
    struct Case {
        Grid g;
        bool batched;
    };
    const Case cases[] = {{Grid::make3D(16, 16, 16), true}, {Grid::make3D(11, 10, 8), true}, {Grid::make2D(32, 32), true},
                          {Grid::make3D(10, 8, 9), false}};  // 2N = 18 along z: not a power of two
    auto dev = gpu(Precision::Single);
    auto cpu = createCpuBackend(Precision::Double);
    for (const Case& k : cases) {
        const Grid& g = k.g;
        const Trajectory t = randomTrajectory(g, 400, 3);
        const std::vector<double> phi(t.samples(), 0.9), phi2(t.samples(), 0.81);
        const auto kernel = dev->makeToeplitz(g, t, phi2, {"direct"});
        auto* cuda_kernel = dynamic_cast<cuda::CudaToeplitz<float>*>(kernel.get());
        ASSERT_NE(cuda_kernel, nullptr);
        const auto host_kernel = cpu->toeplitzFromQ(g, kernel->q());
        const auto exact = fourierOperator(*cpu, t, g, phi, {"direct"}, nullptr);  // no Toeplitz: through the samples
        for (int coils : {5, 8}) {
            const ComplexArray maps = randomComplex(std::size_t(coils) * g.voxels(), 17);
            const ComplexArray x = randomComplex(g.voxels(), 19);
            auto coilMap = [&](int c) {
                return ComplexArray(maps.begin() + std::ptrdiff_t(std::size_t(c) * g.voxels()),
                                    maps.begin() + std::ptrdiff_t(std::size_t(c + 1) * g.voxels()));
            };
            ComplexArray term_by_term(g.voxels());
            for (int c = 0; c < coils; ++c) {
                const ComplexArray sc = coilMap(c);
                ComplexArray sx(g.voxels());
                for (std::size_t i = 0; i < sx.size(); ++i) sx[i] = sc[i] * x[i];
                const ComplexArray fhf = applyAdjoint(*exact, applyForward(*exact, sx));
                for (std::size_t i = 0; i < sx.size(); ++i) term_by_term[i] += std::conj(sc[i]) * fhf[i];
            }
            std::vector<Vector> dmaps, hmaps;
            std::vector<const Vector*> dptrs, hptrs;
            for (int c = 0; c < coils; ++c) {
                dmaps.push_back(dev->fromHost(coilMap(c)));
                hmaps.push_back(cpu->fromHost(coilMap(c)));
            }
            for (int c = 0; c < coils; ++c) {
                dptrs.push_back(&dmaps[std::size_t(c)]);
                hptrs.push_back(&hmaps[std::size_t(c)]);
            }
            const Vector hx = cpu->fromHost(x);
            Vector hy = cpu->make(g.voxels());
            host_kernel->coilSumNormal(hptrs, hx, hy);
            const ComplexArray host = cpu->toHost(hy);
            ASSERT_LT(relativeError(host, term_by_term), 1e-4) << "the host's kernel from the device's Q";
            const Vector dx = dev->fromHost(x);
            for (int chunk : {1, 3, coils, 0}) {
                SCOPED_TRACE(g.describe() + ", " + std::to_string(coils) + " coils, chunk " + std::to_string(chunk));
                cuda_kernel->setCoilChunk(chunk);
                Vector dy = dev->fromHost(randomComplex(g.voxels(), 23));  // overwritten, not added to
                kernel->coilSumNormal(dptrs, dx, dy);
                const ComplexArray got = dev->toHost(dy);
                EXPECT_LT(relativeError(got, host), 2e-5);
                EXPECT_LT(relativeError(got, term_by_term), 1e-4);
                EXPECT_EQ(cuda_kernel->coilChunk(), k.batched ? (chunk > 0 ? std::min(chunk, coils) : std::min(coils, cuda::kMaxCoilBatch)) : 0);
            }
        }
    }
}

// F^H d of every coil from one upload equals each coil's own adjoint sum.
TEST(CudaSense, AdjointsOfAllCoilsMatchEachCoil) {
    auto dev = gpu(Precision::Single);
    const Grid g = Grid::make3D(16, 12, 10);
    const Trajectory t = randomTrajectory(g, 900, 5);
    const int coils = 3;
    const ComplexArray values = randomComplex(std::size_t(coils) * t.samples(), 6);
    const auto all = dev->adjointsOnBackend(t, values, coils, SampleGrid::image(g), {"nufft", 1e-6});
    ASSERT_EQ(all.size(), std::size_t(coils));
    for (int c = 0; c < coils; ++c) {
        const ComplexArray one(values.begin() + std::ptrdiff_t(std::size_t(c) * t.samples()),
                               values.begin() + std::ptrdiff_t(std::size_t(c + 1) * t.samples()));
        const auto each = dev->adjointOnBackend(t, one, SampleGrid::image(g), {"nufft", 1e-6});
        EXPECT_LT(relativeError(dev->toHost(*all[std::size_t(c)]), dev->toHost(*each)), 1e-6) << "coil " << c;
    }
    EXPECT_THROW(dev->adjointsOnBackend(t, values, coils + 1, SampleGrid::image(g), {"nufft", 1e-6}), InputError);
}

}  // namespace
