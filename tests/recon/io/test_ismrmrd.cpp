// ISMRMRD: a radial multi-coil file made with ISMRMRD's own API opens (discards,
// noise scans, units honoured) and reconstructs; our images open in ISMRMRD.
#include <gtest/gtest.h>
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <cmath>
#include <random>
#include <sstream>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon::test {
namespace {

constexpr int kN = 32, kSpokes = 64, kReadout = 64, kCoils = 4, kDiscard = 2;

// Constant complex coil weights with sum |w|^2 = 1, so the sum of squares of
// per-coil reconstructions is the magnitude of the object.
cdouble coilWeight(int c) { return 0.5 * std::polar(1.0, 0.7 * c); }

double relativeDifference(const ComplexArray& a, const ComplexArray& b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        num += std::norm(a[i] - b[i]);
        den += std::norm(b[i]);
    }
    return std::sqrt(num / den);
}

struct Written {
    Trajectory trajectory;  // cycles per FOV
    ComplexArray object_kspace;
};

// `scale` divides the stored trajectory (1: cycles per FOV, kN: cycles per voxel). `oversampling`
// > 1 declares readout oversampling as scanners' converters do: the encoded space is the recon
// space widened along x by that factor (matrix and field of view).
Written writeRadialFile(const std::string& path, double scale, int oversampling = 1) {
    Written w;
    w.trajectory = goldenAngleRadial2D(kN, kSpokes, kReadout);
    const Grid grid = Grid::make2D(kN, kN);
    w.object_kspace = Phantom::sheppLogan2D().kspace(w.trajectory, grid);

    ISMRMRD::IsmrmrdHeader h;
    h.experimentalConditions.H1resonanceFrequency_Hz = 63500000;
    ISMRMRD::Encoding e;
    e.reconSpace.matrixSize = ISMRMRD::MatrixSize(kN, kN, 1);
    e.reconSpace.fieldOfView_mm = {220, 220, 5};
    e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(std::uint16_t(oversampling * kN), kN, 1);
    e.encodedSpace.fieldOfView_mm = {220.0f * float(oversampling), 220, 5};
    e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, kSpokes - 1, 0);
    e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
    h.encoding.push_back(e);
    std::ostringstream xml;
    ISMRMRD::serialize(h, xml);

    ISMRMRD::Dataset file(path.c_str(), "dataset", true);
    file.writeHeader(xml.str());
    // A noise scan first: it has no trajectory and must be skipped.
    ISMRMRD::Acquisition noise(kReadout, kCoils, 0);
    noise.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    // Zeros, set here: what ISMRMRD leaves in a new acquisition is not defined, and it made the
    // noise covariance of NoiseAcquisitions... (which appends real noise to this file) vary by run.
    for (int i = 0; i < kReadout; ++i)
        for (int c = 0; c < kCoils; ++c) noise.data(std::uint16_t(i), std::uint16_t(c)) = 0;
    file.appendAcquisition(noise);
    const int ns = kReadout + kDiscard;
    for (int s = 0; s < kSpokes; ++s) {
        ISMRMRD::Acquisition acq(ns, kCoils, 2);
        acq.discard_pre() = kDiscard;  // samples before the readout proper: garbage, dropped by readers
        acq.idx().kspace_encode_step_1 = std::uint16_t(s);
        for (int i = 0; i < ns; ++i) {
            const int m = s * kReadout + (i - kDiscard);
            for (int c = 0; c < kCoils; ++c)
                acq.data(std::uint16_t(i), std::uint16_t(c)) =
                    i < kDiscard ? std::complex<float>(NAN, NAN)
                                 : std::complex<float>(coilWeight(c) * w.object_kspace[std::size_t(m)]);
            for (int a = 0; a < 2; ++a)
                acq.traj(std::uint16_t(a), std::uint16_t(i)) =
                    i < kDiscard ? 1e9f : float(w.trajectory.k[3 * std::size_t(m) + a] / scale);
        }
        file.appendAcquisition(acq);
    }
    return w;
}

