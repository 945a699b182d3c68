// SENSE on the CPU backend: the operator against its definition term by term, the
// adjoint identity, prewhitening against a known covariance, coil compression's
// energy, and SENSE against coil-by-coil sum of squares on undersampled 8-coil data
// (the coil map estimates: test_coil_maps.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/phantom/coil_sensitivities.hpp"
#include "recon/sense/coil_maps.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/sense/small_linalg.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "../test_support.hpp"

using namespace recon;
using namespace recon::test;

namespace {

struct SenseFixture {
    std::unique_ptr<Backend> backend = createCpuBackend(Precision::Double);
    Grid g = Grid::make3D(6, 5, 4);
    Trajectory t = randomTrajectory(g, 150, 7);
    int coils = 3;
    ComplexArray maps = randomComplex(std::size_t(coils) * g.voxels(), 11);
    LinearOperatorPtr fourier() {
        const std::vector<double> phi(t.samples(), 0.8), phi2(t.samples(), 0.64);
        return fourierOperator(*backend, t, g, phi, {"direct"}, backend->makeToeplitz(g, t, phi2, {"direct"}));
    }
    ComplexArray coilMap(int c) const {
        return ComplexArray(maps.begin() + std::ptrdiff_t(std::size_t(c) * g.voxels()),
                            maps.begin() + std::ptrdiff_t(std::size_t(c + 1) * g.voxels()));
    }
};

ComplexArray times(const ComplexArray& a, const ComplexArray& b, bool conjugate_a = false) {
    ComplexArray out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = (conjugate_a ? std::conj(a[i]) : a[i]) * b[i];
    return out;
}

}  // namespace

TEST(Sense, NormalIsTheSumOverCoilsOfEhETermByTerm) {
    SenseFixture f;
    auto fourier = f.fourier();
    SenseOperator e(fourier, f.maps);
    ASSERT_EQ(e.coils(), 3);
    ASSERT_EQ(e.outSize(), 3 * f.t.samples());
    const ComplexArray x = randomComplex(f.g.voxels(), 3);
    // sum_c conj(S_c) F^H F (S_c x), each F^H F through the samples (no Toeplitz kernel).
    ComplexArray expected(f.g.voxels());
    for (int c = 0; c < f.coils; ++c) {
        const ComplexArray sc = f.coilMap(c);
        const ComplexArray term = times(sc, applyAdjoint(*fourier, applyForward(*fourier, times(sc, x))), true);
        for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += term[i];
    }
    EXPECT_LT(relativeError(applyNormal(e, x), expected), 1e-10);
    // Forward: the coils' data one after another.
    const ComplexArray y = applyForward(e, x);
    for (int c = 0; c < f.coils; ++c) {
        const ComplexArray yc = applyForward(*fourier, times(f.coilMap(c), x));
        const ComplexArray got(y.begin() + std::ptrdiff_t(std::size_t(c) * f.t.samples()),
                               y.begin() + std::ptrdiff_t(std::size_t(c + 1) * f.t.samples()));
        EXPECT_LT(relativeError(got, yc), 1e-12) << "coil " << c;
    }
}

// ToeplitzOperator::coilSumNormal (the primitive SENSE's normal runs on) against E^H E applied term by
// term through the samples, on 2D and 3D grids and odd and even numbers of coils; a SenseOperator
// given the kernel equals one without it (F's normal coil by coil); bad shapes are refused by name.
TEST(Sense, CoilSumNormalIsEhETermByTerm) {
    for (const Grid& g : {Grid::make3D(6, 5, 4), Grid::make2D(7, 6)}) {
        for (int coils : {1, 3, 4}) {
            SCOPED_TRACE(g.describe() + ", " + std::to_string(coils) + " coils");
            SenseFixture f;
            f.g = g;
            f.t = randomTrajectory(g, 120, 9);
            f.coils = coils;
            f.maps = randomComplex(std::size_t(coils) * g.voxels(), 13);
            const std::vector<double> phi(f.t.samples(), 0.8), phi2(f.t.samples(), 0.64);
            const auto kernel = f.backend->makeToeplitz(g, f.t, phi2, {"direct"});
            const auto fourier = fourierOperator(*f.backend, f.t, g, phi, {"direct"}, kernel);
            const ComplexArray x = randomComplex(g.voxels(), 21);
            ComplexArray expected(g.voxels());
            for (int c = 0; c < coils; ++c) {
                const ComplexArray sc = f.coilMap(c);
                const ComplexArray term = times(sc, applyAdjoint(*fourier, applyForward(*fourier, times(sc, x))), true);
                for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += term[i];
            }
            std::vector<Vector> maps;
            std::vector<const Vector*> ptrs;
            for (int c = 0; c < coils; ++c) maps.push_back(f.backend->fromHost(f.coilMap(c)));
            for (const Vector& m : maps) ptrs.push_back(&m);
            const Vector xv = f.backend->fromHost(x);
            Vector y = f.backend->make(g.voxels());
            kernel->coilSumNormal(ptrs, xv, y);
            EXPECT_LT(relativeError(f.backend->toHost(y), expected), 1e-10);
            // The operator with the kernel (one call) and without it (F's normal per coil).
            EXPECT_LT(relativeError(applyNormal(SenseOperator(fourier, f.maps, kernel), x), expected), 1e-10);
            EXPECT_LT(relativeError(applyNormal(SenseOperator(fourier, f.maps), x), expected), 1e-10);
            // Shapes: a short map, an output that is the input, no maps.
            Vector short_map = f.backend->make(g.voxels() - 1);
            std::vector<const Vector*> bad = ptrs;
            bad.back() = &short_map;
            try {
                kernel->coilSumNormal(bad, xv, y);
                FAIL() << "a short map accepted";
            } catch (const InputError& e) {
                EXPECT_NE(std::string(e.what()).find("coil " + std::to_string(coils - 1) + "'s map"), std::string::npos) << e.what();
            }
            Vector same = f.backend->fromHost(x);
            EXPECT_THROW(kernel->coilSumNormal(ptrs, same, same), InputError);
            EXPECT_THROW(kernel->coilSumNormal({}, xv, y), InputError);
        }
    }
    // A kernel of another grid is refused when the operator is made.
    SenseFixture f;
    const Grid other = Grid::make3D(5, 5, 4);
    const std::vector<double> phi2(f.t.samples(), 0.64);
    EXPECT_THROW(SenseOperator(f.fourier(), f.maps, f.backend->makeToeplitz(other, randomTrajectory(other, 150, 7), phi2, {"direct"})),
                 InputError);
}

