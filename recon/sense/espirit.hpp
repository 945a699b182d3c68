// ESPIRiT coil maps (Uecker et al., MRM 71:990, 2014) for non-Cartesian data.
//
// 1. Calibration data: per coil, an image on a (2 calibration)^d grid fitted (CG) to the samples
//    within its band, transformed to the Cartesian k-space points of a calibration^d block
//    around k = 0, where radial and spiral trajectories sample densely.
// 2. The calibration matrix: one row per kernel^d patch of that block, all coils side by side.
//    Its right singular vectors with sigma^2 >= threshold * sigma_max^2 span the patches' row space
//    (the rest is the null space the coils' shared structure creates).
// 3. Projecting every patch on that row space and averaging is, in the image domain, one C x C
//    matrix G(x) per voxel, G(x) = (1/kernel^d) sum_j u_j(x) u_j(x)^H with u_j the kernels'
//    images; the coil sensitivities are its eigenvectors of eigenvalue 1.
// 4. The maps: per voxel the eigenvector of the largest eigenvalue, unit norm (so
//    sum_c |S_c|^2 = 1), the strongest coil's phase removed (docs/CONVENTIONS.md); zero where
//    that eigenvalue falls below `eigenvalue_crop` or outside the object (the mask).
#pragma once

#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/dataset.hpp"
#include "recon/sense/coil_maps.hpp"

namespace recon {

struct EspiritOptions {
    int calibration = 24;  // side of the Cartesian calibration block, k-space samples (1/FOV apart);
                           // a smaller grid axis gives its whole band instead
    int kernel = 6;        // side of the kernel (patch)
    int calibration_iterations = 30;  // CG iterations of each coil's calibration fit
    // Singular vectors whose sigma^2 is below this fraction of the largest's span the null space
    // (on the energy, as BART's `ecalib -t`: 0.001 keeps sigma >= 0.032 sigma_max). The noise
    // floor of a noisy 3D calibration matrix lies near 0.005 sigma_max; a threshold below it
    // keeps every kernel, leaves no null space and G(x) = I (issue 14). Noise-free data allow
    // lower (radial 64^2 against the true maps: 1e-6 0.21 %, 1e-3 0.67 %; docs/CONVENTIONS.md).
    double singular_value_threshold = 0.001;
    double eigenvalue_crop = 0.8;  // voxels whose largest eigenvalue is below: outside the maps' support
    // The eigenvalue stays near 1 in an empty background when the data carry little noise (as in
    // simulations), so the mask also needs the object: voxels where the root sum of squares of the
    // calibration block's coil images (calibrationImages) is below this fraction of its maximum
    // are outside. SENSE then solves only inside the object, which is worth +3.6 dB on
    // radial-2d-8coil (docs/CONVENTIONS.md). 0: the eigenvalue alone decides.
    double mask_threshold = 0.06;
};

// What the estimate found, besides the maps (for reports and tests).
struct EspiritDetails {
    int kernels_kept = 0;           // the row space's dimension
    int kernels_total = 0;          // coils * kernel^d
    std::vector<double> singular_values;  // descending, of the calibration matrix
    std::vector<double> eigenvalues;      // per voxel, the largest eigenvalue of G(x) (0 outside the object)
};

// Throws InputError for one coil, a kernel larger than the block or outside [1, 16], or
// thresholds outside their ranges.
CoilMaps estimateCoilMapsEspirit(Backend& backend, const Dataset& data, const EspiritOptions& opts = {}, const Progress& progress = {},
                                 EspiritDetails* details = nullptr);

}  // namespace recon
