// References for the CT projector tests, written from geometry.hpp's conventions
// alone (not from the projector's tables): source and detector positions, the chord
// of a ray through a box by slab clipping, and small scan geometries.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "recon/ct/geometry.hpp"

namespace recon::test::ct {

using Point = std::array<double, 3>;

inline Point sourceAt(const recon::ct::ConeBeamGeometry& b, double beta) {
    return {b.source_to_isocentre_mm * std::cos(beta), b.source_to_isocentre_mm * std::sin(beta), 0.0};
}
// The detector point at (u, v) (offsets included in u and v, as pixelU/pixelV give them).
inline Point detectorAt(const recon::ct::ConeBeamGeometry& b, double beta, double u, double v) {
    const double back = b.source_to_detector_mm - b.source_to_isocentre_mm;
    return {-back * std::cos(beta) - u * std::sin(beta), -back * std::sin(beta) + u * std::cos(beta), v};
}

// Length of the segment from `from` to `to` inside the box [lo, hi] (slab clipping).
inline double chordInBox(const Point& from, const Point& to, const Point& lo, const Point& hi) {
    double t0 = 0.0, t1 = 1.0;
    for (int d = 0; d < 3; ++d) {
        const double delta = to[d] - from[d];
        if (std::abs(delta) < 1e-300) {
            if (from[d] < lo[d] || from[d] > hi[d]) return 0.0;
            continue;
        }
        double a = (lo[d] - from[d]) / delta, b = (hi[d] - from[d]) / delta;
        if (a > b) std::swap(a, b);
        t0 = std::max(t0, a);
        t1 = std::min(t1, b);
    }
    if (t1 <= t0) return 0.0;
    const double len = std::sqrt((to[0] - from[0]) * (to[0] - from[0]) + (to[1] - from[1]) * (to[1] - from[1]) +
                                 (to[2] - from[2]) * (to[2] - from[2]));
    return (t1 - t0) * len;
}

inline Point volumeLow(const recon::ct::VolumeGeometry& v) {
    return {v.offset_mm[0] - 0.5 * v.size[0] * v.voxel_mm[0], v.offset_mm[1] - 0.5 * v.size[1] * v.voxel_mm[1],
            v.offset_mm[2] - 0.5 * v.size[2] * v.voxel_mm[2]};
}
inline Point volumeHigh(const recon::ct::VolumeGeometry& v) {
    return {v.offset_mm[0] + 0.5 * v.size[0] * v.voxel_mm[0], v.offset_mm[1] + 0.5 * v.size[1] * v.voxel_mm[1],
            v.offset_mm[2] + 0.5 * v.size[2] * v.voxel_mm[2]};
}

// A 2D fan-beam scan: one slice, one detector row.
inline recon::ct::CtGeometry fanGeometry(int n = 32, int columns = 48, int views = 24) {
    recon::ct::CtGeometry g;
    g.volume.size = {n, n + 3, 1};
    g.volume.voxel_mm = {1.0, 0.9, 1.0};
    g.volume.offset_mm = {1.3, -0.8, 0.0};
    g.beam.source_to_isocentre_mm = 100.0;
    g.beam.source_to_detector_mm = 170.0;
    g.beam.detector_columns = columns;
    g.beam.detector_rows = 1;
    g.beam.pixel_u_mm = 1.3;
    g.beam.pixel_v_mm = 1.0;
    g.beam.offset_u_mm = 0.6;
    g.beam.angles_rad = recon::ct::fullScanAngles(views, 0.05);
    return g;
}

// A cone-beam scan with anisotropic voxels and every offset non-zero.
inline recon::ct::CtGeometry coneGeometry(std::array<int, 3> n = {24, 20, 16}, int columns = 40, int rows = 30,
                                          int views = 20) {
    recon::ct::CtGeometry g;
    g.volume.size = n;
    g.volume.voxel_mm = {1.0, 1.2, 0.8};
    g.volume.offset_mm = {1.5, -2.0, 0.7};
    g.beam.source_to_isocentre_mm = 110.0;
    g.beam.source_to_detector_mm = 190.0;
    g.beam.detector_columns = columns;
    g.beam.detector_rows = rows;
    g.beam.pixel_u_mm = 1.6;
    g.beam.pixel_v_mm = 1.1;
    g.beam.offset_u_mm = 0.7;
    g.beam.offset_v_mm = -0.4;
    g.beam.angles_rad = recon::ct::fullScanAngles(views, 0.1);
    return g;
}

}  // namespace recon::test::ct
