#include "recon/io/dicom_io.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "recon/core/errors.hpp"
#include "recon/core/version.hpp"

#ifdef RECONSTUDIO_IO_HAVE_DCMTK
#include <dcmtk/config/osconfig.h>  // first, as DCMTK requires
#include <dcmtk/dcmdata/dctk.h>
#endif

namespace recon {

namespace fs = std::filesystem;

namespace {

// A folder built under a temporary name next to its target and renamed into
// place by commit(); removed with everything in it otherwise. The folder-level
// counterpart of io::AtomicOutput.
class AtomicFolder {
public:
    explicit AtomicFolder(const std::string& target) : given_(target), target_(fs::absolute(target).lexically_normal()) {
        if (target_.filename().empty()) target_ = target_.parent_path();
        std::error_code ec;
        if (!fs::is_directory(target_.parent_path(), ec))
            throw InputError("DICOM output '" + target + "': folder '" + target_.parent_path().string() +
                             "' does not exist");
        if (fs::exists(target_, ec)) {
            if (!fs::is_directory(target_, ec)) throw InputError("DICOM output '" + target + "' is a file, not a folder");
            if (!fs::is_empty(target_, ec))
                throw InputError("DICOM output folder '" + target + "' exists and is not empty; choose a new folder");
        }
        static std::atomic<unsigned> counter{0};
        std::string name = ".";
        name += target_.filename().string();
        name += ".part-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
        temp_ = target_.parent_path() / name;
        if (!fs::create_directory(temp_, ec))
            throw Error("cannot create '" + temp_.string() + "': " + ec.message());
    }
    ~AtomicFolder() {
        std::error_code ec;
        if (!committed_) fs::remove_all(temp_, ec);
    }
    AtomicFolder(const AtomicFolder&) = delete;
    AtomicFolder& operator=(const AtomicFolder&) = delete;

    const fs::path& path() const { return temp_; }
    // A file of the folder that could not be written: the message names the output the user
    // gave, the file within it and the system's reason (DCMTK's own text hides ENOSPC).
    [[noreturn]] void fail(const fs::path& file, const std::string& why) const {
        throw Error("cannot write the DICOM output '" + given_ + "' (" + file.lexically_relative(temp_).string() +
                    "): " + why + "; nothing was written");
    }
    // A written file's data on the disk before the folder is renamed into place.
    void sync(const fs::path& file) const {
        const int fd = ::open(file.c_str(), O_RDONLY);
        if (fd < 0 || ::fsync(fd) != 0) {
            const int err = errno;
            if (fd >= 0) ::close(fd);
            fail(file, std::strerror(err));
        }
        ::close(fd);
    }
    void commit() {
        std::error_code ec;
        fs::remove(target_, ec);  // an empty folder of that name (checked above); rename needs it gone
        fs::rename(temp_, target_, ec);
        if (ec) throw Error("cannot write '" + target_.string() + "': rename failed: " + ec.message());
        committed_ = true;
    }

private:
    std::string given_;
    fs::path target_, temp_;
    bool committed_ = false;
};

void checkSpec(const DicomExportSpec& spec) {
    if (spec.series.empty()) throw InputError("DICOM export: there is no image to write");
    if (spec.grid.voxels() == 0) throw InputError("DICOM export: the grid is empty");
    for (const DicomSeriesSpec& s : spec.series) {
        if (!s.image || s.image->size() != spec.grid.voxels())
            throw InputError("DICOM export: series '" + s.description + "' does not match the " +
                             spec.grid.describe() + " grid");
        if (s.description.size() > 64)
            throw InputError("DICOM export: series description '" + s.description +
                             "' is longer than DICOM's 64 characters");
        if (s.folder.empty() || !std::all_of(s.folder.begin(), s.folder.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
            }))
            throw InputError("DICOM export: series folder name '" + s.folder + "' must be letters, digits, - or _");
    }
}

}  // namespace

std::string dicomIterativeDescription(const std::string& regularizer, double lambda, int iterations,
                                      int start_iteration) {
    char buf[96];
    if (start_iteration > 0)
        std::snprintf(buf, sizeof buf, "Iterative CG %s lambda %.3g x s, %d+%d it warm", regularizer.c_str(), lambda,
                      start_iteration, iterations);
    else
        std::snprintf(buf, sizeof buf, "Iterative CG %s lambda %.3g x s, %d it", regularizer.c_str(), lambda, iterations);
    return std::string(buf).substr(0, 64);
}

