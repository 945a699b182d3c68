// Cartesian calibration data for coil maps from non-Cartesian samples (ESPIRiT, Walsh); the
// separable DFTs between such k-space blocks and the image grid are in recon/backend/coil_field.hpp.
#pragma once

#include <array>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/backend/coil_field.hpp"
#include "recon/core/dataset.hpp"

namespace recon {

// Each coil's Cartesian k-space block k = -cal/2 .. cal/2 - 1 per axis (coil after coil; cal is
// `calibration` or, on a smaller grid axis, that axis's size): a
// least-squares fit (CG on the normal equations, Toeplitz normal, phi in the model) of an
// image on a (2 cal)^d grid of the data's field of view to the samples inside that grid's
// band, then the image's DFT at the block's points. A fit, not density-weighted gridding:
// gridding leaves errors of several percent near k = 0, where radial samples crowd, and they
// reach the maps (measured on radial-2d-8coil: ESPIRiT 5-7 % from the true maps with gridded
// blocks, 0.2 % with fitted ones).
struct CalibrationBlocks {
    BlockShape shape{1, 1, 1};
    int coils = 0;
    ComplexArray values;  // coils x blockPoints(shape)
    int strongest = 0;    // the coil of largest energy in the block: the maps' phase reference
};
// Throws InputError when too few samples lie near k = 0.
CalibrationBlocks fitCalibrationBlocks(Backend& backend, const Dataset& data, int calibration, int iterations,
                                       const Progress& progress = {});

// The blocks tapered by a Hann window over their frequencies, so their images do not ring:
// smooth, low-resolution coil images (blockImages; CoilField::coil_blocks).
FrequencyBlocks taperedCalibrationBlocks(const CalibrationBlocks& blocks);

}  // namespace recon
