// Where a CT scan's source and detector are, in the volume's frame (mm; the 3D views'
// world coordinates, docs/CONVENTIONS.md "Cone-beam CT"): the source orbit and, at one
// view's angle, the source, the detector's outline and the rays to its corners. Widget-free;
// the 3D tab draws it around the volume (VolumeView::setScanGeometry).
#pragma once

#include <array>
#include <vector>

#include "recon/ct/geometry.hpp"

namespace studio {

using Point3 = std::array<double, 3>;

struct CtScene {
    std::vector<Point3> orbit;        // the source's circle in z = 0, closed (first point repeated)
    Point3 source{};                  // s(β) at the chosen view
    std::array<Point3, 4> detector{}; // corners: (−u, −v), (+u, −v), (+u, +v), (−u, +v) around the detector's centre
    double angle_rad = 0;
};

// `view` is clamped to the scan's views; `orbit_points` (≥ 8) segments for the circle.
CtScene ctScene(const recon::ct::ConeBeamGeometry& beam, int view, int orbit_points = 180);

}  // namespace studio
