#include "ui/ct_scene.hpp"

#include <algorithm>
#include <cmath>

namespace studio {

CtScene ctScene(const recon::ct::ConeBeamGeometry& beam, int view, int orbit_points) {
    CtScene scene;
    const double d_so = beam.source_to_isocentre_mm;
    orbit_points = std::max(8, orbit_points);
    for (int i = 0; i <= orbit_points; ++i) {
        const double a = 2 * 3.14159265358979323846 * double(i % orbit_points) / orbit_points;
        scene.orbit.push_back({d_so * std::cos(a), d_so * std::sin(a), 0.0});
    }
    if (beam.angles_rad.empty()) return scene;
    view = std::clamp(view, 0, int(beam.views()) - 1);
    const double b = beam.angles_rad[std::size_t(view)];
    scene.angle_rad = b;
    const double c = std::cos(b), s = std::sin(b);
    scene.source = {d_so * c, d_so * s, 0.0};
    // Detector centre −(D_sd − D_so)(cos β, sin β, 0) + u0 e_u + v0 e_v, e_u = (−sin β, cos β, 0), e_v = z.
    const double back = beam.source_to_detector_mm - d_so;
    const double half_u = 0.5 * beam.detector_columns * beam.pixel_u_mm;
    const double half_v = 0.5 * beam.detector_rows * beam.pixel_v_mm;
    const std::array<std::array<double, 2>, 4> uv{{{-half_u, -half_v}, {half_u, -half_v}, {half_u, half_v}, {-half_u, half_v}}};
    for (int k = 0; k < 4; ++k) {
        const double u = uv[k][0] + beam.offset_u_mm, v = uv[k][1] + beam.offset_v_mm;
        scene.detector[k] = {-back * c - u * s, -back * s + u * c, v};
    }
    return scene;
}

}  // namespace studio