TEST(Sense, AdjointIdentityAndRightHandSideFromCoilImages) {
    SenseFixture f;
    auto fourier = f.fourier();
    SenseOperator e(fourier, f.maps);
    const ComplexArray x = randomComplex(e.inSize(), 1), y = randomComplex(e.outSize(), 2);
    const cdouble lhs = inner(y, applyForward(e, x)), rhs = inner(applyAdjoint(e, y), x);
    EXPECT_LT(std::abs(lhs - rhs), 1e-11 * std::abs(lhs));
    // E^H d from per-coil F^H d_c equals the operator's adjoint.
    std::vector<Vector> coil_images;
    std::vector<const Vector*> ptrs;
    for (int c = 0; c < f.coils; ++c) {
        const ComplexArray yc(y.begin() + std::ptrdiff_t(std::size_t(c) * f.t.samples()),
                              y.begin() + std::ptrdiff_t(std::size_t(c + 1) * f.t.samples()));
        coil_images.push_back(f.backend->fromHost(applyAdjoint(*fourier, yc)));
    }
    for (const auto& v : coil_images) ptrs.push_back(&v);
    const Vector combined = senseAdjointFromCoilImages(*f.backend, ptrs, f.maps);
    EXPECT_LT(relativeError(f.backend->toHost(combined), applyAdjoint(e, y)), 1e-12);
    // The same with the operator's resident maps (the session's path).
    EXPECT_LT(relativeError(f.backend->toHost(e.adjointFromCoilImages(ptrs)), applyAdjoint(e, y)), 1e-12);
}

TEST(Sense, ShapeErrorsNameWhatIsWrong) {
    SenseFixture f;
    auto fourier = f.fourier();
    ComplexArray ragged(f.g.voxels() * 2 + 1);
    try {
        SenseOperator e(fourier, ragged);
        FAIL() << "ragged maps accepted";
    } catch (const InputError& err) {
        EXPECT_NE(std::string(err.what()).find("not a whole number of images"), std::string::npos) << err.what();
    }
    EXPECT_THROW(SenseOperator(fourier, ComplexArray{}), InputError);
    Vector one = f.backend->make(f.g.voxels());
    EXPECT_THROW(senseAdjointFromCoilImages(*f.backend, {&one}, f.maps), InputError);  // 3 maps, 1 coil
    EXPECT_THROW(SenseOperator(fourier, f.maps).adjointFromCoilImages({&one}), InputError);
}

// The session's copy (whitened straight from the input, nothing changed there) equals a copy whitened
// in place, field for field; the session's F^H d of all coils at once equals each coil's own.
TEST(Prewhitening, TheSessionsCopyEqualsWhiteningInPlace) {
    const auto data = simulate(demoCase("radial-2d-8coil"));
    auto with_reference = std::make_shared<Dataset>(*data);
    // A noise scan of coupled coils (each leaks 40 % into the next), 256 samples per coil.
    const std::size_t per_coil = 256;
    const ComplexArray white = randomComplex(std::size_t(data->coils) * per_coil, 8);
    with_reference->noise = white;
    for (int c = 1; c < data->coils; ++c)
        for (std::size_t i = 0; i < per_coil; ++i)
            with_reference->noise[std::size_t(c) * per_coil + i] += 0.4 * white[std::size_t(c - 1) * per_coil + i];
    with_reference->reference = randomComplex(data->grid.voxels(), 4);
    with_reference->density.assign(data->samples(), 0.5);
    const Dataset before = *with_reference;
    const std::shared_ptr<Dataset> copy = prewhitenedCopy(*with_reference);
    Dataset in_place = *with_reference;
    ASSERT_TRUE(prewhitenWithNoiseScan(in_place));
    ASSERT_TRUE(copy);
    EXPECT_EQ(copy->kspace, in_place.kspace);
    EXPECT_NE(copy->kspace, before.kspace);
    EXPECT_TRUE(copy->noise.empty());
    EXPECT_EQ(copy->source, in_place.source);
    EXPECT_EQ(copy->name, in_place.name);
    EXPECT_EQ(copy->trajectory.k, in_place.trajectory.k);
    EXPECT_EQ(copy->trajectory.kind, in_place.trajectory.kind);
    EXPECT_EQ(copy->trajectory.readout_length, in_place.trajectory.readout_length);
    EXPECT_EQ(copy->coils, in_place.coils);
    EXPECT_EQ(copy->truth, in_place.truth);
    EXPECT_EQ(copy->reference, in_place.reference);
    EXPECT_EQ(copy->density, in_place.density);
    EXPECT_EQ(copy->basis, in_place.basis);
    EXPECT_EQ(copy->grid.describe(), in_place.grid.describe());
    EXPECT_EQ(with_reference->kspace, before.kspace);  // the input untouched
    EXPECT_EQ(with_reference->noise, before.noise);
    EXPECT_EQ(prewhitenedCopy(*data), nullptr);  // no noise scan

    ReconstructionSession all(createCpuBackend(Precision::Double)), each(createCpuBackend(Precision::Double));
    all.setDataset(with_reference);
    each.setDataset(with_reference);
    EXPECT_EQ(all.dataset().kspace, in_place.kspace);
    const auto adjoints = all.coilAdjoints({"nufft", 1e-6});
    ASSERT_EQ(adjoints.size(), std::size_t(data->coils));
    for (int c = 0; c < data->coils; ++c) {
        const ComplexArray one = createCpuBackend(Precision::Double)->toHost(*each.adjointData(c, {"nufft", 1e-6}));
        EXPECT_LT(relativeError(createCpuBackend(Precision::Double)->toHost(*adjoints[std::size_t(c)]), one), 1e-12) << "coil " << c;
        EXPECT_EQ(all.adjointData(c, {"nufft", 1e-6}), adjoints[std::size_t(c)]);  // one cache
    }
}

