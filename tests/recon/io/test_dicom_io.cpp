// DICOM export (issue 16, item 8): written through DCMTK, read back through
// DCMTK, dcmdump, pydicom and dciodvfy (each where installed): geometry,
// values, UIDs, descriptions; bad input named and nothing half-written.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/dicom_io.hpp"

namespace recon::test {
namespace {

namespace fs = std::filesystem;

// 8 x 5 x 4 voxels of 30 x 24 x 20 mm: every spacing differs, so a swapped axis shows.
Grid testGrid() {
    Grid g = Grid::make3D(8, 5, 4);
    g.fov_mm = {240.0, 120.0, 80.0};
    return g;
}

ComplexArray coded(const Grid& g, double scale) {
    ComplexArray a(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x)
                a[g.index(x, y, z)] = std::polar(scale * (1 + x + 10 * y + 100 * z), 0.3 * x);  // magnitude coded
    return a;
}

std::string text(DcmDataset& d, const DcmTagKey& tag, int index = -1) {
    OFString s;
    const OFCondition c = index < 0 ? d.findAndGetOFStringArray(tag, s) : d.findAndGetOFString(tag, s, index);
    return c.good() ? std::string(s.c_str()) : std::string("<missing>");
}
double number(DcmDataset& d, const DcmTagKey& tag, int index = 0) {
    Float64 v = 0;
    EXPECT_TRUE(d.findAndGetFloat64(tag, v, index).good()) << DcmTag(tag).getTagName();
    return v;
}

std::string run(const std::string& command, int* status) {
    std::string out;
    std::FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return out;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    *status = ::pclose(p);
    return out;
}
bool have(const std::string& tool) {
    int status = 0;
    run("command -v " + tool, &status);
    return status == 0;
}

struct Export {
    ScratchDir dir;
    Grid grid = testGrid();
    ComplexArray iterative = coded(grid, 0.01), gridding = coded(grid, 2.0);
    std::string out = dir.file("dicom");
    Export() {
        DicomExportSpec spec;
        spec.grid = grid;
        spec.study_description = "ReconStudio test";
        spec.series.push_back({&gridding, "Gridding KB sigma 2 W 4", "Kaiser-Bessel gridding, sigma 2, W 4", "gridding-kb"});
        spec.series.push_back({&iterative, "CG fd lambda 0.02xs 60 it", "iterative CG, finite differences, lambda 0.02 x s",
                               "iterative"});
        writeDicomSeries(out, spec);
    }
    fs::path file(int series, const char* folder, int slice) const {
        char name[64];
        std::snprintf(name, sizeof name, "%02d-%s/IM%04d.dcm", series, folder, slice);
        return fs::path(out) / name;
    }
};

TEST(DicomExport, RoundTripsGeometryValuesAndUids) {
    if (!dicomExportAvailable()) GTEST_SKIP() << "built without DCMTK";
    Export e;
    EXPECT_TRUE(e.dir.partialFiles().empty());
    std::set<std::string> instance_uids, series_uids, study_uids, frame_uids;
    for (auto [series, folder, image] : {std::tuple{1, "gridding-kb", &e.gridding}, std::tuple{2, "iterative", &e.iterative}}) {
        double max_abs = 0;
        for (const cdouble& v : *image) max_abs = std::max(max_abs, std::abs(v));
        for (int z = 0; z < 4; ++z) {
            DcmFileFormat f;
            ASSERT_TRUE(f.loadFile(e.file(series, folder, z + 1).c_str()).good()) << e.file(series, folder, z + 1);
            DcmDataset& d = *f.getDataset();
            EXPECT_EQ(text(d, DCM_SOPClassUID), UID_MRImageStorage);
            EXPECT_EQ(text(d, DCM_Modality), "MR");
            EXPECT_EQ(text(d, DCM_SeriesDescription), series == 1 ? "Gridding KB sigma 2 W 4" : "CG fd lambda 0.02xs 60 it");
            EXPECT_EQ(text(d, DCM_SeriesNumber), std::to_string(series));
            EXPECT_EQ(text(d, DCM_InstanceNumber), std::to_string(z + 1));
            Uint16 rows = 0, columns = 0;
            d.findAndGetUint16(DCM_Rows, rows);
            d.findAndGetUint16(DCM_Columns, columns);
            EXPECT_EQ(rows, 5);
            EXPECT_EQ(columns, 8);
            // Row spacing (y) then column spacing (x); slices 20 mm apart and thick.
            EXPECT_DOUBLE_EQ(number(d, DCM_PixelSpacing, 0), 24.0);
            EXPECT_DOUBLE_EQ(number(d, DCM_PixelSpacing, 1), 30.0);
            EXPECT_DOUBLE_EQ(number(d, DCM_SliceThickness), 20.0);
            // Voxel (x, y, z) sits at RAS ((x-4)*30, (y-2)*24, (z-2)*20), as in the NIfTI
            // export; LPS negates x and y.
            for (int k = 0; k < 6; ++k)
                EXPECT_DOUBLE_EQ(number(d, DCM_ImageOrientationPatient, k), (k == 0 || k == 4) ? -1.0 : 0.0);
            EXPECT_DOUBLE_EQ(number(d, DCM_ImagePositionPatient, 0), 4 * 30.0);
            EXPECT_DOUBLE_EQ(number(d, DCM_ImagePositionPatient, 1), 2 * 24.0);
            EXPECT_DOUBLE_EQ(number(d, DCM_ImagePositionPatient, 2), (z - 2) * 20.0);
            // Values: stored * slope is the magnitude, to half a step of 16 bits.
            const double slope = number(d, DCM_RescaleSlope);
            EXPECT_NEAR(slope * 65535, max_abs, 1e-6 * max_abs);
            const Uint16* pixels = nullptr;
            unsigned long count = 0;
            ASSERT_TRUE(d.findAndGetUint16Array(DCM_PixelData, pixels, &count).good());
            ASSERT_EQ(count, 40u);
            for (int y = 0; y < 5; ++y)
                for (int x = 0; x < 8; ++x)
                    EXPECT_NEAR(pixels[y * 8 + x] * slope, std::abs((*image)[e.grid.index(x, y, z)]), 0.51 * slope)
                        << x << "," << y << "," << z;
            instance_uids.insert(text(d, DCM_SOPInstanceUID));
            series_uids.insert(text(d, DCM_SeriesInstanceUID));
            study_uids.insert(text(d, DCM_StudyInstanceUID));
            frame_uids.insert(text(d, DCM_FrameOfReferenceUID));
        }
    }
    EXPECT_EQ(instance_uids.size(), 8u);
    EXPECT_EQ(series_uids.size(), 2u);
    EXPECT_EQ(study_uids.size(), 1u);
    EXPECT_EQ(frame_uids.size(), 1u);  // both series share one space: a viewer can link them

    // A second export gets new UIDs.
    Export again;
    DcmFileFormat f;
    ASSERT_TRUE(f.loadFile(again.file(1, "gridding-kb", 1).c_str()).good());
    EXPECT_EQ(series_uids.count(text(*f.getDataset(), DCM_SeriesInstanceUID)), 0u);
}

TEST(DicomExport, BadInputIsNamedAndNothingIsWritten) {
    if (!dicomExportAvailable()) GTEST_SKIP() << "built without DCMTK";
    ScratchDir dir;
    const Grid g = testGrid();
    const ComplexArray image = coded(g, 1.0), wrong(7);
    DicomExportSpec spec;
    spec.grid = g;
    spec.series.push_back({&image, std::string(65, 'x'), "", "iterative"});
    EXPECT_THROW_MESSAGE(writeDicomSeries(dir.file("a"), spec), InputError, "longer than DICOM's 64 characters");
    spec.series = {{&wrong, "wrong", "", "iterative"}};
    EXPECT_THROW_MESSAGE(writeDicomSeries(dir.file("a"), spec), InputError, "'wrong'", "8x5x4");
    spec.series = {};
    EXPECT_THROW_MESSAGE(writeDicomSeries(dir.file("a"), spec), InputError, "no image");
    EXPECT_FALSE(fs::exists(dir.file("a")));

    // An existing folder with something in it is never touched.
    fs::create_directory(dir.file("taken"));
    { std::FILE* f = std::fopen(dir.file("taken/keep.txt").c_str(), "w"); std::fputs("keep", f); std::fclose(f); }
    spec.series = {{&image, "ok", "", "iterative"}};
    EXPECT_THROW_MESSAGE(writeDicomSeries(dir.file("taken"), spec), InputError, "taken", "not empty");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.file("taken")), fs::directory_iterator{}), 1);
    EXPECT_THROW_MESSAGE(writeDicomSeries(dir.file("missing/out"), spec), InputError, "does not exist");
    // An empty one is used.
    fs::create_directory(dir.file("empty"));
    writeDicomSeries(dir.file("empty"), spec);
    EXPECT_TRUE(fs::exists(dir.file("empty/01-iterative/IM0004.dcm")));
    EXPECT_TRUE(dir.partialFiles().empty());
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(".part-"), std::string::npos) << entry.path();
}

