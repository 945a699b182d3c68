// The conventional distance-driven projector on the CPU (De Man & Basu 2004),
// in its separable cone-beam form: per view, the volume is cut into slices
// across the axis the rays run along most (x when |cos β| >= |sin β|, else y);
// in each slice a voxel's boundaries are projected from the source onto the
// detector, in u from the slice's mid-plane and in v from the voxel column's
// centre; the weight of voxel and pixel is the product of the overlaps in u
// and v as fractions of the pixel, times the length of the ray through the
// pixel's centre across one slice. The adjoint visits the same weights, so it
// is the exact transpose. This is the branching reference the branchless
// forms (recon/ct/dd_branchless_cpu.*, the CUDA projector) are measured against.
//
// 2D (fan beam, one detector row, one volume slice): the v factor is 1, so a
// projection is the in-plane line integral.
#pragma once

#include <cstddef>
#include <vector>

#include "recon/core/types.hpp"
#include "recon/ct/geometry.hpp"

namespace recon::ct {

class DdProjector {
public:
    // `threads`: 0 = all cores (OpenMP's maximum), 1 = the single-thread reference.
    DdProjector(const CtGeometry& geometry, int threads = 0);

    const CtGeometry& geometry() const { return geometry_; }
    // projections (beam.samples()) = A volume (volume.voxels()); real and imaginary parts alike.
    void forward(const cdouble* volume, cdouble* projections) const;
    // volume = A^T projections.
    void adjoint(const cdouble* projections, cdouble* volume) const;
    // trace(A^T diag(w) A) = sum over pixels p of w_p sum_voxels a_pv^2 (w empty: identity):
    // with the number of voxels, the mean eigenvalue of the weighted normal operator.
    double weightedTrace(const std::vector<double>& pixel_weights = {}) const;

private:
    template <class Visit>
    void visitSlice(std::size_t view, int slice, const std::vector<double>& path, Visit&& visit) const;
    void pathFactors(std::size_t view, std::vector<double>& path) const;
    bool xDominant(std::size_t view) const;
    int slices(std::size_t view) const;
    int threads() const;

    CtGeometry geometry_;
    int threads_;
    bool planar_;  // fan beam on one slice: no v factor
};

}  // namespace recon::ct