TEST(Prewhitening, RecoversAKnownCovarianceAndWhitensIt) {
    // Psi = L L^H with a known lower-triangular L (correlated coils of unequal noise).
    const int coils = 4;
    SquareMatrix l(coils);
    l(0, 0) = 1.0;
    l(1, 0) = {0.5, 0.2};  l(1, 1) = 0.8;
    l(2, 0) = {0.1, -0.3}; l(2, 1) = {0.2, 0.1}; l(2, 2) = 1.5;
    l(3, 0) = {-0.2, 0.0}; l(3, 1) = {0.0, 0.4}; l(3, 2) = {0.3, 0.3}; l(3, 3) = 0.5;
    SquareMatrix psi(coils);
    for (int r = 0; r < coils; ++r)
        for (int c = 0; c < coils; ++c)
            for (int k = 0; k < coils; ++k) psi(r, c) += l(r, k) * std::conj(l(c, k));
    // Cholesky gives back L exactly.
    const SquareMatrix chol = cholesky(psi);
    for (int i = 0; i < coils * coils; ++i) EXPECT_LT(std::abs(chol.a[std::size_t(i)] - l.a[std::size_t(i)]), 1e-12);

    // Noise with covariance Psi: n = L z, z white with unit variance.
    const std::size_t n = 200000;
    const ComplexArray z = randomComplex(std::size_t(coils) * n, 5);  // uniform in the unit square: variance 2/3
    ComplexArray noise(z.size());
    for (std::size_t m = 0; m < n; ++m)
        for (int r = 0; r < coils; ++r)
            for (int k = 0; k <= r; ++k) noise[std::size_t(r) * n + m] += l(r, k) * z[std::size_t(k) * n + m];
    SquareMatrix estimated = noiseCovariance(noise, coils);
    // randomComplex's variance, measured on z itself so the check does not depend on its distribution.
    const double var = noiseCovariance(ComplexArray(z.begin(), z.begin() + std::ptrdiff_t(n)), 1)(0, 0).real();
    for (int r = 0; r < coils; ++r)
        for (int c = 0; c < coils; ++c) EXPECT_NEAR(std::abs(estimated(r, c) / var - psi(r, c)), 0.0, 0.02) << r << "," << c;

    prewhiten(noise, coils, estimated);
    const SquareMatrix white = noiseCovariance(noise, coils);
    for (int r = 0; r < coils; ++r)
        for (int c = 0; c < coils; ++c) EXPECT_NEAR(std::abs(white(r, c) - (r == c ? 1.0 : 0.0)), 0.0, 1e-9) << r << "," << c;

    EXPECT_THROW(prewhiten(noise, 3, estimated), InputError);
    SquareMatrix dead = psi;
    for (int c = 0; c < coils; ++c) dead(2, c) = dead(c, 2) = 0;
    EXPECT_THROW(cholesky(dead), NumericalError);
}

TEST(CoilCompression, KeepsTheEnergyToItsThreshold) {
    // 8 coils that are mixtures of 3 sources plus a weak fourth: most energy in 3 virtual coils.
    const int coils = 8;
    const std::size_t m = 4000;
    const ComplexArray sources = randomComplex(4 * m, 21), mix = randomComplex(std::size_t(coils) * 4, 22);
    ComplexArray data(std::size_t(coils) * m);
    const double strength[4] = {1.0, 0.7, 0.5, 0.05};
    for (int c = 0; c < coils; ++c)
        for (int s = 0; s < 4; ++s)
            for (std::size_t i = 0; i < m; ++i)
                data[std::size_t(c) * m + i] += strength[s] * mix[std::size_t(c) * 4 + std::size_t(s)] * sources[std::size_t(s) * m + i];
    double total = 0;
    for (const auto& v : data) total += std::norm(v);

    for (double threshold : {0.9, 0.99, 0.9999}) {
        const CoilCompression plan = planCoilCompression(data, coils, 0, threshold);
        const ComplexArray virt = compressCoils(data, coils, plan);
        double kept = 0;
        for (const auto& v : virt) kept += std::norm(v);
        EXPECT_GE(kept / total, threshold - 1e-12) << threshold;
        EXPECT_NEAR(kept / total, plan.kept_energy, 1e-9);
        // The smallest such K: one coil fewer does not reach the threshold.
        if (plan.virtual_coils > 1) {
            const CoilCompression fewer = planCoilCompression(data, coils, plan.virtual_coils - 1);
            EXPECT_LT(fewer.kept_energy, threshold) << threshold;
        }
    }
    EXPECT_LE(planCoilCompression(data, coils, 0, 0.99).virtual_coils, 4);
    EXPECT_EQ(planCoilCompression(data, coils, 0, 0.9999999).virtual_coils >= 4, true);
    // K = C keeps everything (a unitary change of coils).
    EXPECT_NEAR(planCoilCompression(data, coils, coils).kept_energy, 1.0, 1e-12);
    EXPECT_THROW(planCoilCompression(data, coils, coils + 1), InputError);
    EXPECT_THROW(planCoilCompression(data, coils, 0, 1.5), InputError);
}

TEST(CoilCompression, EigenDecompositionReconstructsTheMatrix) {
    const int n = 6;
    const ComplexArray b = randomComplex(std::size_t(n * n), 31);
    SquareMatrix a(n);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            for (int k = 0; k < n; ++k) a(r, c) += b[std::size_t(r * n + k)] * std::conj(b[std::size_t(c * n + k)]);
    const HermitianEigen e = hermitianEigen(a);
    ASSERT_EQ(e.values.size(), std::size_t(n));
    for (int i = 1; i < n; ++i) EXPECT_GE(e.values[std::size_t(i - 1)], e.values[std::size_t(i)]);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            cdouble s = 0;
            for (int k = 0; k < n; ++k) s += e.vectors(r, k) * e.values[std::size_t(k)] * std::conj(e.vectors(c, k));
            EXPECT_LT(std::abs(s - a(r, c)), 1e-9 * e.values[0]);
        }
}

