// The image-domain half of the coil maps (ESPIRiT, Walsh: recon/sense): from small Cartesian
// k-space blocks to one Hermitian coils x coils matrix per voxel and its dominant eigenvector.
// A backend primitive (Backend::coilFieldEigenvectors) so that the field, n (n + 1) / 2 images
// (1.2 GB at 128^3 and 8 coils), stays where it is made: host memory on the CPU backend, device
// memory on the GPU, where it never visits the host.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"

namespace recon {

class Backend;

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

// How many eigenvalues of A^H A (`values` ascending, sigma^2) reach `threshold` times the
// largest, sigma^2 >= threshold * sigma_max^2: ESPIRiT's signal subspace
// (Backend::gramProjection). The threshold is on the energy sigma^2, as BART's `ecalib -t`
// (sigma >= sqrt(threshold) sigma_max): 0.001 keeps sigma >= 0.032 sigma_max, above the noise
// floor of a noisy 3D calibration matrix (docs/SENSE.md).
std::size_t signalSubspaceSize(const std::vector<double>& values, double threshold);

// ESPIRiT's calibration matrix A, given by its blocks: one row per position q of a kernel-sized
// patch inside the block (q x fastest), one column per coil c and kernel offset kappa (kappa x
// fastest, coil after coil): A[q, (c, kappa)] = block_c(q + kappa).
struct CalibrationMatrix {
    BlockShape block{1, 1, 1};
    BlockShape kernel{1, 1, 1};
    int coils = 0;
    ComplexArray values;  // coils x blockPoints(block)
    BlockShape positions() const;
    std::size_t rows() const { return blockPoints(positions()); }
    std::size_t cols() const { return std::size_t(coils) * blockPoints(kernel); }
};
// A itself (rows x cols, column-major). Throws InputError when the sizes do not fit.
ComplexArray calibrationMatrixValues(const CalibrationMatrix& m);
// A^H A (cols x cols, column-major, both triangles) without A: entry ((c, kappa), (c', kappa'))
// is the sum over the patch positions q of conj(block_c(q + kappa)) block_c'(q + kappa'), so
// for each coil pair and offset difference kappa' - kappa one product image whose box sums
// (separable, sliding) give every kappa at once: 11^3 such images of the 24^3 block in 3D
// instead of the 6859 x 1728^2 products of forming it from A (13 s on two cores).
ComplexArray calibrationGram(const CalibrationMatrix& m);

// Blocks of Cartesian k-space side by side (block after block), each at the integer
// frequencies first[a] + o, o < shape[a] (cycles/FOV), per axis. A block's image on a grid is
// sum_f b(f) exp(sign i 2 pi f . x) at the voxel positions x.
struct FrequencyBlocks {
    BlockShape shape{1, 1, 1};
    std::array<int, 3> first{0, 0, 0};
    int sign = 1;
    ComplexArray values;
    std::size_t count() const { return values.size() / blockPoints(shape); }
};
// Their images on `grid`, image after image (separable DFTs on the host's cores).
ComplexArray blockImages(const FrequencyBlocks& blocks, const Grid& grid);

// What the field is made of. The coils' low-resolution images m_c come from `coil_blocks`
// (one block per coil); the object is where their root sum of squares exceeds
// `object_threshold` times its maximum. The field, per voxel x:
//  - with `pair_blocks` (n (n + 1) / 2 blocks, pair (r, c), r <= c, at r n - r (r - 1) / 2 + c - r):
//    entry (r, c) is the image of its block (ESPIRiT's G(x));
//  - without: sum of m(x') m(x')^H over the (2 half_width + 1)^d box around x, clipped at the
//    grid's edges (Walsh's covariance).
struct CoilField {
    int coils = 0;
    FrequencyBlocks coil_blocks;
    double object_threshold = 0.06;
    FrequencyBlocks pair_blocks;
    int half_width = 0;
};

struct CoilFieldEigen {
    std::vector<std::uint8_t> object;  // voxels: 1 inside the object
    ComplexArray vectors;              // coils x voxels: the unit dominant eigenvector (any phase), 0 outside
    std::vector<double> values;        // voxels: its eigenvalue, 0 outside the object
};

// Throws InputError when the blocks do not match `coils`, the threshold lies outside [0, 1)
// or the half width outside [0, 32].
void checkCoilField(const CoilField& field, const Grid& grid);

// The object from the images' root sum of squares per voxel: 1 where rss > threshold * max(rss).
// Throws InputError when the images are all zero ("the centre of k-space holds no signal").
std::vector<std::uint8_t> objectFromRootSumOfSquares(const std::vector<double>& rss, double threshold);

// In place: each value of a grid's image becomes the sum over the (2 h + 1) box along `axis`,
// clipped at the grid's edges.
void boxSumAlongAxis(cdouble* data, const Grid& g, int axis, int h);

// Per voxel where `only` is non-zero (every voxel when null), the dominant eigenpair of the
// field `upper` (n (n + 1) / 2 images of `voxels` values, pair order as above) on `backend`
// (Backend::dominantEigenvectors); value and vector 0 elsewhere. Throws InputError on sizes.
void dominantEigenvectorsWhere(Backend& backend, int n, std::size_t voxels, const ComplexArray& upper,
                               const std::vector<std::uint8_t>* only, ComplexArray& vectors,
                               std::vector<double>& values, const Progress& progress = {});

}  // namespace recon
