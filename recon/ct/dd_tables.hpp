// The branchless distance-driven projector's geometry per view, shared by its CPU
// and CUDA forms (Liu, Fu, De Man, Yu 2017; DD of De Man & Basu 2004).
//
// Each view slices the volume across the axis its rays travel most along (a = x when
// |cos β| ≥ |sin β|, else y); b is the other in-plane axis. In slice i (the plane through
// the voxel centres of index i along a) a detector cell's footprint is the rectangle
//   η ∈ [η_iu(i), η_iu+1(i)]  (the rays through its u boundaries, exact),
//   ζ ∈ [ζ_iv(i), ζ_iv+1(i)]  (its v boundaries scaled by the centre column's ray, t_c),
// in continuous voxel-index units (voxel j spans [j, j + 1]). The cell's value is
//   p = L · Σ_i (mean of slice i over the footprint),   L = Δ_a |P − s| / |P_a − s_a|
// (the centre ray's length per slice), and a mean over a rectangle is a difference of the
// slice's integral image sampled at the four corners, bilinearly (exact: the integral of a
// piecewise-constant slice is bilinear within each voxel). Fan beam (one slice, one row)
// is the 2D DD: the footprint covers the slice's whole height and L is in-plane.
//
// All quantities are linear in the slice index i, so a table holds two coefficients.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "recon/ct/geometry.hpp"

namespace recon::ct {

struct DdTables {
    std::array<int, 3> n{1, 1, 1};  // volume size
    int views = 0, nu = 0, nv = 0;
    bool planar = false;  // fan beam on one slice: the 2D DD

    // Per view.
    std::vector<int> axis;                 // a: 0 (slices across x) or 1 (across y)
    std::vector<double> cos_beta, sin_beta;

    // Per view and u boundary m = 0 … nu (index view · (nu + 1) + m): η_m(i) = eta0 + eta1 · i.
    std::vector<double> eta0, eta1;
    // Per view and column iu (index view · nu + iu): the centre ray's parameter (0 at the
    // source, 1 on the detector) at slice i, t_c(i) = tc0 + tc1 · i, and the length per slice
    // L(iu, iv) = len_scale · sqrt(len_inplane2 + V_iv²) (V_iv the row centre's height, mm).
    std::vector<double> tc0, tc1, len_scale, len_inplane2;

    // Per v boundary c = 0 … nv: V_c / Δz, so that ζ_c(i) = t_c(i) · vz[c] − z0.
    std::vector<double> vz;
    double z0 = 0.0;          // the volume's lower z edge / Δz
    double pv_over_dz = 1.0;  // Δζ = t_c · p_v / Δz
    std::vector<double> row_height_mm;  // V_iv per row (0 for the planar case)

    // What the backprojector needs to map a voxel boundary to the detector's u.
    double source_to_isocentre = 0.0, source_to_detector = 0.0;
    double u_first_edge = 0.0, pixel_u = 1.0;  // U_0 = pixelU(0) − p_u / 2
    std::array<double, 3> edge{0, 0, 0};        // the volume's lower edges (mm)
    std::array<double, 3> voxel{1, 1, 1};       // voxel size (mm)

    std::size_t boundary(int view, int m) const { return std::size_t(view) * (nu + 1) + m; }
    std::size_t column(int view, int iu) const { return std::size_t(view) * nu + iu; }
    int slices(int view) const { return n[axis[view]]; }
    int inSlice(int view) const { return n[1 - axis[view]]; }
};

// Validates the geometry (InputError naming the field) and builds its tables.
DdTables makeDdTables(const CtGeometry& geometry);

}  // namespace recon::ct