TEST(DicomExport, DcmdumpReadsIt) {
    if (!dicomExportAvailable()) GTEST_SKIP() << "built without DCMTK";
    if (!have("dcmdump")) GTEST_SKIP() << "dcmdump not found (Debian dcmtk)";
    Export e;
    int status = -1;
    const std::string out = run("dcmdump " + e.file(2, "iterative", 3).string(), &status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("MRImageStorage"), std::string::npos) << out;
    EXPECT_NE(out.find("[CG fd lambda 0.02xs 60 it]"), std::string::npos) << out;
    EXPECT_NE(out.find("[-1\\0\\0\\0\\-1\\0]"), std::string::npos) << out;
}

TEST(DicomExport, PydicomReadsTheSameValues) {
    if (!dicomExportAvailable()) GTEST_SKIP() << "built without DCMTK";
    // Debian's python3-pydicom goes with Debian's interpreter, which may not be the first python3 on PATH.
    std::string python;
    int status = -1;
    for (const char* candidate : {"/usr/bin/python3", "python3"}) {
        run(std::string(candidate) + " -c 'import pydicom'", &status);
        if (status == 0) {
            python = candidate;
            break;
        }
    }
    if (python.empty()) GTEST_SKIP() << "pydicom not found (Debian python3-pydicom)";
    Export e;
    // Voxel (x=5, y=3, z=1) of the gridding image, in its own units.
    // The raw pixel bytes (pixel_array would need NumPy): row 3, column 5, little-endian 16 bits.
    const std::string script = "import pydicom, struct; d = pydicom.dcmread('" + e.file(1, "gridding-kb", 2).string() +
                               "'); v = struct.unpack_from('<H', d.PixelData, 2 * (3 * d.Columns + 5))[0]; "
                               "print(v * float(d.RescaleSlope), d.Rows, d.Columns, d.SeriesDescription)";
    const std::string out = run(python + " -c \"" + script + "\"", &status);
    ASSERT_EQ(status, 0) << out;
    double value = 0;
    int rows = 0, columns = 0;
    ASSERT_EQ(std::sscanf(out.c_str(), "%lf %d %d", &value, &rows, &columns), 3) << out;
    EXPECT_NEAR(value, std::abs(e.gridding[e.grid.index(5, 3, 1)]), 0.01) << out;
    EXPECT_EQ(rows, 5);
    EXPECT_EQ(columns, 8);
    EXPECT_NE(out.find("Gridding KB sigma 2 W 4"), std::string::npos) << out;
}

TEST(DicomExport, DciodvfyFindsNoErrors) {
    if (!dicomExportAvailable()) GTEST_SKIP() << "built without DCMTK";
    if (!have("dciodvfy")) GTEST_SKIP() << "dciodvfy not found (Debian dicom3tools)";
    Export e;
    int status = -1;
    const std::string out = run("dciodvfy " + e.file(2, "iterative", 1).string(), &status);
    EXPECT_NE(out.find("MRImage"), std::string::npos) << out;  // it recognised the IOD
    EXPECT_EQ(out.find("Error"), std::string::npos) << out;
}

}  // namespace
}  // namespace recon::test
