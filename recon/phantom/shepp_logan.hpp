// Analytic Shepp-Logan phantoms (2D ellipses, 3D ellipsoids) with their exact
// Fourier transforms, so k-space data at any trajectory point are exact (no
// inverse crime). Object coordinates in FOV units: the phantom fills [-1/2, 1/2).
#pragma once

#include <cstdint>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

struct Ellipsoid {
    double amplitude;
    std::array<double, 3> semi_axes;  // in FOV units
    std::array<double, 3> centre;     // in FOV units
    double phi_deg = 0;               // rotation about z (then theta about y', psi about z'')
    double theta_deg = 0;
    double psi_deg = 0;
};

class Phantom {
public:
    static Phantom sheppLogan3D();  // the modified 3D Shepp-Logan (10 ellipsoids)
    static Phantom sheppLogan2D();  // the modified 2D Shepp-Logan (10 ellipses)
    explicit Phantom(int dims, std::vector<Ellipsoid> parts);

    int dims() const { return dims_; }
    // The parts and, per part, the rotation taking object coordinates into its frame
    // (row-major, rows = the ellipsoid's axes), for callers that need more than values
    // and transforms (the CT phantom's line integrals).
    const std::vector<Ellipsoid>& parts() const { return parts_; }
    const std::array<double, 9>& rotation(std::size_t part) const { return rot_[part]; }
    // The same geometry with other amplitudes (one per part): a scan of the same
    // anatomy at another contrast, e.g. the reference for an anatomical prior.
    Phantom withAmplitudes(const std::vector<double>& amplitudes) const;
    // A T1-like contrast of the Shepp-Logan geometry (same edges, other intensities).
    Phantom referenceContrast() const;
    // The object's value at x (FOV units).
    double value(double x, double y, double z = 0) const;
    // Continuous Fourier transform at k (cycles per FOV): integral rho(x) exp(-i 2 pi k.x) dx.
    cdouble transform(double kx, double ky, double kz = 0) const;
    // k-space data in the engine's model units: N^d * transform(k) (docs/CONVENTIONS.md),
    // so a reconstruction is directly comparable with image(). Parallel over samples.
    ComplexArray kspace(const Trajectory& t, const Grid& g) const;
    // The true image on the grid: each voxel the average over `subsamples`^d points
    // inside it (the box-voxel basis), or the centre value for subsamples = 1.
    ComplexArray image(const Grid& g, int subsamples = 3) const;

private:
    struct Prepared;
    int dims_;
    std::vector<Ellipsoid> parts_;
    std::vector<std::array<double, 9>> rot_;  // rotation per part, row-major (object -> ellipsoid frame)
};

// Complex white Gaussian noise at `snr_db` = 10 log10(mean |d|^2 / sigma^2), E|z|^2 = sigma^2.
void addNoise(ComplexArray& data, double snr_db, std::uint64_t seed);

}  // namespace recon