// Per voxel the largest eigenpair, against the Jacobi decomposition above (independent code): one
// strong eigenvalue, two equal or nearly equal top eigenvalues (ESPIRiT's G has several near 1 at
// many voxels), a negative eigenvalue of larger magnitude, and voxels left out by the selection
// (zero: coil maps are not decomposed outside the object).
TEST(CoilMaps, DominantEigenvectorsMatchTheFullDecompositionAndSkipUnselectedVoxels) {
    const int n = 5;
    const std::size_t voxels = 64;
    HermitianField field(n, voxels);
    std::vector<SquareMatrix> matrices;
    const ComplexArray basis_values = randomComplex(std::size_t(n * n), 7);
    for (std::size_t v = 0; v < voxels; ++v) {
        // Q diag(l) Q^H with Q unitary from a fixed random matrix (Gram-Schmidt) turned by voxel.
        std::vector<ComplexArray> q;
        for (int k = 0; k < n; ++k) {
            ComplexArray col(static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r)
                col[std::size_t(r)] = basis_values[std::size_t(r * n + k)] * std::polar(1.0, 0.05 * double(v) * (r + 1));
            for (const auto& u : q) {
                cdouble p = 0;
                for (int r = 0; r < n; ++r) p += std::conj(u[std::size_t(r)]) * col[std::size_t(r)];
                for (int r = 0; r < n; ++r) col[std::size_t(r)] -= p * u[std::size_t(r)];
            }
            double norm = 0;
            for (const auto& x : col) norm += std::norm(x);
            for (auto& x : col) x /= std::sqrt(norm);
            q.push_back(col);
        }
        std::vector<double> l{1.0, 0.3, 0.1, 0.05, 0.0};
        if (v % 8 == 3) l = {1.0, 1.0, 0.2, 0.1, 0.0};        // a tie at the top
        if (v % 8 == 5) l = {1.0, 0.999, 0.2, 0.1, 0.0};      // nearly a tie
        if (v % 8 == 6) l = {0.5, 0.2, 0.1, 0.0, -0.9};       // the largest is not the largest in magnitude
        SquareMatrix a(n);
        for (int r = 0; r < n; ++r)
            for (int c = 0; c < n; ++c)
                for (int k = 0; k < n; ++k) a(r, c) += q[std::size_t(k)][std::size_t(r)] * l[std::size_t(k)] * std::conj(q[std::size_t(k)][std::size_t(c)]);
        for (int r = 0; r < n; ++r)
            for (int c = r; c < n; ++c) field.pair(r, c)[v] = a(r, c);
        matrices.push_back(a);
    }
    std::vector<std::uint8_t> only(voxels, 1);
    only[10] = only[11] = 0;
    const std::unique_ptr<Backend> cpu = createCpuBackend(Precision::Double);
    const DominantEigen got = dominantEigenvectors(*cpu, field, {}, &only);
    for (std::size_t v = 0; v < voxels; ++v) {
        if (!only[v]) {
            EXPECT_EQ(got.values[v], 0.0);
            for (int r = 0; r < n; ++r) EXPECT_EQ(got.vectors[std::size_t(r) * voxels + v], cdouble(0));
            continue;
        }
        const HermitianEigen ref = hermitianEigen(matrices[v]);
        EXPECT_NEAR(got.values[v], ref.values[0], 1e-9) << "voxel " << v;
        // An eigenvector of the largest eigenvalue: A x = lambda x, unit norm (any phase; for the
        // tie, any vector of the top eigenspace).
        double residual = 0, norm = 0;
        for (int r = 0; r < n; ++r) {
            cdouble ax = 0;
            for (int c = 0; c < n; ++c) ax += matrices[v](r, c) * got.vectors[std::size_t(c) * voxels + v];
            residual += std::norm(ax - ref.values[0] * got.vectors[std::size_t(r) * voxels + v]);
            norm += std::norm(got.vectors[std::size_t(r) * voxels + v]);
        }
        EXPECT_NEAR(norm, 1.0, 1e-12) << "voxel " << v;
        EXPECT_LT(std::sqrt(residual), 1e-8) << "voxel " << v;
    }
    std::vector<std::uint8_t> wrong(voxels - 1, 1);
    EXPECT_THROW(dominantEigenvectors(*cpu, field, {}, &wrong), InputError);
}

// The coil field's host path (Backend::coilFieldEigenvectors' default, which the GPU's is
// tested against) from its definition by brute force: each block's image a plain sum over its
// frequencies at the voxel positions, Walsh's covariance a plain sum over the clipped box, the
// object by the root sum of squares, and per voxel the full decomposition's largest eigenpair.
TEST(CoilMaps, CoilFieldIsItsDefinition) {
    const Grid grid = Grid::make3D(7, 6, 5);
    const std::size_t voxels = grid.voxels();
    const int n = 3, h = 1;
    CoilField f;
    f.coils = n;
    f.object_threshold = 0.2;
    f.coil_blocks.shape = {3, 4, 2};
    f.coil_blocks.first = {-1, -2, 0};
    f.coil_blocks.values = randomComplex(std::size_t(n) * 24, 3);
    f.pair_blocks.shape = {3, 3, 3};
    f.pair_blocks.first = {-1, -1, -1};
    f.pair_blocks.sign = -1;
    f.pair_blocks.values = randomComplex(6 * 27, 4);
    auto image = [&](const FrequencyBlocks& b, std::size_t which, std::size_t v) {
        const int x = int(v % 7), y = int(v / 7 % 6), z = int(v / 42);
        cdouble sum = 0;
        for (int k = 0; k < b.shape[2]; ++k)
            for (int j = 0; j < b.shape[1]; ++j)
                for (int i = 0; i < b.shape[0]; ++i) {
                    const double phase = 2 * kPi * ((b.first[0] + i) * (x - 3) / 7.0 + (b.first[1] + j) * (y - 3) / 6.0 +
                                                    (b.first[2] + k) * (z - 2) / 5.0);
                    sum += b.values[which * blockPoints(b.shape) + std::size_t((k * b.shape[1] + j) * b.shape[0] + i)] *
                           std::polar(1.0, b.sign * phase);
                }
        return sum;
    };
    const ComplexArray images = blockImages(f.coil_blocks, grid);
    for (int c = 0; c < n; ++c)
        for (std::size_t v = 0; v < voxels; ++v)
            ASSERT_LT(std::abs(images[std::size_t(c) * voxels + v] - image(f.coil_blocks, std::size_t(c), v)), 1e-12);
    std::vector<double> rss(voxels);
    double rss_max = 0;
    for (std::size_t v = 0; v < voxels; ++v) {
        for (int c = 0; c < n; ++c) rss[v] += std::norm(image(f.coil_blocks, std::size_t(c), v));
        rss_max = std::max(rss_max, rss[v] = std::sqrt(rss[v]));
    }
    const std::unique_ptr<Backend> cpu = createCpuBackend(Precision::Double);
    for (bool walsh : {false, true}) {
        CoilField field = f;
        if (walsh) {
            field.pair_blocks.values.clear();
            field.half_width = h;
        }
        const CoilFieldEigen got = cpu->coilFieldEigenvectors(grid, field);
        std::size_t inside = 0;
        for (std::size_t v = 0; v < voxels; ++v) {
            ASSERT_EQ(got.object[v], rss[v] > 0.2 * rss_max ? 1 : 0) << "voxel " << v;
            if (!got.object[v]) {
                EXPECT_EQ(got.values[v], 0.0);
                continue;
            }
            ++inside;
            SquareMatrix m(n);
            const int x = int(v % 7), y = int(v / 7 % 6), z = int(v / 42);
            for (int r = 0, pair = 0; r < n; ++r)
                for (int c = r; c < n; ++c, ++pair) {
                    cdouble e = 0;
                    if (!walsh) {
                        e = image(f.pair_blocks, std::size_t(pair), v);
                    } else {
                        for (int dz = -h; dz <= h; ++dz)
                            for (int dy = -h; dy <= h; ++dy)
                                for (int dx = -h; dx <= h; ++dx) {
                                    if (x + dx < 0 || x + dx >= 7 || y + dy < 0 || y + dy >= 6 || z + dz < 0 || z + dz >= 5) continue;
                                    const std::size_t w = std::size_t(((z + dz) * 6 + y + dy) * 7 + x + dx);
                                    e += image(f.coil_blocks, std::size_t(r), w) * std::conj(image(f.coil_blocks, std::size_t(c), w));
                                }
                    }
                    m(r, c) = e;
                    m(c, r) = std::conj(e);
                }
            for (int r = 0; r < n; ++r) m(r, r) = m(r, r).real();  // random pair kernels: only the real part counts
            const HermitianEigen ref = hermitianEigen(m);
            EXPECT_NEAR(got.values[v], ref.values[0], 1e-9 * (1 + std::abs(ref.values[0]))) << "voxel " << v;
            cdouble inner = 0;
            for (int r = 0; r < n; ++r) inner += std::conj(ref.vectors(r, 0)) * got.vectors[std::size_t(r) * voxels + v];
            if (ref.values[0] - ref.values[1] > 1e-3 * std::abs(ref.values[0])) EXPECT_NEAR(std::abs(inner), 1.0, 1e-8) << "voxel " << v;
        }
        EXPECT_GT(inside, voxels / 4);
    }
    CoilField wrong = f;
    wrong.pair_blocks.values.pop_back();
    EXPECT_THROW(cpu->coilFieldEigenvectors(grid, wrong), InputError);
}

