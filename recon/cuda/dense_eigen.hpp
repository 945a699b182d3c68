// Dense Hermitian eigen-decompositions on the device (cuBLAS, cuSOLVER), for the coil maps:
// ESPIRiT's calibration matrix A has 6859 x 1728 entries for 8 coils in 3D, and the
// eigenvectors of A^H A take tens of seconds on the host's cores.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "recon/core/types.hpp"

namespace recon::cuda {

// The eigen-decomposition of A^H A, A rows x cols column-major, in float64 on the current
// device and `stream`: `values` ascending, `vectors` (cols x cols, column-major) the
// eigenvectors as columns (Backend::gramEigen's contract). Throws Error on a library failure,
// OutOfMemory when the device has no room.
void gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
               ComplexArray& vectors, cudaStream_t stream);

// Backend::gramProjection: gramEigen's decomposition, then V_k V_k^H (cuBLAS zgemm) from the
// eigenvectors left on the device.
void gramProjection(const ComplexArray& a, std::size_t rows, std::size_t cols, double threshold, std::vector<double>& values,
                    std::size_t& kept, ComplexArray& projection, cudaStream_t stream);

}  // namespace recon::cuda
