// The branchless distance-driven projector on the CPU (Liu, Fu, De Man, Yu 2017):
// per slice, an integral image of the volume; per detector cell and slice, four
// bilinear samples of it at the footprint's corners, differenced (dd_tables.hpp has
// the geometry). The backprojector is the exact adjoint, step by step transposed:
// the differences scatter ± weights, the bilinear samples scatter to their four nodes,
// and the integral image's transpose sums each slice's nodes from the far corner.
// Integral images and sums are float64; volumes and projections are float32, in
// geometry.hpp's memory orders.
#pragma once

#include "recon/core/errors.hpp"
#include "recon/ct/dd_tables.hpp"
#include "recon/ct/geometry.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon::ct {

class BranchlessDdCpu {
public:
    explicit BranchlessDdCpu(const CtGeometry& geometry);  // InputError for a bad geometry

    const DdTables& tables() const { return tables_; }
    std::size_t voxels() const { return std::size_t(tables_.n[0]) * tables_.n[1] * tables_.n[2]; }
    std::size_t samples() const { return std::size_t(tables_.views) * tables_.nu * tables_.nv; }

    // projections[samples()] = A volume[voxels()]; `threads` 0 = all cores. Progress per view.
    void project(const float* volume, float* projections, int threads = 0, const Progress& progress = {}) const;
    // volume[voxels()] = A^T projections[samples()]. Progress per slice.
    void backproject(const float* projections, float* volume, int threads = 0, const Progress& progress = {}) const;

private:
    DdTables tables_;
};

// The branchless DD as an operator on `space`'s vectors (forward: volume -> projections),
// through the host: download, project the real and the imaginary parts alike, upload.
LinearOperatorPtr branchlessDdOperator(VectorSpace& space, const CtGeometry& geometry, int threads = 0);

}  // namespace recon::ct
