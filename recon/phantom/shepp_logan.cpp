#include "recon/core/errors.hpp"
#include "recon/phantom/shepp_logan.hpp"

#include <cmath>
#include <stdexcept>

#include "recon/core/conventions.hpp"

namespace recon {
namespace {

// The modified Shepp-Logan parameters (Toft's contrast-improved version, and its
// 3D extension as published with the 3D phantom), on the object domain [-1, 1]^d.
// Columns: A, a, b, c, x0, y0, z0, phi, theta, psi.
constexpr double kShepp3D[10][10] = {
    {1.0, .6900, .920, .810, 0, 0, 0, 0, 0, 0},
    {-.8, .6624, .874, .780, 0, -.0184, 0, 0, 0, 0},
    {-.2, .1100, .310, .220, .22, 0, 0, -18, 0, 10},
    {-.2, .1600, .410, .280, -.22, 0, 0, 18, 0, 10},
    {.1, .2100, .250, .410, 0, .35, -.15, 0, 0, 0},
    {.1, .0460, .046, .050, 0, .1, .25, 0, 0, 0},
    {.1, .0460, .046, .050, 0, -.1, .25, 0, 0, 0},
    {.1, .0460, .023, .050, -.08, -.605, 0, 0, 0, 0},
    {.1, .0230, .023, .020, 0, -.606, 0, 0, 0, 0},
    {.1, .0230, .046, .020, .06, -.605, 0, 0, 0, 0},
};
// Columns: A, a, b, x0, y0, phi.
constexpr double kShepp2D[10][6] = {
    {1.0, .69, .92, 0, 0, 0},          {-.8, .6624, .8740, 0, -.0184, 0},
    {-.2, .1100, .3100, .22, 0, -18},  {-.2, .1600, .4100, -.22, 0, 18},
    {.1, .2100, .2500, 0, .35, 0},     {.1, .0460, .0460, 0, .1, 0},
    {.1, .0460, .0460, 0, -.1, 0},     {.1, .0460, .0230, -.08, -.605, 0},
    {.1, .0230, .0230, 0, -.606, 0},   {.1, .0230, .0460, .06, -.605, 0},
};

// Unit ball's Fourier transform at radius kappa (cycles per unit length).
double ballTransform(int dims, double kappa) {
    const double q = 2 * kPi * kappa;
    if (dims == 3) {
        if (q < 1e-3) return 4 * kPi / 3 * (1 - q * q / 10);
        return (std::sin(q) - q * std::cos(q)) / (2 * kPi * kPi * kappa * kappa * kappa);
    }
    if (q < 1e-4) return kPi * (1 - q * q / 8);
    return std::cyl_bessel_j(1.0, q) / kappa;
}

}  // namespace

Phantom::Phantom(int dims, std::vector<Ellipsoid> parts) : dims_(dims), parts_(std::move(parts)) {
    for (const auto& e : parts_) {
        const double d2r = kPi / 180;
        double cp = std::cos(e.phi_deg * d2r), sp = std::sin(e.phi_deg * d2r);
        double ct = std::cos(e.theta_deg * d2r), st = std::sin(e.theta_deg * d2r);
        double cs = std::cos(e.psi_deg * d2r), ss = std::sin(e.psi_deg * d2r);
        // z-x-z Euler rotation taking object coordinates into the ellipsoid's frame.
        rot_.push_back({cp * cs - ct * sp * ss, sp * cs + ct * cp * ss, ss * st,
                        -cp * ss - ct * sp * cs, -sp * ss + ct * cp * cs, cs * st,
                        st * sp, -st * cp, ct});
    }
}

Phantom Phantom::sheppLogan3D() {
    std::vector<Ellipsoid> parts;
    for (const auto& r : kShepp3D)
        parts.push_back({r[0], {r[1] / 2, r[2] / 2, r[3] / 2}, {r[4] / 2, r[5] / 2, r[6] / 2}, r[7], r[8], r[9]});
    return Phantom(3, parts);
}

Phantom Phantom::sheppLogan2D() {
    std::vector<Ellipsoid> parts;
    for (const auto& r : kShepp2D) parts.push_back({r[0], {r[1] / 2, r[2] / 2, 1.0}, {r[3] / 2, r[4] / 2, 0}, r[5], 0, 0});
    return Phantom(2, parts);
}

Phantom Phantom::withAmplitudes(const std::vector<double>& amplitudes) const {
    if (amplitudes.size() != parts_.size()) throw InputError("withAmplitudes: one amplitude per part");
    std::vector<Ellipsoid> parts = parts_;
    for (std::size_t i = 0; i < parts.size(); ++i) parts[i].amplitude = amplitudes[i];
    return Phantom(dims_, parts);
}

Phantom Phantom::referenceContrast() const {
    // Brighter ventricles, darker grey matter than the modified Shepp-Logan: every
    // boundary keeps a jump of at least 0.15, as a second scan of the same anatomy would.
    std::vector<double> a{1.0, -0.75, 0.3, 0.3, -0.15, 0.15, 0.15, 0.15, 0.15, 0.15};
    a.resize(parts_.size(), 0.15);
    return withAmplitudes(a);
}

double Phantom::value(double x, double y, double z) const {
    double v = 0;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
        const auto& e = parts_[i];
        const auto& R = rot_[i];
        double d[3] = {x - e.centre[0], y - e.centre[1], dims_ == 3 ? z - e.centre[2] : 0.0};
        double s = 0;
        for (int a = 0; a < dims_; ++a) {
            double p = R[3 * a] * d[0] + R[3 * a + 1] * d[1] + R[3 * a + 2] * d[2];
            s += (p / e.semi_axes[a]) * (p / e.semi_axes[a]);
        }
        if (s <= 1.0) v += e.amplitude;
    }
    return v;
}