// 2x readout oversampling: the data set is the recon space (32^2, 220 mm), not the encoded one
// (64x32, 440 x 220 mm), and the trajectory means the same k whether stored per FOV or per voxel.
TEST(Ismrmrd, ReadoutOversamplingIsReconstructedOnTheReconSpace) {
    ScratchDir dir;
    for (const auto& [scale, units] : {std::pair{1.0, TrajectoryUnits::CyclesPerFov},
                                       std::pair{double(kN), TrajectoryUnits::CyclesPerVoxel}}) {
        const std::string path = dir.file("oversampled-" + std::to_string(int(scale)) + ".h5");
        const Written w = writeRadialFile(path, scale, 2);
        InputSpec spec;
        spec.input = path;
        spec.units = units;
        const auto d = readDataset(spec);
        EXPECT_EQ(d->grid, Grid::make2D(kN, kN));
        EXPECT_DOUBLE_EQ(d->grid.fov_mm[0], 220.0);
        EXPECT_DOUBLE_EQ(d->grid.fov_mm[1], 220.0);
        ASSERT_EQ(d->samples(), std::size_t(kSpokes * kReadout));
        for (std::size_t i = 0; i < w.trajectory.k.size(); ++i)
            EXPECT_NEAR(d->trajectory.k[i], w.trajectory.k[i], 1e-5 * kN) << i;
        EXPECT_NE(d->source.find("readout oversampling 2x (encoded matrix 64x32)"), std::string::npos) << d->source;
    }
}

TEST(Ismrmrd, RadialMultiCoilFileOpensExactly) {
    ScratchDir dir;
    const Written w = writeRadialFile(dir.file("radial.h5"), 1.0);
    InputSpec spec;
    spec.input = dir.file("radial.h5");
    const auto d = readDataset(spec);
    EXPECT_EQ(d->grid, Grid::make2D(kN, kN));
    EXPECT_DOUBLE_EQ(d->grid.fov_mm[0], 220.0);
    EXPECT_EQ(d->coils, kCoils);
    ASSERT_EQ(d->samples(), std::size_t(kSpokes * kReadout));
    EXPECT_EQ(d->trajectory.readout_length, kReadout);
    EXPECT_EQ(d->trajectory.kind, "radial-2d");
    for (std::size_t i = 0; i < w.trajectory.k.size(); ++i)
        EXPECT_EQ(d->trajectory.k[i], double(float(w.trajectory.k[i])));
    for (int c = 0; c < kCoils; ++c)
        for (std::size_t m = 0; m < d->samples(); m += 97) {
            const cdouble v = coilWeight(c) * w.object_kspace[m];
            EXPECT_LE(std::abs(d->coil(c)[m] - v), 1e-6 * std::abs(v));  // float32 in the file
        }
    EXPECT_NE(d->source.find("1 skipped"), std::string::npos) << d->source;
    EXPECT_NE(d->source.find("cycles per FOV (assumed"), std::string::npos) << d->source;
}

TEST(Ismrmrd, UnitsOverrideReadsCyclesPerVoxel) {
    ScratchDir dir;
    const Written w = writeRadialFile(dir.file("voxel.mrd"), kN);
    InputSpec spec;
    spec.input = dir.file("voxel.mrd");
    spec.units = TrajectoryUnits::CyclesPerVoxel;
    const auto d = readDataset(spec);
    for (std::size_t i = 0; i < w.trajectory.k.size(); i += 13)
        EXPECT_NEAR(d->trajectory.k[i], w.trajectory.k[i], 1e-5);
    EXPECT_NE(d->source.find("as given by the user"), std::string::npos);
    // Without the override the (tiny) values are taken as cycles per FOV: a valid
    // but wrong reading, which the source string states.
    spec.units.reset();
    EXPECT_NE(readDataset(spec)->source.find("assumed"), std::string::npos);
}