namespace {

CaseSpec smallMultiCoil(int spokes) {
    CaseSpec spec = demoCase("radial-2d-8coil");
    spec.trajectory.n = 64;
    spec.trajectory.readouts = spokes;
    return spec;
}

// A SENSE solve with finite differences (the lambda-change tests' set-up).
SolveOptions senseWithFiniteDifferences(int iterations) {
    SolveOptions o;
    o.coil_combination = CoilCombination::Sense;
    o.regularizer = RegularizerKind::FiniteDifference;
    o.iterations = iterations;
    return o;
}

}  // namespace

TEST(Sense, BeatsCoilByCoilSumOfSquaresOnUndersampledData) {
    const CaseSpec spec = smallMultiCoil(24);  // about 4x below Nyquist for 64^2
    auto data = simulate(spec);
    ReconstructionSession session(std::shared_ptr<Backend>(createCpuBackend(Precision::Double)));
    session.setDataset(data);
    SolveOptions opts;
    opts.regularizer = RegularizerKind::FiniteDifference;
    opts.lambda = spec.lambda;
    opts.iterations = 40;
    opts.coil_combination = CoilCombination::SumOfSquares;
    const SolveResult sos = session.solve(opts);
    opts.coil_combination = CoilCombination::Sense;
    const SolveResult sense = session.solve(opts);
    EXPECT_EQ(sense.coil_combination, "sense");
    ASSERT_EQ(sense.complex_image.size(), data->grid.voxels());
    const Quality q_sos = measureQuality(sos.image, data->truth, false);
    const Quality q_sense = measureQuality(sense.image, data->truth, false);
    std::printf("8 coils, 24 spokes, 64^2: SENSE %.2f dB, sum of squares %.2f dB\n", q_sense.psnr_db, q_sos.psnr_db);
    EXPECT_GT(q_sense.psnr_db, q_sos.psnr_db + 2.0);  // measured +4.8 dB (26.36 vs 21.58; low-resolution maps 24.66)
    // The same solve with the true maps (normalised to unit root sum of squares, phase of the
    // strongest coil removed as the estimate does, no mask): the estimated maps lose nothing.
    {
        const SyntheticCoils coils(2, 8);
        const ComplexArray truth_maps = coils.maps(data->grid);
        const std::size_t voxels = data->grid.voxels();
        CoilMaps exact;
        exact.coils = 8;
        exact.source = "true";
        exact.maps.resize(truth_maps.size());
        exact.mask.assign(voxels, 1);
        for (std::size_t v = 0; v < voxels; ++v) {
            double rss = 0;
            for (int c = 0; c < 8; ++c) rss += std::norm(truth_maps[std::size_t(c) * voxels + v]);
            for (int c = 0; c < 8; ++c)
                exact.maps[std::size_t(c) * voxels + v] = truth_maps[std::size_t(c) * voxels + v] / std::sqrt(rss);
        }
        ReconstructionSession with_true(std::shared_ptr<Backend>(createCpuBackend(Precision::Double)));
        with_true.setDataset(data);
        with_true.setCoilMaps(exact);
        const Quality q_true = measureQuality(with_true.solve(opts).image, data->truth, false);
        std::printf("  SENSE with the true maps %.2f dB\n", q_true.psnr_db);
        EXPECT_GT(q_sense.psnr_db, q_true.psnr_db - 1.0);  // measured 1.46 dB above (26.36 vs 24.90): ESPIRiT's mask
    }
    // A lambda change continues the resident SENSE solve.
    opts.warm_start = true;
    opts.lambda = spec.lambda * 2;
    const SolveResult again = session.solve(opts);
    EXPECT_TRUE(again.warm_started);
}

