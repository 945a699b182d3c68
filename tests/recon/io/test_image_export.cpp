// NIfTI-1 and PNG export, checked with the formats' own libraries: voxel size,
// orientation (centre voxel at the origin, axes unrotated), values, slices.
#include <gtest/gtest.h>

#include <cmath>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/dataset_io.hpp"

#ifdef RECONSTUDIO_TEST_NIFTI
#include <nifti1_io.h>
#endif
#ifdef RECONSTUDIO_TEST_PNG
#include <png.h>

#include <cstring>
#endif

namespace recon::test {
namespace {

struct TestVolume {
    Grid grid;
    ComplexArray image;
};

TestVolume volume() {
    TestVolume v;
    v.grid = Grid::make3D(8, 6, 4);
    v.grid.fov_mm = {240, 180, 60};  // voxels 30 x 30 x 15 mm
    v.image.resize(v.grid.voxels());
    for (int z = 0; z < 4; ++z)
        for (int y = 0; y < 6; ++y)
            for (int x = 0; x < 8; ++x)
                v.image[v.grid.index(x, y, z)] = std::polar(1.0 + x + 10.0 * y + 100.0 * z, 0.1 * (x - y));
    return v;
}

#ifdef RECONSTUDIO_TEST_NIFTI
TEST(Nifti, MagnitudeVoxelSizeAndOrientation) {
    ScratchDir dir;
    const TestVolume v = volume();
    writeImage(dir.file("mag.nii"), v.grid, v.image, {.phase = true, .description = "unit test"});
    nifti_image* nim = nifti_image_read(dir.file("mag.nii").c_str(), 1);
    ASSERT_NE(nim, nullptr);
    EXPECT_EQ(nim->nx, 8);
    EXPECT_EQ(nim->ny, 6);
    EXPECT_EQ(nim->nz, 4);
    EXPECT_EQ(nim->datatype, NIFTI_TYPE_FLOAT32);
    EXPECT_FLOAT_EQ(nim->dx, 30.0f);
    EXPECT_FLOAT_EQ(nim->dy, 30.0f);
    EXPECT_FLOAT_EQ(nim->dz, 15.0f);
    EXPECT_EQ(nim->xyz_units, NIFTI_UNITS_MM);
    EXPECT_EQ(nim->qform_code, NIFTI_XFORM_SCANNER_ANAT);
    EXPECT_EQ(nim->sform_code, NIFTI_XFORM_SCANNER_ANAT);
    EXPECT_STREQ(nim->descrip, "unit test");
    // Voxel (N/2, N/2, N/2) at the origin; +1 along i moves +dx along x only.
    for (const mat44& m : {nim->qto_xyz, nim->sto_xyz}) {
        for (int r = 0; r < 3; ++r) {
            const float at_centre = m.m[r][0] * 4 + m.m[r][1] * 3 + m.m[r][2] * 2 + m.m[r][3];
            EXPECT_NEAR(at_centre, 0.0f, 1e-4f) << "row " << r;
        }
        EXPECT_FLOAT_EQ(m.m[0][0], 30.0f);
        EXPECT_FLOAT_EQ(m.m[1][1], 30.0f);
        EXPECT_FLOAT_EQ(m.m[2][2], 15.0f);
        EXPECT_FLOAT_EQ(m.m[0][1], 0.0f);
    }
    const float* data = static_cast<const float*>(nim->data);
    for (std::size_t i = 0; i < v.image.size(); ++i) EXPECT_FLOAT_EQ(data[i], float(std::abs(v.image[i])));
    nifti_image_free(nim);

    nifti_image* phase = nifti_image_read(dir.file("mag_phase.nii").c_str(), 1);
    ASSERT_NE(phase, nullptr);
    const float* p = static_cast<const float*>(phase->data);
    for (std::size_t i = 0; i < v.image.size(); ++i) EXPECT_NEAR(p[i], std::arg(v.image[i]), 1e-6);
    nifti_image_free(phase);
    EXPECT_TRUE(dir.partialFiles().empty());
}

TEST(Nifti, CompressedRoundTripThroughOurReader) {
    ScratchDir dir;
    const TestVolume v = volume();
    writeImage(dir.file("mag.nii.gz"), v.grid, v.image);
    Grid g;
    const ComplexArray back = readImage(dir.file("mag.nii.gz"), &g);
    EXPECT_EQ(g, v.grid);
    EXPECT_NEAR(g.fov_mm[2], 60.0, 1e-9);
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_NEAR(back[i].real(), std::abs(v.image[i]), 1e-4);
}

TEST(Nifti, TruncatedFileIsRefused) {
    ScratchDir dir;
    const TestVolume v = volume();
    writeImage(dir.file("t.nii"), v.grid, v.image);
    std::filesystem::resize_file(dir.file("t.nii"), 600);
    EXPECT_THROW_MESSAGE(readImage(dir.file("t.nii")), InputError, "t.nii");
}
#endif

#ifdef RECONSTUDIO_TEST_PNG
std::vector<std::uint8_t> readPng(const std::string& path, int* w, int* h) {
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    EXPECT_TRUE(png_image_begin_read_from_file(&img, path.c_str())) << img.message;
    img.format = PNG_FORMAT_GRAY;
    std::vector<std::uint8_t> px(PNG_IMAGE_SIZE(img));
    EXPECT_TRUE(png_image_finish_read(&img, nullptr, px.data(), 0, nullptr)) << img.message;
    *w = int(img.width);
    *h = int(img.height);
    return px;
}

TEST(Png, AxialSliceWithYUp) {
    ScratchDir dir;
    const TestVolume v = volume();
    writeImage(dir.file("ax.png"), v.grid, v.image, {.slice = 3, .slice_axis = 2});
    int w = 0, h = 0;
    const auto px = readPng(dir.file("ax.png"), &w, &h);
    ASSERT_EQ(w, 8);
    ASSERT_EQ(h, 6);
    double peak = 0;
    for (const auto& c : v.image) peak = std::max(peak, std::abs(c));
    for (int row = 0; row < h; ++row)
        for (int x = 0; x < w; ++x) {
            const int y = h - 1 - row;  // highest y on top
            const double expect = 255.0 * std::abs(v.image[v.grid.index(x, y, 3)]) / peak;
            EXPECT_NEAR(px[std::size_t(row * w + x)], expect, 0.51) << x << "," << y;
        }
}

TEST(Png, SagittalSliceAndBadSlice) {
    ScratchDir dir;
    const TestVolume v = volume();
    writeImage(dir.file("sag.png"), v.grid, v.image, {.slice_axis = 0});  // centre slice x = 4
    int w = 0, h = 0;
    const auto px = readPng(dir.file("sag.png"), &w, &h);
    EXPECT_EQ(w, 6);  // y
    EXPECT_EQ(h, 4);  // z
    // Top-left pixel: y = 0, z = 3 (the brightest plane).
    EXPECT_GT(px[0], px[std::size_t((h - 1) * w)]);
    EXPECT_THROW_MESSAGE(writeImage(dir.file("bad.png"), v.grid, v.image, {.slice = 9, .slice_axis = 2}), InputError,
                         "slice 9");
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.png")));
}
#endif

}  // namespace
}  // namespace recon::test
