// Reading and writing data sets and results (docs/FILE_FORMAT.md). The format
// follows the file's extension (and, for HDF5 input, its content: our own
// layout or ISMRMRD):
//   .h5/.hdf5       ReconStudio HDF5 layout; as input also ISMRMRD
//   .mrd/.ismrmrd   ISMRMRD: raw data in, images out
//   .cfl/.hdr       BART (names with or without the extension)
//   .nii/.nii.gz    NIfTI-1 (images only: magnitude, optionally phase)
//   .png            one slice (images only)
// Every reader validates before returning (Dataset::validate) and names the
// file, the dataset and what is wrong; every writer writes a temporary file and
// renames it, so an error or a cancel never leaves a half-written output.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "recon/core/conventions.hpp"
#include "recon/core/dataset.hpp"
#include "recon/core/types.hpp"
#include "recon/core/iteration_record.hpp"

namespace recon {

struct InputSpec {
    std::string input;       // one file: HDF5 (own layout or ISMRMRD)
    // BART data as separate arrays (used when `input` is empty):
    std::string trajectory;  // (3, readout, readouts[, ...]) in cycles per FOV
    // (With `input`: the k-space positions of an ISMRMRD file that stores none, covering one
    // frame's readouts in acquisition order; every frame and partition shares them.)
    std::string kspace;      // (1, readout, readouts, coils) or BART's usual dims
    std::string truth;       // optional image
    std::string reference;   // optional image
    std::string density;     // optional density weights
    std::optional<TrajectoryUnits> units;          // override the assumed units
    std::optional<std::array<int, 3>> matrix;      // override the grid size (2D: n_z = 1)
    std::optional<BasisFunction> basis;            // override the voxel basis (BART's phantom: point)
    // A file of several frames (below): the one readDataset returns. Without it such a file is
    // refused by readDataset with a message naming the frames; readFrames returns them all.
    std::optional<int> frame;
};

// One reconstruction problem of a file that holds several (docs/FILE_FORMAT.md, "Frames"):
// ISMRMRD's slices, the partitions of a stack-of-stars acquisition (after the inverse FFT along
// the partition axis), contrasts and repetitions. Each is one Dataset: the engine reconstructs
// one problem at a time.
struct FrameIndex {
    int slice = 0, partition = 0, contrast = 0, repetition = 0;
    bool operator==(const FrameIndex&) const = default;
};
struct Frame {
    FrameIndex index;
    int number = 0;    // its place among the input's frames (what --frame chooses)
    std::string name;  // "slice 1, partition 0" (only the counters that vary), "frame 0" for one
    std::shared_ptr<Dataset> data;
};
// How many distinct values each counter takes, over all frames.
struct FrameCounts {
    int slices = 1, partitions = 1, contrasts = 1, repetitions = 1;
    int total() const { return slices * partitions * contrasts * repetitions; }
    std::string describe() const;  // "2 slices x 4 partitions x 2 repetitions" (counts above 1; "1 frame")
};
struct Frames {
    std::vector<Frame> frames;  // partition fastest, then slice, contrast, repetition
    FrameCounts counts;
    int total = 0;  // frames in the input (`frames` holds only spec.frame's when it was set)
    bool complete() const { return total == counts.total(); }  // every combination present
};
// Every frame of the input (one for a single-problem file), each validated. Frames of one file share
// the header, the noise scan and the readout-oversampling handling. spec.frame, when set, keeps
// only that frame (still numbered as in the file: index and name).
Frames readFrames(const InputSpec& spec);

// Which readers and writers this build has (HDF5/ISMRMRD are optional).
std::vector<std::string> supportedInputFormats();
std::vector<std::string> supportedOutputFormats();

std::shared_ptr<Dataset> readDataset(const InputSpec& spec);
void writeDataset(const std::string& path, const Dataset& data);

struct ImageWriteOptions {
    bool phase = false;          // NIfTI: also write the phase volume (NAME_phase.nii)
    int slice = -1;              // PNG: slice index (-1: centre); axis below
    int slice_axis = 2;          // PNG: 0 sagittal, 1 coronal, 2 axial
    std::string description;     // stored where the format allows
    bool real_part = false;      // NIfTI: the signed real part (CT attenuation) instead of the magnitude
    // The image holds this many volumes of the grid, one after the other (frames: contrasts x
    // repetitions). Above 1 only NIfTI can hold them: its 4th dimension.
    int volumes = 1;
};
void writeImage(const std::string& path, const Grid& grid, const ComplexArray& image,
                const ImageWriteOptions& opts = {});
ComplexArray readImage(const std::string& path, Grid* grid = nullptr);

// A reconstruction and how it was made, for the HDF5 results group.
struct ReconstructionRecord {
    Grid grid;
    ComplexArray gridding_trilinear, gridding_kb, iterative;  // any may be empty
    double lambda = 0, lambda_scale = 0;
    std::string regularizer, method, backend;
    std::string data_weighting = "uniform";  // the data term (recon/core/data_weighting.hpp): uniform | density
    int iterations = 0;
    std::vector<IterationRecord> history;
};
// Writes (or replaces) /results in an HDF5 file of our layout, or a new one.
void writeReconstruction(const std::string& path, const ReconstructionRecord& rec);

}  // namespace recon