// A data set with a noise scan is whitened by the session itself (setDataset), so the GUI and
// batches reconstruct what the CLI does; whitening happens once, whoever starts it.
TEST(Prewhitening, TheSessionWhitensANoiseScanAsTheCliDoes) {
    CaseSpec spec = demoCase("radial-2d-8coil");
    spec.trajectory.n = 48;
    spec.trajectory.readouts = 30;
    spec.coils = 4;
    auto clean = simulate(spec);
    const int coils = 4;
    // Correlated coil noise n = L z, in the data and in a noise scan of 3000 samples per coil.
    SquareMatrix l(coils);
    l(0, 0) = 1.0;
    l(1, 0) = {0.4, 0.1};  l(1, 1) = 0.7;
    l(2, 0) = {0.0, -0.2}; l(2, 1) = {0.3, 0.0}; l(2, 2) = 1.3;
    l(3, 0) = {0.1, 0.1};  l(3, 1) = {-0.2, 0.2}; l(3, 2) = {0.1, 0.0}; l(3, 3) = 0.6;
    auto correlated = [&](std::size_t per_coil, unsigned seed, double scale) {
        const ComplexArray z = randomComplex(std::size_t(coils) * per_coil, seed);
        ComplexArray n(z.size());
        for (std::size_t m = 0; m < per_coil; ++m)
            for (int r = 0; r < coils; ++r)
                for (int k = 0; k <= r; ++k) n[std::size_t(r) * per_coil + m] += scale * l(r, k) * z[std::size_t(k) * per_coil + m];
        return n;
    };
    auto noisy = std::make_shared<Dataset>(*clean);
    const ComplexArray data_noise = correlated(noisy->samples(), 41, 0.02);
    for (std::size_t i = 0; i < noisy->kspace.size(); ++i) noisy->kspace[i] += data_noise[i];
    noisy->noise = correlated(3000, 42, 0.02);

    SolveOptions opts;
    opts.coil_combination = CoilCombination::Sense;
    opts.coil_maps = CoilMapMethod::LowResolution;
    opts.iterations = 15;
    opts.lambda = spec.lambda;
    auto solveWith = [&](std::shared_ptr<const Dataset> d, std::string* source = nullptr) {
        ReconstructionSession s(std::shared_ptr<Backend>(createCpuBackend(Precision::Double)));
        s.setDataset(std::move(d));
        EXPECT_TRUE(s.dataset().noise.empty());
        if (source) *source = s.dataset().source;
        return s.solve(opts).complex_image;
    };
    // The session given the raw data set with its noise scan.
    std::string source;
    const ComplexArray by_session = solveWith(noisy, &source);
    EXPECT_NE(source.find("noise-prewhitened (3000 noise samples per coil)"), std::string::npos) << source;
    EXPECT_FALSE(noisy->noise.empty());  // the caller's data set is left as it was
    // The CLI's order: whiten (before any coil compression), then hand the session the result.
    auto cli = std::make_shared<Dataset>(*noisy);
    ASSERT_TRUE(prewhitenWithNoiseScan(*cli));
    EXPECT_EQ(solveWith(cli), by_session);
    // Both equal whitening by hand with the noise scan's covariance (Cholesky, forward substitution).
    auto by_hand = std::make_shared<Dataset>(*noisy);
    prewhiten(by_hand->kspace, coils, noiseCovariance(by_hand->noise, coils));
    by_hand->noise.clear();
    EXPECT_LT(relativeError(solveWith(by_hand), by_session), 1e-12);
    // ... and not the unwhitened data (so the comparison above can fail).
    auto unwhitened = std::make_shared<Dataset>(*noisy);
    unwhitened->noise.clear();
    EXPECT_GT(relativeError(solveWith(unwhitened), by_session), 0.1);
}

TEST(CoilCompression, PrepareCoilsWhitensFirstThenCompresses) {
    // Four coils of random data and a noise scan with correlated, unequal noise.
    Dataset d;
    d.grid = Grid::make2D(8, 8);
    d.trajectory.dims = 2;
    d.trajectory.k.assign(3 * 50, 0.0);
    d.coils = 4;
    d.kspace = randomComplex(4 * 50, 7);
    const ComplexArray z = randomComplex(4 * 400, 8);
    d.noise.resize(z.size());
    for (std::size_t m = 0; m < 400; ++m)
        for (int c = 0; c < 4; ++c)
            d.noise[std::size_t(c) * 400 + m] = (1.0 + c) * z[std::size_t(c) * 400 + m] + 0.5 * z[m];
    Dataset prepared = d;
    const CoilPreparation prep = prepareCoils(prepared, 2);
    EXPECT_EQ(prep.coils, 4);
    EXPECT_EQ(prep.noise_samples, 400u);
    EXPECT_EQ(prep.virtual_coils, 2);
    EXPECT_EQ(prepared.coils, 2);
    EXPECT_TRUE(prepared.noise.empty());
    // By hand, in that order.
    ComplexArray whitened = d.kspace;
    prewhiten(whitened, 4, noiseCovariance(d.noise, 4));
    const CoilCompression plan = planCoilCompression(whitened, 4, 2);
    EXPECT_EQ(prep.kept_energy, plan.kept_energy);
    EXPECT_LT(relativeError(prepared.kspace, compressCoils(whitened, 4, plan)), 1e-12);
    // Compressing first, then whitening in the compressed space, is not the same.
    const CoilCompression raw_plan = planCoilCompression(d.kspace, 4, 2);
    EXPECT_NE(raw_plan.kept_energy, plan.kept_energy);
    // Without a noise scan or compression nothing changes.
    Dataset plain = d;
    plain.noise.clear();
    const CoilPreparation none = prepareCoils(plain, 0);
    EXPECT_EQ(none.noise_samples, 0u);
    EXPECT_EQ(none.virtual_coils, 0);
    EXPECT_EQ(plain.kspace, d.kspace);
    EXPECT_THROW(prepareCoils(plain, 5), InputError);
}

