// The dominant eigenvector of a small Hermitian matrix per voxel, on the device: the last step
// of ESPIRiT's and Walsh's coil maps (2 million 8 x 8 matrices at 128^3), 1.7 s on the host's
// cores with Eigen per voxel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace recon::cuda {

// The largest n this kernel takes (its matrices live in each thread's local memory).
constexpr int kMaxEigenCoils = 16;

// Per voxel v: the largest eigenvalue of the n x n Hermitian matrix whose upper triangle is
// `upper` (pair (r, c), r <= c, at (r n - r (r - 1) / 2 + c - r) * voxels + v; HermitianField's
// layout) into values[v], its unit eigenvector into vectors[r * voxels + v]. Cyclic complex
// Jacobi rotations in float64, one thread per voxel; n <= kMaxEigenCoils. Asynchronous on `stream`.
void dominantEigenvectors(int n, std::size_t voxels, const double2* upper, double2* vectors, double* values,
                          cudaStream_t stream);

}  // namespace recon::cuda