std::string dicomGriddingDescription(bool kaiser_bessel) {
    return kaiser_bessel ? "Gridding Kaiser-Bessel (Beatty 2005)" : "Gridding trilinear";
}

#ifndef RECONSTUDIO_IO_HAVE_DCMTK

bool dicomExportAvailable() { return false; }

void writeDicomSeries(const std::string& directory, const DicomExportSpec& spec) {
    checkSpec(spec);
    throw Error("cannot write DICOM to '" + directory + "': this build has no DCMTK (install libdcmtk-dev and rebuild)");
}

#else

bool dicomExportAvailable() { return true; }

namespace {

std::string newUid(const char* root) {
    char uid[100];
    dcmGenerateUniqueIdentifier(uid, root);
    return uid;
}

std::string decimal(double v) {
    // DS: at most 16 characters.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    if (std::strlen(buf) > 16) std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void put(DcmDataset& d, const DcmTagKey& tag, const std::string& value) {
    const OFCondition c = d.putAndInsertString(tag, value.c_str());
    if (c.bad()) throw Error(std::string("DICOM: cannot set ") + DcmTag(tag).getTagName() + ": " + c.text());
}

}  // namespace

void writeDicomSeries(const std::string& directory, const DicomExportSpec& spec) {
    checkSpec(spec);
    AtomicFolder folder(directory);
    const Grid& g = spec.grid;
    const int nx = g.n[0], ny = g.n[1], nz = g.dims == 3 ? g.n[2] : 1;
    if (nx > 65535 || ny > 65535) throw InputError("DICOM export: more than 65535 rows or columns");
    const double dx = g.fov_mm[0] / nx, dy = g.fov_mm[1] / ny;
    // A 2D image is one slice whose thickness is the third FOV (the NIfTI export's choice too).
    const double dz = g.dims == 3 ? g.fov_mm[2] / nz : g.fov_mm[2];

    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char date[16], time[16];
    std::strftime(date, sizeof date, "%Y%m%d", &local);
    std::strftime(time, sizeof time, "%H%M%S", &local);
    const std::string study_uid = newUid(SITE_STUDY_UID_ROOT);
    const std::string frame_uid = newUid(SITE_INSTANCE_UID_ROOT);

    int series_number = 0;
    for (const DicomSeriesSpec& s : spec.series) {
        ++series_number;
        const std::string series_uid = newUid(SITE_SERIES_UID_ROOT);
        char sub[96];
        std::snprintf(sub, sizeof sub, "%02d-%s", series_number, s.folder.c_str());
        const fs::path series_dir = folder.path() / sub;
        std::error_code ec;
        if (!fs::create_directory(series_dir, ec)) throw Error("cannot create '" + series_dir.string() + "': " + ec.message());

        // One slope for the series, so one window/level means the same on every slice.
        double max_abs = 0;
        for (const cdouble& v : *s.image) max_abs = std::max(max_abs, std::abs(v));
        const double slope = max_abs > 0 ? max_abs / 65535.0 : 1.0;
        std::vector<Uint16> pixels(std::size_t(nx) * ny);

        for (int z = 0; z < nz; ++z) {
            DcmFileFormat file;
            DcmDataset& d = *file.getDataset();
            put(d, DCM_SpecificCharacterSet, "ISO_IR 100");
            put(d, DCM_SOPClassUID, UID_MRImageStorage);
            put(d, DCM_SOPInstanceUID, newUid(SITE_INSTANCE_UID_ROOT));
            put(d, DCM_ImageType, "DERIVED\\SECONDARY\\OTHER");
            put(d, DCM_StudyDate, date);
            put(d, DCM_StudyTime, time);
            put(d, DCM_SeriesDate, date);
            put(d, DCM_SeriesTime, time);
            put(d, DCM_ContentDate, date);
            put(d, DCM_ContentTime, time);
            put(d, DCM_AccessionNumber, "");
            put(d, DCM_Modality, "MR");
            put(d, DCM_Laterality, "");
            put(d, DCM_PatientPosition, "");  // unknown: a reconstruction has no scanner set-up
            put(d, DCM_Manufacturer, "ReconStudio");
            put(d, DCM_SoftwareVersions, RECONSTUDIO_VERSION);
            put(d, DCM_ReferringPhysicianName, "");
            put(d, DCM_StudyDescription, spec.study_description.substr(0, 64));
            put(d, DCM_SeriesDescription, s.description);
            put(d, DCM_PatientName, spec.patient_name);
            put(d, DCM_PatientID, spec.patient_id);
            put(d, DCM_PatientBirthDate, "");
            put(d, DCM_PatientSex, "");
            put(d, DCM_StudyInstanceUID, study_uid);
            put(d, DCM_SeriesInstanceUID, series_uid);
            put(d, DCM_StudyID, "1");
            put(d, DCM_SeriesNumber, std::to_string(series_number));
            put(d, DCM_InstanceNumber, std::to_string(z + 1));
            put(d, DCM_FrameOfReferenceUID, frame_uid);
            put(d, DCM_PositionReferenceIndicator, "");
            // MR Image module: a reconstruction of unknown acquisition ("RM": research mode).
            put(d, DCM_ScanningSequence, "RM");
            put(d, DCM_SequenceVariant, "NONE");
            put(d, DCM_ScanOptions, "");
            put(d, DCM_MRAcquisitionType, g.dims == 3 ? "3D" : "2D");
            put(d, DCM_RepetitionTime, "");
            put(d, DCM_EchoTime, "");
            put(d, DCM_EchoTrainLength, "");
            if (!s.comments.empty()) put(d, DCM_ImageComments, s.comments);

            // Geometry (see the header): LPS = (-x, -y, z) of the RAS position.
            const double x0 = double(nx / 2) * dx, y0 = double(ny / 2) * dy;
            const double zpos = g.dims == 3 ? double(z - nz / 2) * dz : 0.0;
            put(d, DCM_ImagePositionPatient, decimal(x0) + "\\" + decimal(y0) + "\\" + decimal(zpos));
            put(d, DCM_ImageOrientationPatient, "-1\\0\\0\\0\\-1\\0");
            put(d, DCM_PixelSpacing, decimal(dy) + "\\" + decimal(dx));  // row spacing \ column spacing
            put(d, DCM_SliceThickness, decimal(dz));
            if (g.dims == 3) put(d, DCM_SpacingBetweenSlices, decimal(dz));
            put(d, DCM_SliceLocation, decimal(zpos));

            put(d, DCM_SamplesPerPixel, "1");
            put(d, DCM_PhotometricInterpretation, "MONOCHROME2");
            d.putAndInsertUint16(DCM_Rows, Uint16(ny));
            d.putAndInsertUint16(DCM_Columns, Uint16(nx));
            d.putAndInsertUint16(DCM_BitsAllocated, 16);
            d.putAndInsertUint16(DCM_BitsStored, 16);
            d.putAndInsertUint16(DCM_HighBit, 15);
            d.putAndInsertUint16(DCM_PixelRepresentation, 0);
            put(d, DCM_RescaleIntercept, "0");
            put(d, DCM_RescaleSlope, decimal(slope));
            put(d, DCM_RescaleType, "US");
            put(d, DCM_WindowCenter, decimal(max_abs / 2));
            put(d, DCM_WindowWidth, decimal(std::max(max_abs, 1e-12)));
            // Values in the image's own units may span less than 1: LINEAR_EXACT allows a window that narrow.
            put(d, DCM_VOILUTFunction, "LINEAR_EXACT");

            for (int y = 0; y < ny; ++y)
                for (int x = 0; x < nx; ++x) {
                    const double v = std::abs((*s.image)[g.index(x, y, z)]) / slope;
                    pixels[std::size_t(y) * nx + x] = Uint16(std::clamp(std::lround(v), 0L, 65535L));
                }
            const OFCondition pc = d.putAndInsertUint16Array(DCM_PixelData, pixels.data(), unsigned(pixels.size()));
            if (pc.bad()) throw Error(std::string("DICOM: cannot set the pixel data: ") + pc.text());

            char name[32];
            std::snprintf(name, sizeof name, "IM%04d.dcm", z + 1);
            const fs::path path = series_dir / name;
            errno = 0;
            const OFCondition wc = file.saveFile(path.c_str(), EXS_LittleEndianExplicit);
            if (wc.bad()) folder.fail(path, errno ? std::strerror(errno) : wc.text());
            folder.sync(path);
        }
    }
    folder.commit();
}

#endif

}  // namespace recon