// ESPIRiT's calibration matrix: A built entry by entry from its definition, and the CPU
// backend's A^H A formed from the blocks (box sums of product images, never A) against the
// plain product A^H A, in 2D and 3D, with kernels and blocks of different sides per axis;
// the CPU backend's projection from the blocks equals the default's from A.
TEST(CoilMaps, CalibrationGramFromTheBlocksIsTheProductOfTheMatrix) {
    struct Case {
        BlockShape block, kernel;
        int coils;
    };
    for (const Case& k : {Case{{9, 7, 1}, {3, 4, 1}, 3}, Case{{6, 5, 7}, {2, 3, 4}, 2}, Case{{5, 5, 5}, {5, 1, 2}, 1}}) {
        CalibrationMatrix m;
        m.block = k.block;
        m.kernel = k.kernel;
        m.coils = k.coils;
        m.values = randomComplex(std::size_t(k.coils) * blockPoints(k.block), 11);
        const ComplexArray a = calibrationMatrixValues(m);
        const std::size_t rows = m.rows(), cols = m.cols();
        ASSERT_EQ(rows, std::size_t(k.block[0] - k.kernel[0] + 1) * std::size_t(k.block[1] - k.kernel[1] + 1) *
                            std::size_t(k.block[2] - k.kernel[2] + 1));
        ASSERT_EQ(a.size(), rows * cols);
        const std::size_t kp = blockPoints(k.kernel), bp = blockPoints(k.block);
        for (std::size_t col = 0; col < cols; ++col) {
            const std::size_t c = col / kp, kk = col % kp;
            const int kx = int(kk % std::size_t(k.kernel[0])), ky = int(kk / std::size_t(k.kernel[0]) % std::size_t(k.kernel[1])),
                      kz = int(kk / std::size_t(k.kernel[0] * k.kernel[1]));
            for (std::size_t q = 0; q < rows; ++q) {
                const BlockShape pos = m.positions();
                const int qx = int(q % std::size_t(pos[0])), qy = int(q / std::size_t(pos[0]) % std::size_t(pos[1])),
                          qz = int(q / std::size_t(pos[0] * pos[1]));
                const std::size_t p = std::size_t(((qz + kz) * k.block[1] + qy + ky) * k.block[0] + qx + kx);
                ASSERT_EQ(a[col * rows + q], m.values[c * bp + p]);
            }
        }
        const ComplexArray gram = calibrationGram(m);
        ASSERT_EQ(gram.size(), cols * cols);
        double scale = 0;
        for (const cdouble& v : m.values) scale += std::norm(v);
        for (std::size_t i = 0; i < cols; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                cdouble want = 0;
                for (std::size_t q = 0; q < rows; ++q) want += std::conj(a[i * rows + q]) * a[j * rows + q];
                ASSERT_LT(std::abs(gram[j * cols + i] - want), 1e-12 * scale) << i << ", " << j;
            }
        auto cpu = createCpuBackend(Precision::Double, 1);
        std::vector<double> values, values_a;
        std::size_t kept = 0, kept_a = 0;
        ComplexArray p, p_a;
        cpu->calibrationProjection(m, 0.05, values, kept, p);
        cpu->gramProjection(a, rows, cols, 0.05, values_a, kept_a, p_a);
        EXPECT_EQ(kept, kept_a);
        EXPECT_GT(kept, 0u);
        ASSERT_EQ(values.size(), cols);
        for (std::size_t i = 0; i < cols; ++i) EXPECT_NEAR(values[i], values_a[i], 1e-10 * scale);
        for (std::size_t i = 0; i < p.size(); ++i) ASSERT_LT(std::abs(p[i] - p_a[i]), 1e-8);
    }
    CalibrationMatrix bad;
    bad.block = {4, 4, 1};
    bad.kernel = {5, 1, 1};
    bad.coils = 1;
    bad.values = ComplexArray(16);
    EXPECT_THROW(calibrationGram(bad), InputError);
    bad.kernel = {2, 2, 1};
    bad.values = ComplexArray(15);
    EXPECT_THROW(calibrationMatrixValues(bad), InputError);
}

// The host's signal-subspace projection (tridiagonalisation, eigenvalues, inverse iteration for
// the kept ones only) against Eigen's full decomposition, on Gram matrices with known spectra:
// distinct values, a repeated value (multiplicity 3) and a tight cluster inside the kept part,
// and a gap at the threshold so the subspace is well defined.
TEST(CoilMaps, GramProjectionMatchesTheFullDecomposition) {
    const int n = 40;
    // A random unitary: the eigenvectors of a random Hermitian matrix.
    SquareMatrix h(n);
    const ComplexArray r = randomComplex(std::size_t(n) * std::size_t(n), 5);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) h(i, j) = r[std::size_t(i * n + j)] + std::conj(r[std::size_t(j * n + i)]);
    const SquareMatrix q = hermitianEigen(h).vectors;
    auto product = [&](const SquareMatrix& a, const SquareMatrix& b) {
        SquareMatrix c(n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k < n; ++k) c(i, j) += a(i, k) * b(k, j);
        return c;
    };
    for (int variant = 0; variant < 3; ++variant) {
        std::vector<double> spectrum(n);  // 12 kept above the threshold 1e-3, the rest far below
        for (int i = 0; i < n; ++i) spectrum[std::size_t(i)] = i < 12 ? 100.0 / (1 + i) : 1e-5 * (1 + i % 5);
        if (variant == 1) std::fill(spectrum.begin(), spectrum.begin() + 3, 50.0);             // a repeated value
        if (variant == 2) for (int i = 4; i < 10; ++i) spectrum[std::size_t(i)] = 10.0 + 1e-9 * i;  // a tight cluster
        // G = Q diag(spectrum) Q^H (column-major for hostGramProjection) and the kept part's projection.
        SquareMatrix scaled(n), want(n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) scaled(i, j) = q(i, j) * spectrum[std::size_t(j)];
        SquareMatrix qh(n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) qh(i, j) = std::conj(q(j, i));
        const SquareMatrix g = product(scaled, qh);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k < 12; ++k) want(i, j) += q(i, k) * std::conj(q(j, k));
        ComplexArray gram(std::size_t(n) * std::size_t(n));
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) gram[std::size_t(j * n + i)] = g(i, j);
        std::vector<double> values;
        std::size_t kept = 0;
        ComplexArray projection;
        hostGramProjection(gram, std::size_t(n), 1e-3, values, kept, projection);
        EXPECT_EQ(kept, 12u) << variant;
        std::vector<double> sorted = spectrum;
        std::sort(sorted.begin(), sorted.end());
        for (int i = 0; i < n; ++i) EXPECT_NEAR(values[std::size_t(i)], sorted[std::size_t(i)], 1e-10) << variant;
        double diff = 0, idempotence = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                diff = std::max(diff, std::abs(projection[std::size_t(j * n + i)] - want(i, j)));
                cdouble pp = 0;
                for (int k = 0; k < n; ++k) pp += projection[std::size_t(k * n + i)] * projection[std::size_t(j * n + k)];
                idempotence = std::max(idempotence, std::abs(pp - projection[std::size_t(j * n + i)]));
            }
        EXPECT_LT(diff, 1e-9) << variant;
        EXPECT_LT(idempotence, 1e-9) << variant;
    }
}