TEST(Ismrmrd, RadialMultiCoilFileReconstructs) {
    ScratchDir dir;
    const Written w = writeRadialFile(dir.file("radial.h5"), 1.0);
    InputSpec spec;
    spec.input = dir.file("radial.h5");
    auto d = readDataset(spec);
    // The file's noise acquisition only checks that noise is skipped; it holds no real noise, and
    // whitening with it (which the session would do) is tested in NoiseAcquisitions... below.
    d->noise.clear();
    SolveOptions o;
    o.iterations = 30;
    ReconstructionSession session(createCpuBackend(Precision::Double));
    session.setDataset(d);
    const SolveResult combined = session.solve(o);

    // The same object as one coil: per-coil solves are linear and sum |w_c|^2 = 1,
    // so the sum of squares must equal the single coil's magnitude.
    auto single = std::make_shared<Dataset>(*d);
    single->coils = 1;
    single->kspace = w.object_kspace;
    ReconstructionSession reference(createCpuBackend(Precision::Double));
    reference.setDataset(single);
    ComplexArray magnitude = reference.solve(o).image;
    for (auto& v : magnitude) v = std::abs(v);
    EXPECT_LT(relativeDifference(combined.image, magnitude), 1e-3);  // float32 samples in the file

    ComplexArray truth = Phantom::sheppLogan2D().image(d->grid);
    for (auto& v : truth) v = std::abs(v);
    const Quality q = measureQuality(combined.image, truth, false);
    EXPECT_GT(q.psnr_db, 20.0) << "iterative " << q.psnr_db << " dB";
}

TEST(Ismrmrd, NoiseAcquisitionsBecomeTheDatasetsNoiseAndWhitenIt) {
    ScratchDir dir;
    const std::string path = dir.file("noise.h5");
    writeRadialFile(path, 1.0);  // its first noise acquisition is all zeros: add real noise scans after it
    const int scans = 40;
    // Correlated noise of a known mixing: coil c = sum_k mix(c, k) z_k.
    std::mt19937 rng(77);
    std::normal_distribution<double> gauss(0.0, 1.0);
    ComplexArray z(std::size_t(scans * kReadout * kCoils));
    for (auto& v : z) v = {gauss(rng), gauss(rng)};
    auto mix = [](int c, int k) { return k > c ? cdouble(0) : c == k ? cdouble(1.0 + 0.3 * c) : cdouble(0.4, 0.1 * k); };
    {
        ISMRMRD::Dataset file(path.c_str(), "dataset", false);
        for (int s = 0; s < scans; ++s) {
            ISMRMRD::Acquisition noise(kReadout, kCoils, 0);
            noise.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
            for (int i = 0; i < kReadout; ++i)
                for (int c = 0; c < kCoils; ++c) {
                    cdouble v = 0;
                    for (int k = 0; k < kCoils; ++k) v += mix(c, k) * z[std::size_t((s * kReadout + i) * kCoils + k)];
                    noise.data(std::uint16_t(i), std::uint16_t(c)) = std::complex<float>(v);
                }
            file.appendAcquisition(noise);
        }
    }
    InputSpec spec;
    spec.input = path;
    const auto d = readDataset(spec);
    // The first noise acquisition holds zeros (kept: they are finite).
    const std::size_t per_coil = d->noise.size() / kCoils;
    ASSERT_EQ(per_coil, std::size_t((scans + 1) * kReadout));
    EXPECT_NE(d->source.find(std::to_string(per_coil) + " noise samples per coil"), std::string::npos) << d->source;
    // Whitened with its own covariance, the noise has the identity covariance.
    ComplexArray noise = d->noise;
    prewhiten(noise, kCoils, noiseCovariance(d->noise, kCoils));
    const SquareMatrix white = noiseCovariance(noise, kCoils);
    for (int r = 0; r < kCoils; ++r)
        for (int c = 0; c < kCoils; ++c) EXPECT_NEAR(std::abs(white(r, c) - (r == c ? 1.0 : 0.0)), 0.0, 1e-6);
    // The estimate matches the mixing's covariance (up to the variance of randomComplex's values).
    const SquareMatrix psi = noiseCovariance(d->noise, kCoils);
    EXPECT_NEAR(std::abs(psi(1, 0) / psi(0, 0) - mix(1, 0) * std::conj(mix(0, 0)) / std::norm(mix(0, 0))), 0.0, 0.06);
}

