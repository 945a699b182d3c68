// ReconStudio's HDF5 layout: exact round trips, results written into a file,
// files checked with HDF5's own C API, and bad files named precisely.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/hdf5_util.hpp"

namespace recon::test {
namespace {

class Hdf5Layout : public ::testing::TestWithParam<int> {};

TEST_P(Hdf5Layout, DatasetRoundTripIsBitExact) {
    ScratchDir dir;
    const Dataset d = smallDataset(GetParam(), 3, 11);
    writeDataset(dir.file("d.h5"), d);
    InputSpec spec;
    spec.input = dir.file("d.h5");
    const auto r = readDataset(spec);
    expectSameDataset(*r, d);
    EXPECT_NE(r->source.find("originally test"), std::string::npos) << r->source;
    EXPECT_TRUE(dir.partialFiles().empty());
}

INSTANTIATE_TEST_SUITE_P(Dims, Hdf5Layout, ::testing::Values(2, 3));

// Reads /dataset/kspace's HDF5 shape with the C API: coils x M, slowest first.
TEST(Hdf5LayoutFile, ShapesAreWhatTheDocumentationSays) {
    ScratchDir dir;
    const Dataset d = smallDataset(3, 2, 3);
    writeDataset(dir.file("d.h5"), d);
    const hid_t f = H5Fopen(dir.file("d.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    auto dims = [&](const char* path) {
        const hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
        const hid_t sp = H5Dget_space(ds);
        std::vector<hsize_t> out(std::size_t(H5Sget_simple_extent_ndims(sp)));
        H5Sget_simple_extent_dims(sp, out.data(), nullptr);
        H5Sclose(sp);
        H5Dclose(ds);
        return out;
    };
    EXPECT_EQ(dims("/dataset/kspace"), (std::vector<hsize_t>{2, d.samples()}));
    EXPECT_EQ(dims("/dataset/trajectory"), (std::vector<hsize_t>{d.samples(), 3}));
    EXPECT_EQ(dims("/dataset/truth"), (std::vector<hsize_t>{4, 6, 8}));
    // k-space sample 1 of coil 1, read by member names r and i.
    const hid_t ds = H5Dopen2(f, "/dataset/kspace", H5P_DEFAULT);
    const hid_t t = H5Dget_type(ds);
    EXPECT_EQ(H5Tget_class(t), H5T_COMPOUND);
    EXPECT_GE(H5Tget_member_index(t, "r"), 0);
    EXPECT_GE(H5Tget_member_index(t, "i"), 0);
    H5Tclose(t);
    H5Dclose(ds);
    H5Fclose(f);
}

TEST(Hdf5LayoutFile, ResultsAreWrittenReplacedAndReadBack) {
    ScratchDir dir;
    const Dataset d = smallDataset(2, 1, 5);
    const std::string path = dir.file("case.h5");
    writeDataset(path, d);
    ReconstructionRecord rec;
    rec.grid = d.grid;
    rec.iterative = d.truth;
    rec.gridding_kb = d.reference;
    rec.lambda = 0.02;
    rec.lambda_scale = 123.5;
    rec.regularizer = "fd";
    rec.method = "nufft";
    rec.backend = "cpu";
    rec.data_weighting = "density";
    rec.iterations = 2;
    for (int i = 0; i <= 2; ++i) {
        IterationRecord it;
        it.iteration = i;
        it.residual = 1.0 / (i + 1);
        it.has_truth = true;
        it.psnr_db = 20 + i;
        rec.history.push_back(it);
    }
    writeReconstruction(path, rec);
    Grid g;
    EXPECT_EQ(readImage(path, &g), d.truth);  // the iterative result
    EXPECT_EQ(g, d.grid);
    // Replacing the results keeps the data set.
    rec.iterative = ComplexArray(d.grid.voxels(), cdouble(2, 0));
    writeReconstruction(path, rec);
    EXPECT_EQ(readImage(path), rec.iterative);
    InputSpec spec;
    spec.input = path;
    expectSameDataset(*readDataset(spec), d);

    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    const hid_t h = H5Dopen2(f, "/results/history", H5P_DEFAULT);
    ASSERT_GE(h, 0);
    const hid_t sp = H5Dget_space(h);
    EXPECT_EQ(H5Sget_simple_extent_npoints(sp), 3);
    struct Row {
        double psnr;
    };
    const hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(mt, "psnr_db", 0, H5T_NATIVE_DOUBLE);
    Row rows[3];
    ASSERT_GE(H5Dread(h, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
    EXPECT_EQ(rows[2].psnr, 22.0);
    const hid_t r = H5Gopen2(f, "/results", H5P_DEFAULT);
    const hid_t a = H5Aopen(r, "lambda_scale", H5P_DEFAULT);
    double scale = 0;
    H5Aread(a, H5T_NATIVE_DOUBLE, &scale);
    EXPECT_EQ(scale, 123.5);
    H5Aclose(a);
    EXPECT_EQ(io::h5::readStringAttribute(r, "data_weighting", {path, "/results"}, "absent"), "density");
    H5Gclose(r);
    H5Tclose(mt);
    H5Sclose(sp);
    H5Dclose(h);
    H5Fclose(f);
}

TEST(Hdf5LayoutFile, ImageRoundTrip) {
    ScratchDir dir;
    const Dataset d = smallDataset(3, 1, 9);
    writeImage(dir.file("img.h5"), d.grid, d.truth, {.description = "a test"});
    Grid g;
    EXPECT_EQ(readImage(dir.file("img.h5"), &g), d.truth);
    EXPECT_EQ(g, d.grid);
    EXPECT_EQ(g.fov_mm, d.grid.fov_mm);
}

TEST(Hdf5LayoutFile, FailedWriteLeavesTheOldFileAndNoTemporary) {
    ScratchDir dir;
    const Dataset good = smallDataset(2, 1, 1);
    writeDataset(dir.file("keep.h5"), good);
    Dataset bad = good;
    bad.kspace[3] = cdouble(std::nan(""), 0);
    EXPECT_THROW(writeDataset(dir.file("keep.h5"), bad), InputError);
    InputSpec spec;
    spec.input = dir.file("keep.h5");
    expectSameDataset(*readDataset(spec), good);
    EXPECT_TRUE(dir.partialFiles().empty());
}

// Hand-made files with one thing wrong each, through the HDF5 C API.
class BadFile : public ::testing::Test {
protected:
    void SetUp() override {
        good_ = smallDataset(2, 2, 4);
        path_ = dir_.file("bad.h5");
        writeDataset(path_, good_);
    }
    template <class F>
    void edit(F&& f) {
        const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        ASSERT_GE(file, 0);
        f(file);
        H5Fclose(file);
    }
    void replaceReal(hid_t file, const char* path, std::vector<hsize_t> dims, std::vector<double> v) {
        H5Ldelete(file, path, H5P_DEFAULT);
        const hid_t sp = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
        const hid_t ds = H5Dcreate2(file, path, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(ds);
        H5Sclose(sp);
    }
    std::shared_ptr<Dataset> read() {
        InputSpec spec;
        spec.input = path_;
        return readDataset(spec);
    }
    ScratchDir dir_;
    Dataset good_;
    std::string path_;
};

TEST_F(BadFile, MissingKspace) {
    edit([](hid_t f) { H5Ldelete(f, "/dataset/kspace", H5P_DEFAULT); });
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5", "/dataset/kspace", "missing");
}

TEST_F(BadFile, TrajectoryOfWrongShape) {
    edit([&](hid_t f) { replaceReal(f, "/dataset/trajectory", {good_.samples(), 4}, std::vector<double>(good_.samples() * 4)); });
    EXPECT_THROW_MESSAGE(read(), InputError, "/dataset/trajectory", "shape 35 x 4", "expected M x 2");
}

TEST_F(BadFile, TrajectoryAndDataOfDifferentLengths) {
    edit([&](hid_t f) { replaceReal(f, "/dataset/trajectory", {10, 2}, std::vector<double>(20)); });
    EXPECT_THROW_MESSAGE(read(), InputError, "/dataset/kspace", "2 x 35", "the trajectory has 10 samples");
}

TEST_F(BadFile, KspaceNotComplex) {
    edit([&](hid_t f) {
        H5Ldelete(f, "/dataset/kspace", H5P_DEFAULT);
        const hsize_t dims[2] = {2, good_.samples()};
        const hid_t sp = H5Screate_simple(2, dims, nullptr);
        const hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 4);
        const hid_t ds = H5Dcreate2(f, "/dataset/kspace", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(ds);
        H5Tclose(st);
        H5Sclose(sp);
    });
    EXPECT_THROW_MESSAGE(read(), InputError, "/dataset/kspace", "not complex");
}

TEST_F(BadFile, RealKspaceReadsWithZeroImaginaryPart) {
    std::vector<double> re(2 * good_.samples(), 0.25);
    edit([&](hid_t f) { replaceReal(f, "/dataset/kspace", {2, good_.samples()}, re); });
    const auto d = read();
    EXPECT_EQ(d->kspace[7], cdouble(0.25, 0));
}

TEST_F(BadFile, InfInTrajectory) {
    std::vector<double> k(good_.samples() * 2, 0.0);
    k[9] = INFINITY;
    edit([&](hid_t f) { replaceReal(f, "/dataset/trajectory", {good_.samples(), 2}, k); });
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5", "sample 4");
}

TEST_F(BadFile, TrajectoryOutsideTheBand) {
    std::vector<double> k(good_.samples() * 2, 0.0);
    k[1] = 40;  // sample 0, k_y, on a 10-voxel axis
    edit([&](hid_t f) { replaceReal(f, "/dataset/trajectory", {good_.samples(), 2}, k); });
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5", "outside the band", "likely in other units, scaled by about 8 (");
}

TEST_F(BadFile, AbsurdMatrix) {
    edit([](hid_t f) {
        const hid_t g = H5Gopen2(f, "/dataset", H5P_DEFAULT);
        H5Adelete(g, "matrix");
        const std::int64_t m[3] = {1 << 20, 10, 1};
        const hsize_t n = 3;
        const hid_t sp = H5Screate_simple(1, &n, nullptr);
        const hid_t a = H5Acreate2(g, "matrix", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_INT64, m);
        H5Aclose(a);
        H5Sclose(sp);
        H5Gclose(g);
    });
    EXPECT_THROW_MESSAGE(read(), InputError, "group /dataset", "'matrix'", "not a grid size");
}

TEST_F(BadFile, NewerLayoutVersion) {
    edit([](hid_t f) {
        H5Adelete(f, "format_version");
        const std::int64_t v = 99;
        const hid_t sp = H5Screate(H5S_SCALAR);
        const hid_t a = H5Acreate2(f, "format_version", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_INT64, &v);
        H5Aclose(a);
        H5Sclose(sp);
    });
    EXPECT_THROW_MESSAGE(read(), InputError, "layout version 99", "newer");
}

TEST_F(BadFile, TruncatedFile) {
    const auto size = std::filesystem::file_size(path_);
    std::filesystem::resize_file(path_, size / 2);
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5");
}

TEST_F(BadFile, NotHdf5AtAll) {
    std::ofstream(path_, std::ios::trunc) << "this is a text file, not HDF5\n";
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5", "not an HDF5 file");
}

TEST_F(BadFile, OtherHdf5Files) {
    const hid_t f = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    EXPECT_THROW_MESSAGE(read(), InputError, "bad.h5", "neither a ReconStudio file", "nor ISMRMRD");
}

TEST_F(BadFile, ResultsAreNeverWrittenIntoForeignFiles) {
    const hid_t f = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    ReconstructionRecord rec;
    rec.grid = good_.grid;
    rec.iterative = good_.truth;
    EXPECT_THROW_MESSAGE(writeReconstruction(path_, rec), InputError, "not a ReconStudio file");
}

}  // namespace
}  // namespace recon::test

namespace recon::test {
namespace {

// Found by fuzz_hdf5_input: a global heap whose free-space object has size 0
// makes libhdf5 1.10 loop forever inside H5Dread, and one whose object is larger
// than its collection makes H5HG_read copy past its buffer. Both are refused first.
TEST(Hdf5Guard, GlobalHeapThatWouldHangTheLibraryIsRefused) {
    InputSpec spec;
    spec.input = std::string(RECONSTUDIO_TEST_DATA) + "/looping_global_heap.h5";
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "looping_global_heap.h5", "global heap", "would hang");
}

TEST(Hdf5Guard, GlobalHeapObjectLargerThanItsCollectionIsRefused) {
    InputSpec spec;
    spec.input = std::string(RECONSTUDIO_TEST_DATA) + "/overrunning_global_heap.h5";
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "overrunning_global_heap.h5", "global heap", "overrun");
}

// Our own files use no global heap at all (fixed-length strings), so none of the
// above can reach them; variable-length strings from other writers still read.
TEST(Hdf5Guard, OurFilesHoldNoGlobalHeapAndForeignVariableStringsStillRead) {
    ScratchDir dir;
    writeDataset(dir.file("d.h5"), smallDataset(2, 1, 2));
    std::ifstream in(dir.file("d.h5"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("GCOL"), std::string::npos);

    const hid_t f = H5Fopen(dir.file("d.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t g = H5Gopen2(f, "/dataset", H5P_DEFAULT);
    H5Adelete(g, "name");
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    const hid_t sp = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(g, "name", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    const char* name = "written by h5py";
    H5Awrite(a, t, &name);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    H5Gclose(g);
    H5Fclose(f);
    InputSpec spec;
    spec.input = dir.file("d.h5");
    EXPECT_EQ(readDataset(spec)->name, "written by h5py");
}

}  // namespace
}  // namespace recon::test
