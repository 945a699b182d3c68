// Circular cone-beam CT with a flat detector; 2D fan-beam is the case of one
// volume slice and one detector row. Units are millimetres and radians; the
// conventions (axes, angle direction, detector orientation, memory order) are
// written out, with a picture, in docs/CONVENTIONS.md ("Cone-beam CT").
//
//   rotation axis  z; the source orbits in the plane z = 0
//   source         s(β) = D_so · (cos β, sin β, 0)            β counter-clockwise seen from +z
//   detector       centre c(β) = −(D_sd − D_so) · (cos β, sin β, 0) + u0 · e_u + v0 · e_v
//                  e_u = (−sin β, cos β, 0) (columns, u),  e_v = (0, 0, 1) (rows, v)
//   pixel (iu, iv) centre at u = (iu − (n_u − 1)/2) · p_u + u0,  v = (iv − (n_v − 1)/2) · p_v + v0
//   voxel (i, j, k) centre at x = (i − (n_x − 1)/2) · Δx + x0   (likewise y, z)
//   projections    memory order u fastest, then v, then view: index (view · n_v + iv) · n_u + iu
//   volume         x fastest (as the MR images), values are attenuation in 1/mm,
//                  so a projection value is a dimensionless line integral.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace recon::ct {

struct VolumeGeometry {
    std::array<int, 3> size{1, 1, 1};            // n_x, n_y, n_z (n_z = 1 for 2D)
    std::array<double, 3> voxel_mm{1.0, 1.0, 1.0};
    std::array<double, 3> offset_mm{0.0, 0.0, 0.0};  // centre of the volume

    std::size_t voxels() const { return std::size_t(size[0]) * size[1] * size[2]; }
    double centre(int axis, int index) const {
        return (index - 0.5 * (size[axis] - 1)) * voxel_mm[axis] + offset_mm[axis];
    }
};

struct ConeBeamGeometry {
    double source_to_isocentre_mm = 0.0;  // D_so
    double source_to_detector_mm = 0.0;   // D_sd (> D_so: the detector is behind the isocentre)
    int detector_columns = 0;             // n_u
    int detector_rows = 1;                // n_v (1 for fan beam)
    double pixel_u_mm = 1.0;              // p_u
    double pixel_v_mm = 1.0;              // p_v
    double offset_u_mm = 0.0;             // u0
    double offset_v_mm = 0.0;             // v0
    std::vector<double> angles_rad;       // β per view

    std::size_t views() const { return angles_rad.size(); }
    std::size_t samples() const { return views() * std::size_t(detector_columns) * detector_rows; }
    double pixelU(int iu) const { return (iu - 0.5 * (detector_columns - 1)) * pixel_u_mm + offset_u_mm; }
    double pixelV(int iv) const { return (iv - 0.5 * (detector_rows - 1)) * pixel_v_mm + offset_v_mm; }
    bool fanBeam() const { return detector_rows == 1; }
};

// A scan: where the source and detector are, and the volume they see.
struct CtGeometry {
    ConeBeamGeometry beam;
    VolumeGeometry volume;
};

// Throws InputError naming the field for a geometry no scanner has: zero or
// negative distances or sizes, a detector in front of the isocentre (not facing
// the source across the volume), a volume reaching the source's orbit,
// non-finite values or angles, absurd sizes.
void validate(const CtGeometry& geometry);

// Full-scan angles: `views` equally spaced over [start, start + 2π).
std::vector<double> fullScanAngles(int views, double start_rad = 0.0);
// Short-scan angles: `views` equally spaced over [start, start + π + 2γ_max],
// γ_max the fan half-angle the detector covers (Parker weights apply).
std::vector<double> shortScanAngles(const ConeBeamGeometry& beam, int views, double start_rad = 0.0);
// The fan half-angle: the largest |atan(u / D_sd)| over the detector's columns (edges included).
double fanHalfAngle(const ConeBeamGeometry& beam);

}  // namespace recon::ct
