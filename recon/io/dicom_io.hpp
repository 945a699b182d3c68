// DICOM export through DCMTK (Debian libdcmtk-dev): each image becomes an MR
// Image Storage series, one file per slice, in a new folder.
//
// Geometry: the same physical positions as the NIfTI export (docs/FILE_FORMAT.md):
// image axis i is scanner axis i of the RAS+ frame with voxel (N/2, N/2, N/2) at
// the origin and spacing FOV/N. DICOM's patient frame is LPS, so x and y change
// sign: along a row (image x) the position moves towards the patient's right,
// down a column (image y) towards anterior, and slices (image z) go superior:
// ImageOrientationPatient -1\0\0\0\-1\0, whose normal is +z.
//
// Pixels: the magnitude as unsigned 16 bits with a Rescale Slope (one per
// series) so that stored * slope is the image's value in its own units; the
// window centre/width cover the series' range. New UIDs for every export: one
// study, one frame of reference, one series per image.
#pragma once

#include <string>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

struct DicomSeriesSpec {
    const ComplexArray* image = nullptr;  // on the export's grid
    std::string description;              // (0008,103E), at most 64 characters: method and parameters
    std::string comments;                 // (0020,4000) every slice: the full parameters, free text
    std::string folder;                   // sub-folder name, e.g. "iterative" ([A-Za-z0-9_-] only)
};

struct DicomExportSpec {
    Grid grid;
    std::string patient_name = "ReconStudio^Phantom";  // (0010,0010); a simulated phantom has no patient
    std::string patient_id = "RECONSTUDIO";
    std::string study_description;  // (0008,1030)
    std::vector<DicomSeriesSpec> series;
};

// Series descriptions (at most 64 characters) that the GUI and the CLI share:
// the method and its parameters. `start_iteration` > 0: a warm start (lambda tuning)
// continued an image that already had that many iterations.
std::string dicomIterativeDescription(const std::string& regularizer, double lambda, int iterations,
                                      int start_iteration = 0);
std::string dicomGriddingDescription(bool kaiser_bessel);

// Whether this build can write DICOM (built with DCMTK).
bool dicomExportAvailable();

// Writes `spec.series` into the new folder `directory`: <directory>/<NN>-<folder>/IM0001.dcm ...
// Everything goes into a temporary folder next to it that is renamed into place at
// the end, so a failed export leaves nothing behind and an existing non-empty
// folder is never touched. Throws InputError for bad input (no series, an image of
// the wrong size, a description longer than 64 characters, an existing folder
// that is not empty), Error when writing fails or DICOM support is not built.
void writeDicomSeries(const std::string& directory, const DicomExportSpec& spec);

}  // namespace recon
