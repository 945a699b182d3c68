// BART .cfl/.hdr: header parsing, exact round trips, files made by BART itself,
// our files opened by BART, and bad input named precisely.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/dataset_io.hpp"

namespace recon::test {
namespace {
using io::CflArray;

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

TEST(BartCfl, HeaderParsesBartsOwnLayout) {
    const auto dims = io::parseCflHeader("# Dimensions\n3 128 201 1 1 1 1 1 1 1 1 1 1 1 1 1 \n# Command\ntraj\n", "h");
    ASSERT_EQ(dims.size(), 16u);
    EXPECT_EQ(dims[0], 3);
    EXPECT_EQ(dims[1], 128);
    EXPECT_EQ(dims[2], 201);
}

TEST(BartCfl, HeaderRejectsMalformedText) {
    EXPECT_THROW_MESSAGE(io::parseCflHeader("hello\n", "x.hdr"), InputError, "x.hdr", "no '# Dimensions'");
    EXPECT_THROW_MESSAGE(io::parseCflHeader("# Dimensions\n3 0 2\n", "x.hdr"), InputError, "dimension 1 is 0");
    EXPECT_THROW_MESSAGE(io::parseCflHeader("# Dimensions\n3 -4\n", "x.hdr"), InputError, "'-4'");
    EXPECT_THROW_MESSAGE(io::parseCflHeader("# Dimensions\n\n", "x.hdr"), InputError, "no sizes");
    EXPECT_THROW_MESSAGE(io::parseCflHeader("# Dimensions\n1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n", "x.hdr"), InputError,
                         "more than 16");
}

TEST(BartCfl, RoundTripIsExact) {
    ScratchDir dir;
    std::vector<cfloat> data;
    for (int i = 0; i < 2 * 3 * 5; ++i) data.emplace_back(float(i) * 0.25f - 3.0f, float(i * i) * 1e-3f);
    io::writeCfl(dir.file("a.cfl"), {2, 3, 1, 5}, data);  // name with extension: same base
    const CflArray back = io::readCfl(dir.file("a"));
    EXPECT_EQ(back.describe(), "2x3x1x5");
    EXPECT_EQ(back.data, data);
    EXPECT_TRUE(dir.partialFiles().empty());
}

TEST(BartCfl, TruncatedDataIsNamedWithBothSizes) {
    ScratchDir dir;
    io::writeCfl(dir.file("a"), {4, 4}, std::vector<cfloat>(16, cfloat(1, 0)));
    std::filesystem::resize_file(dir.file("a.cfl"), 100);
    EXPECT_THROW_MESSAGE(io::readCfl(dir.file("a"), "k-space"), InputError, "a.cfl", "100 bytes", "4x4", "128 bytes");
}

TEST(BartCfl, AbsurdDeclaredSizeIsRefusedBeforeAllocating) {
    ScratchDir dir;
    writeText(dir.file("huge.hdr"), "# Dimensions\n100000 100000 100000 1\n");
    writeText(dir.file("huge.cfl"), "");
    EXPECT_THROW_MESSAGE(io::readCfl(dir.file("huge"), "k-space"), InputError, "huge.hdr", "absurdly large");
}

TEST(BartCfl, MissingFilesAreNamed) {
    ScratchDir dir;
    EXPECT_THROW_MESSAGE(io::readCfl(dir.file("nothing"), "trajectory"), InputError, "trajectory header",
                         "nothing.hdr");
}

TEST(BartCfl, ImageRoundTripKeepsGrid) {
    ScratchDir dir;
    const Grid g = Grid::make3D(5, 4, 3);
    ComplexArray img(g.voxels());
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = cdouble(double(i), -0.5 * double(i));
    writeImage(dir.file("img.cfl"), g, img);
    Grid back;
    const ComplexArray r = readImage(dir.file("img"), &back);
    EXPECT_EQ(back, g);
    EXPECT_EQ(r, img);  // small integers and halves are exact in float32
}

TEST(BartCfl, DatasetRoundTripThroughBartArrays) {
    ScratchDir dir;
    const Dataset d = smallDataset(3, 2, 7);
    writeDataset(dir.file("case.cfl"), d);
    InputSpec spec;
    spec.trajectory = dir.file("case_traj");
    spec.kspace = dir.file("case_ksp.cfl");
    spec.truth = dir.file("case_truth");
    spec.reference = dir.file("case_ref");
    spec.density = dir.file("case_dens");
    const auto r = readDataset(spec);
    EXPECT_EQ(r->grid, d.grid);
    EXPECT_EQ(r->coils, 2);
    ASSERT_EQ(r->samples(), d.samples());
    for (std::size_t i = 0; i < d.trajectory.k.size(); ++i)
        EXPECT_NEAR(r->trajectory.k[i], d.trajectory.k[i], 1e-6 * 8);
    for (std::size_t i = 0; i < d.kspace.size(); ++i) EXPECT_NEAR(std::abs(r->kspace[i] - d.kspace[i]), 0, 1e-6);
    for (std::size_t i = 0; i < d.truth.size(); ++i) EXPECT_NEAR(std::abs(r->truth[i] - d.truth[i]), 0, 1e-6);
    for (std::size_t i = 0; i < d.density.size(); ++i) EXPECT_NEAR(r->density[i], d.density[i], 1e-6);
    EXPECT_EQ(r->reference.size(), d.reference.size());
    EXPECT_NE(r->source.find("grid 8x6x4 from"), std::string::npos) << r->source;
}

TEST(BartCfl, MismatchedTrajectoryAndDataAreNamed) {
    ScratchDir dir;
    io::writeCfl(dir.file("t"), {3, 8, 4}, std::vector<cfloat>(96, cfloat(0.5f, 0)));
    io::writeCfl(dir.file("k"), {1, 8, 5}, std::vector<cfloat>(40, cfloat(1, 0)));
    InputSpec spec;
    spec.trajectory = dir.file("t");
    spec.kspace = dir.file("k");
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "k-space", "1x8x5", "3x8x4", "dimension 2");
}

TEST(BartCfl, NanAndOutOfBandAreRefused) {
    ScratchDir dir;
    std::vector<cfloat> t(3 * 8, cfloat(0, 0));
    for (int m = 0; m < 8; ++m) t[3 * m] = cfloat(float(m) - 4.0f, 0);  // kx -4..3: a 8-voxel band
    io::writeCfl(dir.file("t"), {3, 8}, t);
    std::vector<cfloat> k(8, cfloat(1, 0));
    k[5] = cfloat(std::nanf(""), 0);
    io::writeCfl(dir.file("k"), {1, 8}, k);
    InputSpec spec;
    spec.trajectory = dir.file("t");
    spec.kspace = dir.file("k");
    spec.matrix = std::array<int, 3>{8, 8, 1};
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "k-space value 5", "NaN");
    k[5] = cfloat(1, 0);
    io::writeCfl(dir.file("k"), {1, 8}, k);
    spec.matrix = std::array<int, 3>{4, 4, 1};  // band [-2, 2): the trajectory does not fit
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "outside the band");
    spec.matrix.reset();
    spec.trajectory = dir.file("k");  // data given as trajectory
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "first dimension must be 3");
}

