// ISMRMRD files of several frames, written with ISMRMRD's own API as a scanner's converter
// writes them, with exact data (the model's sums of a known image) so each frame's truth is
// reachable: multi-slice 2D radial (2 slices of different images x 2 repetitions) and a stack
// of stars (4 partitions of a 3D phantom). Used by the I/O tests and, through
// write_frames_main.cpp, by the CLI's test.
#pragma once

#include <string>
#include <vector>

#include "recon/core/types.hpp"

namespace recon::test {

inline constexpr int kFramesN = 32, kFramesSpokes = 64, kFramesReadout = 64, kFramesCoils = 2;

struct FramesTruth {
    Grid grid;                        // one frame's grid (2D)
    std::vector<ComplexArray> truth;  // per frame, in readFrames' order (partition fastest, slice, contrast, repetition)
    Trajectory trajectory;            // every frame's, cycles per FOV
};

// 2 slices (Shepp-Logan, its transpose) x 2 repetitions (repetition r: the image times 1 + r),
// 2 coils of constant weights (sum |w|^2 = 1), a noise scan. store_trajectory = false writes
// trajectory_dimensions 0 (the positions must then come from --trajectory).
FramesTruth writeMultiSliceFile(const std::string& path, bool store_trajectory = true);

// Stack of stars: the 3D Shepp-Logan on 32 x 32 x 4, 4 partitions (k_z = p - 2) of the same
// golden-angle spokes, acquisitions interleaved (spoke-major), 2D trajectories, box basis.
struct StackTruth {
    Grid grid;           // 3D
    ComplexArray truth;  // the 3D image
};
StackTruth writeStackOfStarsFile(const std::string& path);

// The coil weights of both files.
cdouble frameCoilWeight(int c);

}  // namespace recon::test