// Several slices are frames (test_ismrmrd_frames.cpp): readDataset asks which one; cardiac
// phases are not frames and are refused by name.
TEST(Ismrmrd, SeveralSlicesNeedAFrameAndCardiacPhasesAreRefusedByName) {
    ScratchDir dir;
    const std::string path = dir.file("slices.h5");
    {
        writeRadialFile(path, 1.0);
        ISMRMRD::Dataset file(path.c_str(), "dataset", false);
        ISMRMRD::Acquisition acq(4, kCoils, 2);
        acq.idx().slice = 3;
        for (int i = 0; i < 4; ++i) {  // what ISMRMRD leaves in a new acquisition is not defined
            for (int c = 0; c < kCoils; ++c) acq.data(std::uint16_t(i), std::uint16_t(c)) = 0;
            for (int a = 0; a < 2; ++a) acq.traj(std::uint16_t(a), std::uint16_t(i)) = 0;
        }
        file.appendAcquisition(acq);
    }
    InputSpec spec;
    spec.input = path;
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "slices.h5", "2 frames (2 slices)", "--frame K (0 to 1)");
    spec.frame = 0;
    EXPECT_EQ(readDataset(spec)->samples(), std::size_t(kSpokes * kReadout));
    {
        ISMRMRD::Dataset file(path.c_str(), "dataset", false);
        ISMRMRD::Acquisition acq(4, kCoils, 2);
        acq.idx().phase = 1;
        file.appendAcquisition(acq);
    }
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "slices.h5", "acquisition 66", "several cardiac phases");
}

TEST(Ismrmrd, CartesianDataAreRefusedByName) {
    ScratchDir dir;
    const std::string path = dir.file("cart.h5");
    {
        ISMRMRD::IsmrmrdHeader h;
        h.experimentalConditions.H1resonanceFrequency_Hz = 1;
        ISMRMRD::Encoding e;
        e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(8, 8, 1);
        e.encodedSpace.fieldOfView_mm = {100, 100, 5};
        e.reconSpace = e.encodedSpace;
        e.trajectory = ISMRMRD::TrajectoryType::CARTESIAN;
        h.encoding.push_back(e);
        std::ostringstream xml;
        ISMRMRD::serialize(h, xml);
        ISMRMRD::Dataset file(path.c_str(), "dataset", true);
        file.writeHeader(xml.str());
        file.appendAcquisition(ISMRMRD::Acquisition(8, 1, 0));
    }
    InputSpec spec;
    spec.input = path;
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "cart.h5", "acquisition 0", "Cartesian");
}

TEST(Ismrmrd, OurImageOpensWithIsmrmrdsReader) {
    ScratchDir dir;
    Grid g = Grid::make3D(6, 5, 4);
    g.fov_mm = {180, 150, 120};
    ComplexArray img(g.voxels());
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = cdouble(double(i), -double(i) / 4);
    writeImage(dir.file("out.mrd"), g, img, {.description = "test image"});
    ISMRMRD::Dataset file(dir.file("out.mrd").c_str(), "dataset", false);
    ASSERT_EQ(file.getNumberOfImages("image_0"), 1u);
    ISMRMRD::Image<std::complex<float>> back;
    file.readImage("image_0", 0, back);
    EXPECT_EQ(back.getMatrixSizeX(), 6);
    EXPECT_EQ(back.getMatrixSizeY(), 5);
    EXPECT_EQ(back.getMatrixSizeZ(), 4);
    EXPECT_FLOAT_EQ(back.getFieldOfViewY(), 150.0f);
    EXPECT_EQ(back.getImageType(), ISMRMRD::ISMRMRD_IMTYPE_COMPLEX);
    for (std::size_t i = 0; i < img.size(); ++i) EXPECT_EQ(cdouble(back.getDataPtr()[i]), img[i]);
    std::string attributes;
    back.getAttributeString(attributes);
    EXPECT_NE(attributes.find("test image"), std::string::npos);
}

