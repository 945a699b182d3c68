// The dominant eigenvector of a small Hermitian matrix per voxel, on the device: the last step
// of ESPIRiT's and Walsh's coil maps (2 million 8 x 8 matrices at 128^3), 1.7 s on the host's
// cores with Eigen per voxel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace recon::cuda {

// The largest n this kernel takes (each thread's two matrices live in shared memory: 8 KB at 16).
constexpr int kMaxEigenCoils = 16;

// Per voxel v: the largest eigenvalue of the n x n Hermitian matrix whose upper triangle is
// `upper` (pair (r, c), r <= c, at (r n - r (r - 1) / 2 + c - r) * voxels + v; HermitianField's
// layout) into values[v], its unit eigenvector into vectors[r * voxels + v]. Cyclic complex
// Jacobi rotations in float64, one thread per voxel; n <= kMaxEigenCoils. With `index` (`count`
// voxel numbers, device memory): only those voxels, the other voxels' values and vectors left as
// they are (a thread for each listed voxel: none idles on the rest). Asynchronous on `stream`.
void dominantEigenvectors(int n, std::size_t voxels, const double2* upper, double2* vectors, double* values,
                          cudaStream_t stream, const std::uint32_t* index = nullptr, std::size_t count = 0);

// The coil field's other steps (recon/cuda/coil_field.cpp), float64, asynchronous on `stream`.
// Along one axis of `above` x len x `below` values (below fastest): out = m in per line, m out_len x len
// (row-major): recon::transformAxis on the device.
void transformAxis(const double2* in, double2* out, const double2* m, int len, int out_len, std::size_t below,
                   std::size_t above, cudaStream_t stream);
// rss[v] = sqrt(sum_c |images[c voxels + v]|^2).
void rootSumOfSquares(const double2* images, int n, std::size_t voxels, double* rss, cudaStream_t stream);
// upper[pair (r, c) voxels + v] = images[r][v] conj(images[c][v]), r <= c (HermitianField's order).
void outerProducts(const double2* images, int n, std::size_t voxels, double2* upper, cudaStream_t stream);
// For `images` images of `voxels` values: out = the sum over the (2 h + 1) box along the axis of
// length `len` whose neighbours lie `stride` apart, clipped at the edges (recon::boxSumAlongAxis).
void boxSum(const double2* in, double2* out, std::size_t images, std::size_t voxels, int len, std::size_t stride, int h,
            cudaStream_t stream);

}  // namespace recon::cuda
