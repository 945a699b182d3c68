// CT scans in the HDF5 layout: a round trip keeps every field bit for bit; files
// that are not CT scans, or whose arrays disagree with the geometry, are refused by name.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>

#include "ct_test_support.hpp"
#include "recon/ct/ct_file.hpp"
#include "recon/ct/phantom.hpp"
#include "recon/io/dataset_io.hpp"

namespace recon::ct {
namespace {

std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("ct_file_" + std::to_string(::getpid()) + "_" + name)).string();
}

CtData smallScan() {
    CtData d;
    d.name = "round trip";
    d.source = "test";
    d.geometry = test::coneBeam(6, 8, 5, 7);
    d.geometry.volume.size = {6, 5, 4};
    d.geometry.volume.voxel_mm = {1.5, 1.25, 2};
    d.geometry.volume.offset_mm = {0.5, -1, 2};
    d.geometry.beam.offset_u_mm = 0.25;
    d.geometry.beam.offset_v_mm = -0.75;
    d.geometry.beam.angles_rad[2] = 1.0 / 3.0;
    d.projections.resize(d.geometry.beam.samples());
    d.counts.resize(d.projections.size());
    for (std::size_t i = 0; i < d.projections.size(); ++i) {
        d.projections[i] = 0.1 * std::sqrt(double(i));
        d.counts[i] = 1000 - double(i);
    }
    d.photons = 1e3;
    d.truth = CtPhantom::ball(3, {0, 0, 0}, 3, 0.02).voxelise(d.geometry.volume);
    return d;
}

TEST(CtFile, RoundTripKeepsEveryField) {
    const CtData d = smallScan();
    const std::string path = tempPath("scan.h5");
    writeCtFile(path, d);
    EXPECT_TRUE(isCtFile(path));
    const CtData r = readCtFile(path);
    EXPECT_EQ(r.name, d.name);
    EXPECT_EQ(r.source, d.source);
    EXPECT_EQ(r.geometry.beam.source_to_isocentre_mm, d.geometry.beam.source_to_isocentre_mm);
    EXPECT_EQ(r.geometry.beam.source_to_detector_mm, d.geometry.beam.source_to_detector_mm);
    EXPECT_EQ(r.geometry.beam.detector_columns, d.geometry.beam.detector_columns);
    EXPECT_EQ(r.geometry.beam.detector_rows, d.geometry.beam.detector_rows);
    EXPECT_EQ(r.geometry.beam.pixel_u_mm, d.geometry.beam.pixel_u_mm);
    EXPECT_EQ(r.geometry.beam.pixel_v_mm, d.geometry.beam.pixel_v_mm);
    EXPECT_EQ(r.geometry.beam.offset_u_mm, d.geometry.beam.offset_u_mm);
    EXPECT_EQ(r.geometry.beam.offset_v_mm, d.geometry.beam.offset_v_mm);
    EXPECT_EQ(r.geometry.beam.angles_rad, d.geometry.beam.angles_rad);
    EXPECT_EQ(r.geometry.volume.size, d.geometry.volume.size);
    EXPECT_EQ(r.geometry.volume.voxel_mm, d.geometry.volume.voxel_mm);
    EXPECT_EQ(r.geometry.volume.offset_mm, d.geometry.volume.offset_mm);
    EXPECT_EQ(r.projections, d.projections);
    EXPECT_EQ(r.counts, d.counts);
    EXPECT_EQ(r.truth, d.truth);
    EXPECT_EQ(r.photons, d.photons);
    std::filesystem::remove(path);
}

TEST(CtFile, OtherFilesAreRefusedByName) {
    const std::string path = tempPath("mr.h5");
    // An MR data set of our layout is no CT scan.
    Dataset mr;
    mr.name = "mr";
    mr.grid = Grid::make2D(4, 4);
    mr.trajectory.dims = 2;
    mr.trajectory.k = {0, 0, 0, 1, 1, 0};
    mr.kspace = {1.0, 2.0};
    writeDataset(path, mr);
    EXPECT_FALSE(isCtFile(path));
    try {
        readCtFile(path);
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("no group /ct"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
    EXPECT_FALSE(isCtFile(tempPath("missing.h5")));
    EXPECT_THROW(readCtFile(tempPath("missing.h5")), InputError);
}

TEST(CtFile, ProjectionsOfTheWrongShapeAreNamed) {
    CtData d = smallScan();
    const std::string path = tempPath("shape.h5");
    writeCtFile(path, d);
    {  // one detector column more in the attributes than in the array
        hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t g = H5Gopen2(f, "ct", H5P_DEFAULT);
        hid_t a = H5Aopen(g, "detector_columns", H5P_DEFAULT);
        const std::int64_t columns = d.geometry.beam.detector_columns + 1;
        H5Awrite(a, H5T_NATIVE_INT64, &columns);
        H5Aclose(a);
        H5Gclose(g);
        H5Fclose(f);
    }
    try {
        readCtFile(path);
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("/ct/projections"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
    d.geometry.beam.source_to_detector_mm = 100;  // in front of the isocentre
    EXPECT_THROW(writeCtFile(path, d), InputError);
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace recon::ct
