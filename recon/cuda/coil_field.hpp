// Backend::coilFieldEigenvectors on the device (recon/backend/coil_field.hpp): the coils'
// low-resolution images, their root sum of squares, the field (ESPIRiT's G(x) from its pair
// kernels, or Walsh's box-summed outer products) and the dominant eigenpair per voxel of the
// object, all in float64 in device memory; only the root sum of squares (to find the object with
// the host's code) and the eigenpairs come back.
#pragma once

#include <cuda_runtime.h>

#include "recon/backend/coil_field.hpp"

namespace recon::cuda {

// On the current device and `stream`; n <= kMaxEigenCoils (recon/cuda/coil_eigen.hpp).
// Throws OutOfMemory when the field does not fit.
CoilFieldEigen coilFieldEigenvectors(const Grid& grid, const CoilField& field, cudaStream_t stream,
                                     const Progress& progress);

}  // namespace recon::cuda