// What LAPACK must not be handed, or would answer meaninglessly: a zero Gram matrix (no signal in
// the calibration region: its "subspace" above 0.001 of nothing would be everything), values that
// are not finite, a size that does not match. Each a clear InputError. And the smallest cases: a
// 1 x 1 matrix, and a rank-one one (one kept vector, P = v v^H / |v|^2).
TEST(CoilMaps, GramProjectionRejectsZeroOrNonFiniteMatricesAndHandlesTheSmallest) {
    std::vector<double> values;
    std::size_t kept = 0;
    ComplexArray projection;
    auto message = [&](const ComplexArray& gram, std::size_t n) {
        try {
            hostGramProjection(gram, n, 1e-3, values, kept, projection);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(ComplexArray(16, cdouble(0)), 4).find("calibration data are zero"), std::string::npos);
    ComplexArray nan(16, cdouble(1));
    nan[6] = cdouble(std::nan(""), 0);  // lower triangle (2, 1)
    EXPECT_NE(message(nan, 4).find("not finite"), std::string::npos);
    EXPECT_NE(message(ComplexArray(15), 4).find("15 values for a 4 x 4"), std::string::npos);

    hostGramProjection(ComplexArray{cdouble(2.5)}, 1, 1e-3, values, kept, projection);
    EXPECT_EQ(kept, 1u);
    EXPECT_NEAR(values[0], 2.5, 1e-15);
    EXPECT_NEAR(std::abs(projection[0] - cdouble(1)), 0, 1e-15);

    const int n = 7;
    const ComplexArray v = randomComplex(std::size_t(n), 9);
    double len2 = 0;
    for (const cdouble& x : v) len2 += std::norm(x);
    ComplexArray gram(std::size_t(n * n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) gram[std::size_t(j * n + i)] = v[std::size_t(i)] * std::conj(v[std::size_t(j)]);
    hostGramProjection(gram, std::size_t(n), 1e-3, values, kept, projection);
    EXPECT_EQ(kept, 1u);
    EXPECT_NEAR(values.back(), len2, 1e-12 * len2);
    double diff = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            diff = std::max(diff, std::abs(projection[std::size_t(j * n + i)] - v[std::size_t(i)] * std::conj(v[std::size_t(j)]) / len2));
    EXPECT_LT(diff, 1e-12);
}

// A SENSE lambda change goes through the single-coil path's recycling (changePenaltyWeight): there and
// back it ends at the cold solves' images, and the change back to a converged lambda finds that image
// again (x_c in the Galerkin basis) where a plain restart (kept_directions = -1) iterates again.
TEST(Sense, RecycledLambdaChangesEndAtTheColdSolutionsAndAChangeBackIsImmediate) {
    const CaseSpec spec = smallMultiCoil(24);
    auto data = simulate(spec);
    auto backend = std::shared_ptr<Backend>(createCpuBackend(Precision::Double));
    SolveOptions o = senseWithFiniteDifferences(500);
    o.tolerance = 1e-12;
    const double lambdas[2] = {spec.lambda, 4 * spec.lambda};
    ComplexArray cold[2];
    for (int k = 0; k < 2; ++k) {
        ReconstructionSession s(backend);
        s.setDataset(data);
        o.lambda = lambdas[k];
        cold[k] = s.solve(o).complex_image;
    }
    ASSERT_GT(relativeError(cold[1], cold[0]), 1e-2);  // the change moves the image
    std::size_t back_iterations[2] = {0, 0};
    for (const int kept : {0, -1}) {
        ReconstructionSession s(backend);
        s.setDataset(data);
        o.kept_directions = kept;
        o.lambda = lambdas[0];
        o.warm_start = false;
        s.solve(o);
        o.warm_start = true;
        for (const int k : {1, 0}) {
            o.lambda = lambdas[k];
            const SolveResult r = s.solve(o);
            EXPECT_TRUE(r.warm_started);
            EXPECT_LT(relativeError(r.complex_image, cold[k]), 1e-6) << "kept " << kept << ", lambda " << lambdas[k];
            if (k == 0) back_iterations[kept < 0] = r.history.size();
        }
    }
    std::printf("SENSE change back: %zu iterations recycled, %zu plain\n", back_iterations[0], back_iterations[1]);
    EXPECT_LE(back_iterations[0], 2u) << "recycled change back";
    EXPECT_GT(back_iterations[1], 5u) << "plain restart back";
}

// SENSE solves take the single-coil path's run options: a quiet solve (record_costs false, as `recon --quiet`)
// forms no cost terms before its last record, and a warm lambda change stops at the relative residual its cold
// solve ended at (SolveOptions::lambda_change_to_cold_accuracy), as close to the new lambda's solution as a cold
// solve of the same budget.
TEST(Sense, QuietSolvesRecordNoCostsAndLambdaChangesStopAtTheColdAccuracy) {
    const CaseSpec spec = smallMultiCoil(24);
    auto data = simulate(spec);
    auto backend = std::shared_ptr<Backend>(createCpuBackend(Precision::Double));
    SolveOptions o = senseWithFiniteDifferences(15);
    o.lambda = spec.lambda;
    for (const bool costs : {true, false}) {
        ReconstructionSession s(backend);
        s.setDataset(data);
        o.record_costs = costs;
        const SolveResult r = s.solve(o);
        ASSERT_EQ(r.history.size(), 15u);
        for (std::size_t i = 0; i + 1 < r.history.size(); ++i)
            EXPECT_EQ(r.history[i].penalty_term > 0, costs) << "record " << i << ", record_costs " << costs;
        EXPECT_GT(r.history.back().penalty_term, 0.0) << "the last record is whole either way";
    }
    o.record_costs = true;
    ReconstructionSession s(backend);
    s.setDataset(data);
    const double cold_residual = s.solve(o).history.back().residual;
    o.warm_start = true;
    for (const double lambda : {4 * spec.lambda, spec.lambda}) {
        o.lambda = lambda;
        const SolveResult warm = s.solve(o);
        ASSERT_TRUE(warm.warm_started);
        EXPECT_EQ(warm.cold_accuracy, cold_residual);
        EXPECT_LT(warm.history.back().residual, cold_residual);
        EXPECT_LT(warm.history.size(), 15u);
        ReconstructionSession c(backend), l(backend);
        c.setDataset(data);
        l.setDataset(data);
        SolveOptions cold = o, ref = o;
        cold.warm_start = ref.warm_start = false;
        ref.iterations = 1000;
        ref.tolerance = 1e-12;
        const ComplexArray converged = l.solve(ref).complex_image;
        const double change = relativeError(warm.complex_image, converged), from_zero = relativeError(c.solve(cold).complex_image, converged);
        std::printf("SENSE lambda %.4f: %zu warm iterations, %.2e from the converged image; cold 15: %.2e\n", lambda,
                    warm.history.size(), change, from_zero);
        EXPECT_LT(change, 1.5 * from_zero);
    }
}
