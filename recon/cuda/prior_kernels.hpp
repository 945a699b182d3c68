// The sparse priors' stencils on device arrays: VectorSpace::gradient and
// VectorSpace::waveletLevel for the CUDA backend (their contracts are there; the
// CPU backend's loops are the reference the GPU tests compare with). One thread
// per output value, float64 nowhere: the products are memory-bound.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <vector>

#include "recon/cuda/cuda_util.hpp"
#include "recon/linop/vector_space.hpp"

namespace recon::cuda {

// `n` the image grid (1 on unused axes), `dims` its dimensions; `weights` may be null.
template <class T>
void gradientStencil(std::array<int, 3> n, int dims, const std::complex<T>* weights, Product p, const std::complex<T>* x,
                     std::complex<T>* y, cudaStream_t s);

template <class T>
void waveletLevelStencil(std::array<int, 3> n, int axis, std::array<int, 3> box, std::array<int, 3> extent,
                         const std::vector<double>& lowpass, bool inverse, const std::complex<T>* x, std::complex<T>* y,
                         cudaStream_t s);

// VectorSpace::haarShrink and haarNorm1 (their contracts are there): one block per tile.
template <class T>
void haarShrinkTiles(std::array<int, 3> n, std::array<int, 3> splits, std::size_t offset, double t, const std::complex<T>* x,
                     std::complex<T>* y, cudaStream_t s);
// `partial`: scratch, grown to the tile count times the offsets' + 1 where it is smaller.
template <class T>
double haarNorm1Tiles(std::array<int, 3> n, std::array<int, 3> splits, const std::vector<std::size_t>& offsets,
                      const std::complex<T>* x, DeviceBuffer<double>& partial, cudaStream_t s);

}  // namespace recon::cuda