cdouble Phantom::transform(double kx, double ky, double kz) const {
    cdouble acc = 0;
    const double k[3] = {kx, ky, dims_ == 3 ? kz : 0.0};
    for (std::size_t i = 0; i < parts_.size(); ++i) {
        const auto& e = parts_[i];
        const auto& R = rot_[i];
        double kappa2 = 0, vol = 1;
        for (int a = 0; a < dims_; ++a) {
            double p = (R[3 * a] * k[0] + R[3 * a + 1] * k[1] + R[3 * a + 2] * k[2]) * e.semi_axes[a];
            kappa2 += p * p;
            vol *= e.semi_axes[a];
        }
        double shift = 0;
        for (int a = 0; a < dims_; ++a) shift += k[a] * e.centre[a];
        acc += e.amplitude * vol * ballTransform(dims_, std::sqrt(kappa2)) * std::polar(1.0, -2 * kPi * shift);
    }
    return acc;
}

ComplexArray Phantom::kspace(const Trajectory& t, const Grid& g) const {
    if (t.dims != dims_ || g.dims != dims_) throw InputError("phantom, trajectory and grid must have the same dimension");
    const double scale = double(g.voxels());
    ComplexArray d(t.samples());
#pragma omp parallel for schedule(static)
    for (std::int64_t m = 0; m < std::int64_t(t.samples()); ++m) d[m] = scale * transform(t.kx(m), t.ky(m), t.kz(m));
    return d;
}

ComplexArray Phantom::image(const Grid& g, int subsamples) const {
    if (g.dims != dims_) throw InputError("phantom and grid must have the same dimension");
    const int s = std::max(1, subsamples);
    const int sz = dims_ == 3 ? s : 1;
    ComplexArray img(g.voxels());
#pragma omp parallel for schedule(dynamic, 1)
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) {
                double acc = 0;
                for (int iz = 0; iz < sz; ++iz)
                    for (int iy = 0; iy < s; ++iy)
                        for (int ix = 0; ix < s; ++ix) {
                            // Sub-sample centres inside the voxel: offsets ((i + 1/2)/s - 1/2) / N.
                            double px = voxelPosition(x, g.n[0]) + ((ix + 0.5) / s - 0.5) / g.n[0];
                            double py = voxelPosition(y, g.n[1]) + ((iy + 0.5) / s - 0.5) / g.n[1];
                            double pz = dims_ == 3 ? voxelPosition(z, g.n[2]) + ((iz + 0.5) / sz - 0.5) / g.n[2] : 0.0;
                            acc += value(px, py, pz);
                        }
                img[g.index(x, y, z)] = acc / (double(s) * s * sz);
            }
    return img;
}

}  // namespace recon
