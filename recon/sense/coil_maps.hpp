// Coil sensitivity maps for SENSE: estimated from the data (low-resolution coil
// images divided by their root sum of squares) or read from a BART cfl file.
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
    std::string source;               // "low-resolution", "file.cfl"
};

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

// Maps given as an array [x, y, z, coils(, sets)], x fastest (the layout of `bart ecalib`'s
// output: the first set is used); the mask is where any map is non-zero. `dims` are the
// array's sizes; `source` (a file name) names it in messages. Throws InputError when the
// sizes do not match grid and coils.
CoilMaps coilMapsFromArray(const std::vector<long>& dims, const ComplexArray& values, const Grid& grid, int coils,
                           const std::string& source);

}  // namespace recon
