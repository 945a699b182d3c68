// Coil sensitivity maps for SENSE: estimated from the data (low-resolution coil
// images divided by their root sum of squares; Walsh's adaptive combination here,
// ESPIRiT in espirit.hpp) or read from a BART cfl file.
// Phase convention (docs/CONVENTIONS.md): maps are relative to the phase of the
// strongest coil's low-resolution image, so the object's own phase stays in the
// SENSE image and the maps carry only the coils' relative phases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/dataset.hpp"

namespace recon {

struct CoilMaps {
    ComplexArray maps;                // coils x voxels, coil after coil; zero outside the mask
    std::vector<std::uint8_t> mask;   // voxels: 1 where the maps are defined (inside the object)
    int coils = 0;
    std::string source;               // "low-resolution", "walsh", "espirit", "file.cfl"
};

// How SENSE's maps are estimated (SolveOptions::coil_maps, --coil-maps).
enum class CoilMapMethod { LowResolution, Walsh, Espirit };
std::string toString(CoilMapMethod m);                       // "lowres", "walsh", "espirit"
CoilMapMethod parseCoilMapMethod(const std::string& name);   // throws InputError listing the names

// Each coil's gridded centre of k-space (Kaiser-Bessel, `density` weights, Hann taper of
// `radius` cycles/FOV): smooth coil images, coils x voxels, and the strongest coil (largest
// energy), the phase reference of every estimate.
struct LowResolutionImages {
    ComplexArray images;
    int strongest = 0;
};
LowResolutionImages lowResolutionCoilImages(Backend& backend, const Dataset& data, const std::vector<double>& density,
                                            double radius, const Progress& progress = {});

// The object's support: 1 where the root sum of squares over the coil images (coils x voxels)
// reaches `threshold` times its maximum. Throws InputError when the images are all zero or the
// threshold lies outside [0, 1).
std::vector<std::uint8_t> supportMask(const ComplexArray& images, int coils, double threshold);

// Maps of unit root sum of squares per voxel (coils x voxels) made into CoilMaps: the
// reference coil's phase removed (its map real, >= 0) and zero outside `mask`.
CoilMaps assembleCoilMaps(ComplexArray unit_maps, int coils, std::vector<std::uint8_t> mask, int reference,
                          std::string source);

struct LowResolutionMapOptions {
    // The Hann taper's radius in cycles/FOV: only the centre of k-space enters the maps,
    // which are smooth; the object's edges, which lie farther out, do not.
    double calibration_radius = 12;
    // Voxels whose low-resolution root sum of squares is below this fraction of its maximum
    // are outside the object: the maps are zero there and SENSE leaves those voxels at zero.
    double mask_threshold = 0.06;
};

// Gridding (Kaiser-Bessel, `density` weights) of each coil's tapered centre of k-space,
// divided by the root sum of squares over coils. Throws InputError for one coil or bad options.
CoilMaps estimateCoilMapsLowResolution(Backend& backend, const Dataset& data, const std::vector<double>& density,
                                       const LowResolutionMapOptions& opts = {}, const Progress& progress = {});

// Walsh et al. 2000's adaptive combination: per voxel the dominant eigenvector of the coils'
// covariance sum_{x' near x} m(x') m(x')^H over a box of (2 half_width + 1)^d voxels of
// low-resolution coil images m (recon/sense/calibration.hpp: each coil's fitted, Hann-tapered
// calibration block). Averaging over the box makes it robust where one voxel's coil vector is
// noisy or near the object's edge; cheaper than ESPIRiT (no calibration SVD).
struct WalshOptions {
    int calibration = 24;             // the block's side, k-space samples, as EspiritOptions
    int calibration_iterations = 30;  // CG iterations of each coil's calibration fit
    int half_width = 2;               // the box: 5 voxels per axis
    double mask_threshold = 0.06;     // as LowResolutionMapOptions::mask_threshold
};
CoilMaps estimateCoilMapsWalsh(Backend& backend, const Dataset& data, const WalshOptions& opts = {},
                               const Progress& progress = {});

// Maps given as an array [x, y, z, coils(, sets)], x fastest (the layout of `bart ecalib`'s
// output: the first set is used); the mask is where any map is non-zero. `dims` are the
// array's sizes; `source` (a file name) names it in messages. Throws InputError when the
// sizes do not match grid and coils.
CoilMaps coilMapsFromArray(const std::vector<long>& dims, const ComplexArray& values, const Grid& grid, int coils,
                           const std::string& source);

// How maps agree with reference maps (both coils x voxels, coil after coil) inside `region`
// (voxels where it is non-zero), up to the one phase per voxel that maps may choose freely
// (E and E e^{i phi(x)} give the same SENSE image up to that phase). Per voxel both coil
// vectors are normalised to unit length and the estimate is turned by the phase that fits
// best, which leaves the error |s e^{i phi} - r| = sqrt(2 - 2 |<s, r>|); equivalently the
// projections s s^H and r r^H differ by sqrt(2 - 2 |<s, r>|^2) in Frobenius norm.
struct CoilMapAgreement {
    std::size_t voxels = 0;     // in the region where both maps are non-zero: compared
    std::size_t uncovered = 0;  // in the region where either map is zero (outside its mask)
    double rms_error = 0;       // sqrt(mean over compared voxels of |s e^{i phi} - r|^2): relative, maps being unit
    double p99_error = 0;       // the 99th percentile of the per-voxel error
    double max_error = 0;
};
// Throws InputError when the sizes do not match.
CoilMapAgreement compareCoilMaps(const ComplexArray& estimate, const ComplexArray& reference, int coils,
                             const std::vector<std::uint8_t>& region);

}  // namespace recon
