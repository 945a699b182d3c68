// Cartesian calibration data for coil maps from non-Cartesian samples (ESPIRiT, Walsh), and
// the small separable DFTs between such k-space blocks and the image grid.
#pragma once

#include <array>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/dataset.hpp"

namespace recon {

using BlockShape = std::array<int, 3>;  // sizes per axis, x fastest; 1 on unused axes
std::size_t blockPoints(const BlockShape& s);

// Along `axis`: out[o] = sum_i m[o * len + i] in[i], len = shape[axis]; shape[axis] becomes
// out_len. A dense DFT per axis: the blocks here (24, 2 kernel - 1) are far smaller than the
// grid, so this pruned transform costs less than an FFT of the whole grid.
ComplexArray transformAxis(const ComplexArray& in, BlockShape& shape, int axis, const ComplexArray& m, int out_len);

// exp(sign i 2 pi f x) for frequencies f = f0 + o (o < f_count, cycles/FOV) and the voxel
// positions x = (j - n/2) / n (FOV units, docs/CONVENTIONS.md) of an n-voxel axis: as the
// matrix [o][j] for transformAxis from an image to k-space, or [j][o] (`to_image`) back.
ComplexArray dftMatrix(int n, int f0, int f_count, int sign, bool to_image);

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

// The blocks' coil images on `grid` (coils x voxels), the block tapered by a Hann window so
// its edge does not ring: smooth, low-resolution coil images.
ComplexArray calibrationImages(const CalibrationBlocks& blocks, const Grid& grid);

}  // namespace recon
