// Distance-driven (DD) projection and backprojection for cone-beam CT (De Man
// & Basu 2004; the branchless GPU form of Liu, Fu, De Man, Yu 2017): the line
// integrals of a voxel volume along the rays of a CtGeometry, and the matched
// adjoint. Both backends give the same operator; the CUDA one is branchless.
#pragma once

#include "recon/ct/geometry.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon::ct {

// How the branchless form samples the integral images at projected cell boundaries.
enum class DdInterpolation {
    Hardware,  // the texture unit's linear filtering (weights with 8 fractional bits): the paper's
    Software,  // float32 weights in registers: slower, exact to rounding
};

struct ProjectorOptions {
    DdInterpolation interpolation = DdInterpolation::Hardware;  // GPU only
    bool branchless = false;  // CPU: the conventional DD (the paper's reference) or the branchless form
    int threads = 0;          // CPU: 0 = all cores, 1 = the paper's single-thread reference
};

// The DD projector as an operator on `space`'s vectors (forward: volume.voxels() values ->
// beam.samples() line integrals; adjoint: the backprojector). Real-valued: the real and
// imaginary parts are projected alike. Works on any VectorSpace through the host
// (download, project, upload); backends with their own kernels override Backend::ctProjector.
LinearOperatorPtr cpuDdProjector(VectorSpace& space, const CtGeometry& geometry, const ProjectorOptions& options = {});

}  // namespace recon::ct