TEST(BartCfl, OpensBartTrajectoryAndPhantomData) {
    RECONSTUDIO_REQUIRE_BART();
    ScratchDir dir;
    bart(dir, "traj -r -x 32 -y 21 t");
    bart(dir, "phantom -k -s 3 -t t k");
    InputSpec spec;
    spec.trajectory = dir.file("t");
    spec.kspace = dir.file("k");
    const auto d = readDataset(spec);
    EXPECT_EQ(d->grid, Grid::make2D(32, 32));  // inferred from the half-integer radial extent 15.5
    EXPECT_EQ(d->coils, 3);
    EXPECT_EQ(d->samples(), 32u * 21u);
    EXPECT_EQ(d->trajectory.readout_length, 32);
    const CflArray raw = io::readCfl(dir.file("k"));
    ASSERT_EQ(raw.elements(), d->kspace.size());
    for (std::size_t i = 0; i < raw.elements(); ++i) EXPECT_EQ(d->kspace[i], cdouble(raw.data[i]));
    const CflArray traj = io::readCfl(dir.file("t"));
    for (std::size_t i = 0; i < traj.elements(); ++i) EXPECT_EQ(d->trajectory.k[i], double(traj.data[i].real()));
    // `bart traj -r` samples half-integer radii: the extent is N/2 - 1/2.
    double peak = 0;
    for (double v : d->trajectory.k) peak = std::max(peak, std::abs(v));
    EXPECT_NEAR(peak, 15.5, 1e-5);
}

TEST(BartCfl, OurImageOpensInBart) {
    RECONSTUDIO_REQUIRE_BART();
    ScratchDir dir;
    const Grid g = Grid::make2D(6, 4);
    ComplexArray img(g.voxels());
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = cdouble(double(i) - 3, 0.5 * double(i % 3));
    writeImage(dir.file("ours.cfl"), g, img);
    // BART reads our file, multiplies it by itself, and we read BART's result.
    bart(dir, "fmac ours ours squared");
    Grid back;
    const ComplexArray sq = readImage(dir.file("squared"), &back);
    EXPECT_EQ(back, g);
    for (std::size_t i = 0; i < img.size(); ++i) EXPECT_NEAR(std::abs(sq[i] - img[i] * img[i]), 0, 1e-5);
}

TEST(BartCfl, UnitsOverrideConvertsToCyclesPerFov) {
    ScratchDir dir;
    std::vector<cfloat> t(3 * 4, cfloat(0, 0));
    const float kx[4] = {-0.5f, -0.25f, 0.0f, 0.25f};  // cycles per voxel
    for (int m = 0; m < 4; ++m) t[3 * m] = cfloat(kx[m], 0);
    io::writeCfl(dir.file("t"), {3, 4}, t);
    io::writeCfl(dir.file("k"), {1, 4}, std::vector<cfloat>(4, cfloat(1, 0)));
    InputSpec spec;
    spec.trajectory = dir.file("t");
    spec.kspace = dir.file("k");
    spec.units = TrajectoryUnits::CyclesPerVoxel;
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "give --matrix");
    spec.matrix = std::array<int, 3>{16, 16, 1};
    const auto d = readDataset(spec);
    EXPECT_DOUBLE_EQ(d->trajectory.kx(0), -8.0);
    EXPECT_DOUBLE_EQ(d->trajectory.kx(3), 4.0);
    EXPECT_NE(d->source.find("cycles per voxel"), std::string::npos);
}

TEST(DatasetIo, UnknownExtensionsListTheFormats) {
    ScratchDir dir;
    const Grid g = Grid::make2D(4, 4);
    EXPECT_THROW_MESSAGE(writeImage(dir.file("x.tiff"), g, ComplexArray(16)), InputError, "'.tiff'", "BART");
    InputSpec none;
    EXPECT_THROW_MESSAGE(readDataset(none), InputError, "no input");
}

TEST(DatasetIo, OutputIntoMissingFolderFailsCleanly) {
    ScratchDir dir;
    const Grid g = Grid::make2D(4, 4);
    EXPECT_THROW_MESSAGE(writeImage(dir.file("no/such/x.cfl"), g, ComplexArray(16)), InputError, "does not exist");
}

}  // namespace
}  // namespace recon::test