// A multi-coil Cartesian file written by another tool (Debian's ismrmrd-tools), with its
// k-space coordinates stored (-k) and a noise scan (-C). Full Cartesian sampling with the
// point basis makes F^H F = N^2 I, so the SENSE solution is known in closed form:
// x = sum_c conj(S_c) F^H d_c / N^2 inside the maps' mask (where sum_c |S_c|^2 = 1).
TEST(Ismrmrd, CartesianMultiCoilFileFromIsmrmrdToolsMatchesTheCartesianSenseSolve) {
    ScratchDir dir;
    const std::string path = dir.file("cartesian.h5");
    const std::string cmd = "ismrmrd_generate_cartesian_shepp_logan -m 32 -c 4 -O 1 -k -C -n 0.01 -o '" + path +
                            "' > /dev/null 2>&1";
    if (std::system("command -v ismrmrd_generate_cartesian_shepp_logan > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "ismrmrd_generate_cartesian_shepp_logan (Debian ismrmrd-tools) is not installed";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    InputSpec spec;
    spec.input = path;
    spec.basis = BasisFunction::Point;
    spec.units = TrajectoryUnits::CyclesPerVoxel;  // the tool stores k in [-1/2, 1/2)
    auto d = readDataset(spec);
    double kmin = 1e9, kmax = -1e9;
    for (std::size_t m = 0; m < d->samples(); ++m) {
        kmin = std::min(kmin, std::min(d->trajectory.kx(m), d->trajectory.ky(m)));
        kmax = std::max(kmax, std::max(d->trajectory.kx(m), d->trajectory.ky(m)));
    }
    std::printf("%s\n k in [%g, %g], %zu samples, %d coils, %zu noise values\n", d->source.c_str(), kmin, kmax,
                d->samples(), d->coils, d->noise.size());
    ASSERT_EQ(d->coils, 4);
    ASSERT_FALSE(d->noise.empty());
    // The tool's header declares 2x readout oversampling (encoded 32x32 over 600 x 300 mm, recon 16x32
    // over 300 x 300 mm): the data set is the recon space, the readout sampled at half-cycle steps.
    EXPECT_EQ(d->grid, Grid::make2D(16, 32));
    ASSERT_EQ(d->samples(), std::size_t(32 * 32));
    EXPECT_NEAR(kmin, -16.0, 1e-4);  // ky: every integer k of the 32-sample band (kx: half steps over [-8, 8))
    EXPECT_NEAR(kmax, 15.0, 1e-4);
    auto backend = std::shared_ptr<Backend>(createCpuBackend(Precision::Double));
    ReconstructionSession session(backend);
    session.setDataset(d);  // whitens with the file's noise scan
    ASSERT_NE(session.dataset().source.find("noise-prewhitened"), std::string::npos);
    const Dataset& w = session.dataset();
    SolveOptions o;
    o.lambda = 0;
    o.iterations = 5;
    o.method = {"direct", 0};
    o.coil_combination = CoilCombination::Sense;
    const SolveResult sense = session.solve(o);
    ASSERT_EQ(sense.complex_image.size(), d->grid.voxels());

    const CoilMaps& maps = session.coilMaps();
    const std::size_t voxels = d->grid.voxels();
    ComplexArray expected(voxels);
    for (int c = 0; c < w.coils; ++c) {
        ComplexArray coil_data(w.coil(c), w.coil(c) + w.samples()), fhd;
        backend->adjointSum(w.trajectory, coil_data, SampleGrid::image(w.grid), fhd, {"direct", 0});
        for (std::size_t v = 0; v < voxels; ++v)
            // Full Cartesian sampling (the readout at half-cycle steps of this grid included): F^H F = M I.
            expected[v] += std::conj(maps.maps[std::size_t(c) * voxels + v]) * fhd[v] / double(w.samples());
    }
    double num = 0, den = 0;
    std::size_t inside = 0;
    for (std::size_t v = 0; v < voxels; ++v) {
        if (!maps.mask[v]) continue;
        ++inside;
        num += std::norm(sense.complex_image[v] - expected[v]);
        den += std::norm(expected[v]);
    }
    ASSERT_GT(inside, voxels / 4);
    EXPECT_LT(std::sqrt(num / den), 1e-6) << "SENSE vs the closed-form Cartesian solve, " << inside << " voxels";
}

}  // namespace
}  // namespace recon::test
