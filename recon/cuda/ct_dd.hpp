// The branchless distance-driven projector and backprojector on the GPU (Liu, Fu,
// De Man, Yu 2017), the same operator as recon/ct/dd_branchless_cpu (geometry in
// recon/ct/dd_tables.hpp).
//
// Projection: the volume's integral images (one per slice across x and across y),
// computed on the device by scans, are sampled at each detector cell's footprint
// corners in every slice and differenced. Hardware interpolation reads them from a
// 3D CUDA array through a texture with linear filtering (the texture unit's weights
// have 8 fractional bits); software interpolation reads the same values from global
// memory and weighs them in float32 registers.
//
// Backprojection is the projector's exact adjoint, gathered voxel by voxel without
// atomics: the detector cell's v footprint scales with its column, so one 2D integral
// image of a view cannot serve every voxel exactly. The adjoint factors instead into two
// 1D parts: (1) per view, the integral along v of the weighted projection (a scan per
// column); (2) one thread per (x, y) and 16 voxels along z loops over the views in
// registers: it samples that integral at its z boundaries mapped into each of the 2 or 3
// columns its in-plane extent covers (texture, or software from node pairs: one 8-byte
// load per sample), differences, and weighs each column by the covered part of it (the
// in-plane boundaries mapped onto the detector).
//
// The host calls pipeline their transfers in pieces of views through page-locked staging
// buffers and a copy stream, so that copies overlap the kernels; the pieces shrink towards
// the end that waits on the host, and the backprojection's last piece is gathered slab by
// slab along z as the volume goes down.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <memory>

#include "recon/ct/dd_tables.hpp"
#include "recon/ct/projector.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon::cuda {

class CudaDdProjector {
public:
    // Uploads the geometry's tables and allocates the integral images (OutOfMemory with
    // the bytes when the device is full; InputError for a bad geometry or one larger than
    // the texture unit's 3D limits on the hardware path). Work is ordered on `stream`.
    CudaDdProjector(const ct::CtGeometry& geometry, ct::DdInterpolation interpolation, cudaStream_t stream = nullptr);
    ~CudaDdProjector();
    CudaDdProjector(const CudaDdProjector&) = delete;
    CudaDdProjector& operator=(const CudaDdProjector&) = delete;

    std::size_t voxels() const;
    std::size_t samples() const;
    ct::DdInterpolation interpolation() const { return interpolation_; }
    cudaStream_t stream() const { return stream_; }

    // Device arrays (float32, geometry.hpp's memory orders), asynchronous on stream().
    void project(const float* volume, float* projections);
    void backproject(const float* projections, float* volume);
    // Host arrays in and out: upload, the device call, download (returns when done).
    void projectHost(const float* volume, float* projections);
    void backprojectHost(const float* projections, float* volume);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    ct::DdInterpolation interpolation_;
    cudaStream_t stream_;
};

// The GPU DD as an operator on the CUDA backend's vectors (complex, float32 or float64):
// the real part is projected, and the imaginary part alike when it is not all zero (one
// flag kernel decides). With `stream` null the operator synchronises `cuda_space` before
// it starts and its own work before it returns; the backend passes its stream instead.
LinearOperatorPtr cudaDdProjector(VectorSpace& cuda_space, const ct::CtGeometry& geometry,
                                  const ct::ProjectorOptions& options, cudaStream_t stream = nullptr);

namespace detail {  // the operator's glue between complex vectors and the float32 projector
template <class T>
void complexPartToFloat(const std::complex<T>* z, bool imaginary, float* out, std::size_t n, cudaStream_t s);
// z = re + i im (im may be null: zero).
template <class T>
void floatsToComplex(const float* re, const float* im, std::complex<T>* z, std::size_t n, cudaStream_t s);
// Whether any imaginary part is non-zero (`flag`: one device int of scratch); synchronises `s`.
template <class T>
bool anyImaginary(const std::complex<T>* z, std::size_t n, int* flag, cudaStream_t s);
}  // namespace detail

}  // namespace recon::cuda
