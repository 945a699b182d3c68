// Device kernels of the circulant preconditioner (recon/backend/circulant_preconditioner.hpp):
// the fold of a kernel onto the N grid, the eigenvalues' real parts, and M^{-p} formed in place;
// SENSE's inside/outside masks.
// The N-grid FFTs between them are cuFFT's (GpuFft).
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstddef>

namespace recon::cuda {

// out(r) = sum over j < 2 per axis of index/weight tables (CirculantFold's, the three axes'
// tables one after another from `offset[a]`, 2 entries per residue) of the weights' product
// times kernel at the gathered point of the `source` grid; `n` the N grid.
template <class T>
void circulantFold(std::array<int, 3> n, std::array<int, 3> source, std::array<int, 3> offset, const int* index,
                   const double* weight, const std::complex<T>* kernel, std::complex<T>* out, cudaStream_t s);
// x <- (Re x, 0), or (max(Re x, 0), 0) with `nonnegative`.
template <class T>
void keepRealPart(std::complex<T>* x, std::size_t n, bool nonnegative, cudaStream_t s);
// out = scale Re x.
template <class T>
void scaledRealPart(const std::complex<T>* x, double scale, T* out, std::size_t n, cudaStream_t s);
// The largest of max(Re x_i, 0), NaN where some Re x_i is not finite (waits for the stream).
template <class T>
double largestRealPart(const std::complex<T>* x, std::size_t n, cudaStream_t s);
// m <- m_max^{p-1} max(Re m, floor m_max)^{-p}, imaginary part 0.
template <class T>
void inverseCirculantPowerKernel(std::complex<T>* m, std::size_t n, double largest, double exponent, double floor,
                                 cudaStream_t s);

// inside = 1 where Re g > threshold, else 0; outside = 1 - inside (imaginary parts 0): the SENSE
// preconditioner's split of the grid (Backend::thresholdMasks).
template <class T>
void thresholdMasks(const std::complex<T>* g, std::size_t n, double threshold, std::complex<T>* inside, std::complex<T>* outside,
                    cudaStream_t s);

}  // namespace recon::cuda
