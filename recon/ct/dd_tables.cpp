#include "recon/ct/dd_tables.hpp"

#include <cmath>

namespace recon::ct {

DdTables makeDdTables(const CtGeometry& geometry) {
    validate(geometry);
    const ConeBeamGeometry& beam = geometry.beam;
    const VolumeGeometry& volume = geometry.volume;
    DdTables t;
    t.n = volume.size;
    t.views = int(beam.views());
    t.nu = beam.detector_columns;
    t.nv = beam.detector_rows;
    t.planar = beam.detector_rows == 1 && volume.size[2] == 1;
    for (int d = 0; d < 3; ++d) {
        t.voxel[d] = volume.voxel_mm[d];
        t.edge[d] = volume.offset_mm[d] - 0.5 * volume.size[d] * volume.voxel_mm[d];
    }
    t.source_to_isocentre = beam.source_to_isocentre_mm;
    t.source_to_detector = beam.source_to_detector_mm;
    t.pixel_u = beam.pixel_u_mm;
    t.u_first_edge = beam.pixelU(0) - 0.5 * beam.pixel_u_mm;

    t.vz.resize(std::size_t(t.nv) + 1);
    for (int c = 0; c <= t.nv; ++c) t.vz[c] = (beam.pixelV(0) - 0.5 * beam.pixel_v_mm + c * beam.pixel_v_mm) / t.voxel[2];
    t.z0 = t.edge[2] / t.voxel[2];
    t.pv_over_dz = beam.pixel_v_mm / t.voxel[2];
    t.row_height_mm.resize(std::size_t(t.nv));
    for (int r = 0; r < t.nv; ++r) t.row_height_mm[r] = t.planar ? 0.0 : beam.pixelV(r);

    t.axis.resize(t.views);
    t.cos_beta.resize(t.views);
    t.sin_beta.resize(t.views);
    t.eta0.resize(std::size_t(t.views) * (t.nu + 1));
    t.eta1.resize(t.eta0.size());
    t.tc0.resize(std::size_t(t.views) * t.nu);
    t.tc1.resize(t.tc0.size());
    t.len_scale.resize(t.tc0.size());
    t.len_inplane2.resize(t.tc0.size());
    const double dso = beam.source_to_isocentre_mm, dsd = beam.source_to_detector_mm;
    for (int v = 0; v < t.views; ++v) {
        const double c = std::cos(beam.angles_rad[v]), s = std::sin(beam.angles_rad[v]);
        t.cos_beta[v] = c;
        t.sin_beta[v] = s;
        const int a = std::abs(c) >= std::abs(s) ? 0 : 1, b = 1 - a;
        t.axis[v] = a;
        const double src[2] = {dso * c, dso * s};
        // A detector point at u (the height does not move its in-plane position).
        auto detector = [&](double u, int d) { return -(dsd - dso) * (d == 0 ? c : s) + u * (d == 0 ? -s : c); };
        // Slice i's plane lies at edge_a + (i + ½) Δ_a along a.
        const double first_plane = t.edge[a] + 0.5 * t.voxel[a] - src[a];
        for (int m = 0; m <= t.nu; ++m) {
            const double u = t.u_first_edge + m * beam.pixel_u_mm;
            const double slope = (detector(u, b) - src[b]) / ((detector(u, a) - src[a]) * t.voxel[b]);
            t.eta0[t.boundary(v, m)] = (src[b] - t.edge[b]) / t.voxel[b] + first_plane * slope;
            t.eta1[t.boundary(v, m)] = t.voxel[a] * slope;
        }
        for (int iu = 0; iu < t.nu; ++iu) {
            const double u = beam.pixelU(iu);
            const double da = detector(u, a) - src[a], db = detector(u, b) - src[b];
            t.tc0[t.column(v, iu)] = first_plane / da;
            t.tc1[t.column(v, iu)] = t.voxel[a] / da;
            t.len_scale[t.column(v, iu)] = t.voxel[a] / std::abs(da);
            t.len_inplane2[t.column(v, iu)] = da * da + db * db;
        }
    }
    return t;
}

}  // namespace recon::ct
