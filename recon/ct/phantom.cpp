#include "recon/ct/phantom.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "recon/phantom/shepp_logan.hpp"

namespace recon::ct {

CtPhantom::CtPhantom(int dims, std::vector<CtEllipsoid> parts) : dims_(dims), parts_(std::move(parts)) {
    if (dims_ != 2 && dims_ != 3) throw InputError("CT phantom: dimension must be 2 or 3, got " + std::to_string(dims_));
    for (const auto& p : parts_)
        for (int a = 0; a < dims_; ++a)
            if (!(p.semi_axes[a] > 0) || !std::isfinite(p.semi_axes[a]))
                throw InputError("CT phantom: semi-axes must be positive and finite");
}

CtPhantom CtPhantom::sheppLogan(const VolumeGeometry& volume) {
    const int dims = volume.size[2] > 1 ? 3 : 2;
    double extent = std::min(volume.size[0] * volume.voxel_mm[0], volume.size[1] * volume.voxel_mm[1]);
    if (dims == 3) extent = std::min(extent, volume.size[2] * volume.voxel_mm[2]);
    const Phantom sl = dims == 3 ? Phantom::sheppLogan3D() : Phantom::sheppLogan2D();
    std::vector<CtEllipsoid> parts;
    for (std::size_t i = 0; i < sl.parts().size(); ++i) {
        const Ellipsoid& e = sl.parts()[i];
        CtEllipsoid p;
        p.attenuation = e.amplitude * kAttenuationPerAmplitude;
        for (int a = 0; a < 3; ++a) {
            p.centre[a] = e.centre[a] * extent + volume.offset_mm[a];
            p.semi_axes[a] = e.semi_axes[a] * extent;
        }
        p.rotation = sl.rotation(i);
        parts.push_back(p);
    }
    return CtPhantom(dims, std::move(parts));
}

CtPhantom CtPhantom::ball(int dims, std::array<double, 3> centre_mm, double radius_mm, double attenuation) {
    CtEllipsoid p;
    p.attenuation = attenuation;
    p.centre = centre_mm;
    p.semi_axes = {radius_mm, radius_mm, radius_mm};
    return CtPhantom(dims, {p});
}

double CtPhantom::value(double x, double y, double z) const {
    const double point[3] = {x, y, z};
    double v = 0;
    for (const auto& p : parts_) {
        double d[3];
        for (int a = 0; a < 3; ++a) d[a] = point[a] - p.centre[a];
        double s = 0;
        for (int a = 0; a < dims_; ++a) {
            const double q = p.rotation[3 * a] * d[0] + p.rotation[3 * a + 1] * d[1] + p.rotation[3 * a + 2] * d[2];
            s += (q / p.semi_axes[a]) * (q / p.semi_axes[a]);
        }
        if (s <= 1.0) v += p.attenuation;
    }
    return v;
}

double CtPhantom::lineIntegral(const std::array<double, 3>& point, const std::array<double, 3>& direction) const {
    const double length = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
    if (!(length > 0)) return 0;
    const double dir[3] = {direction[0] / length, direction[1] / length, direction[2] / length};
    double sum = 0;
    for (const auto& p : parts_) {
        // In the part's frame scaled to the unit ball: |q + t e|^2 = 1, a quadratic in t
        // (t in mm along the unit direction); the chord is the distance between its roots.
        double qa = 0, qb = 0, qc = -1;
        for (int a = 0; a < dims_; ++a) {
            const double* r = &p.rotation[3 * a];
            const double q = (r[0] * (point[0] - p.centre[0]) + r[1] * (point[1] - p.centre[1]) +
                              r[2] * (point[2] - p.centre[2])) / p.semi_axes[a];
            const double e = (r[0] * dir[0] + r[1] * dir[1] + r[2] * dir[2]) / p.semi_axes[a];
            qa += e * e;
            qb += q * e;
            qc += q * q;
        }
        const double disc = qb * qb - qa * qc;
        if (qa > 0 && disc > 0) sum += p.attenuation * 2.0 * std::sqrt(disc) / qa;
    }
    return sum;
}

Ray rayThrough(const ConeBeamGeometry& beam, std::size_t view, double u, double v) {
    const double c = std::cos(beam.angles_rad[view]), s = std::sin(beam.angles_rad[view]);
    const double dso = beam.source_to_isocentre_mm, dsd = beam.source_to_detector_mm;
    Ray ray;
    ray.source = {dso * c, dso * s, 0.0};
    // Detector point: -(D_sd - D_so)(c, s, 0) + u e_u + v e_v, e_u = (-s, c, 0), e_v = (0, 0, 1).
    ray.direction = {-dsd * c - u * s, -dsd * s + u * c, v};
    return ray;
}

std::vector<double> CtPhantom::project(const CtGeometry& geometry, int subpixels, const Progress& progress) const {
    validate(geometry);
    const ConeBeamGeometry& beam = geometry.beam;
    const int su = std::max(1, subpixels);
    const int sv = beam.fanBeam() ? 1 : su;
    const int nu = beam.detector_columns, nv = beam.detector_rows;
    std::vector<double> out(beam.samples());
    for (std::size_t view = 0; view < beam.views(); ++view) {
        double* p = out.data() + view * std::size_t(nu) * nv;
#pragma omp parallel for schedule(static) collapse(2)
        for (int iv = 0; iv < nv; ++iv)
            for (int iu = 0; iu < nu; ++iu) {
                double acc = 0;
                for (int b = 0; b < sv; ++b)
                    for (int a = 0; a < su; ++a) {
                        const double u = beam.pixelU(iu) + ((a + 0.5) / su - 0.5) * beam.pixel_u_mm;
                        const double v = beam.fanBeam() ? beam.pixelV(iv)
                                                        : beam.pixelV(iv) + ((b + 0.5) / sv - 0.5) * beam.pixel_v_mm;
                        const Ray ray = rayThrough(beam, view, u, v);
                        acc += lineIntegral(ray.source, ray.direction);
                    }
                p[std::size_t(iv) * nu + iu] = acc / (su * sv);
            }
        progress.update(double(view + 1) / beam.views());
    }
    return out;
}

std::vector<double> CtPhantom::voxelise(const VolumeGeometry& volume, int subsamples) const {
    const int s = std::max(1, subsamples);
    const int sz = volume.size[2] > 1 ? s : 1;
    const int nx = volume.size[0], ny = volume.size[1], nz = volume.size[2];
    std::vector<double> out(volume.voxels());
#pragma omp parallel for schedule(static) collapse(2)
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                double acc = 0;
                for (int c = 0; c < sz; ++c)
                    for (int b = 0; b < s; ++b)
                        for (int a = 0; a < s; ++a)
                            acc += value(volume.centre(0, i) + ((a + 0.5) / s - 0.5) * volume.voxel_mm[0],
                                         volume.centre(1, j) + ((b + 0.5) / s - 0.5) * volume.voxel_mm[1],
                                         sz == 1 ? volume.centre(2, k)
                                                 : volume.centre(2, k) + ((c + 0.5) / sz - 0.5) * volume.voxel_mm[2]);
                out[(std::size_t(k) * ny + j) * nx + i] = acc / (s * s * sz);
            }
    return out;
}

std::vector<double> addPoissonNoise(std::vector<double>& projections, double photons, std::uint64_t seed) {
    if (!(photons >= 1) || !std::isfinite(photons))
        throw InputError("CT noise: incident photons per pixel must be a finite number >= 1, got " + formatNumber(photons));
    std::mt19937_64 rng(seed);
    std::vector<double> counts(projections.size());
    for (std::size_t i = 0; i < projections.size(); ++i) {
        std::poisson_distribution<long long> draw(photons * std::exp(-projections[i]));
        counts[i] = double(std::max<long long>(1, draw(rng)));
        projections[i] = -std::log(counts[i] / photons);
    }
    return counts;
}

}  // namespace recon::ct
