// The CT phantoms: ellipsoids (ellipses in 2D) in millimetres with attenuation
// in 1/mm, their exact line integrals along the rays of a CtGeometry (so
// simulated projections are not made by the projector that reconstructs them:
// no inverse crime), the voxelised truth, and Poisson noise for a chosen dose.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/ct/geometry.hpp"

namespace recon::ct {

// Attenuation of one unit of the Shepp-Logan amplitudes: the modified phantom's
// brain (amplitude 0.2) becomes water at about 70 keV, 0.02/mm, its skull 0.1/mm.
inline constexpr double kAttenuationPerAmplitude = 0.1;  // 1/mm

struct CtEllipsoid {
    double attenuation = 0;              // 1/mm, added where the part is
    std::array<double, 3> centre{};      // mm
    std::array<double, 3> semi_axes{};   // mm (the third unused in 2D)
    std::array<double, 9> rotation{1, 0, 0, 0, 1, 0, 0, 0, 1};  // object -> part frame, row-major
};

class CtPhantom {
public:
    // 2D parts are infinite cylinders along z (only x and y matter); 3D parts are ellipsoids.
    CtPhantom(int dims, std::vector<CtEllipsoid> parts);

    // The modified (Toft) Shepp-Logan of recon/phantom, 3D when the volume has n_z > 1 and 2D
    // otherwise, scaled so that its [-1/2, 1/2) object domain spans the volume's smallest
    // extent (n Δ over x and y, and z in 3D) around the volume's centre; amplitudes times
    // kAttenuationPerAmplitude.
    static CtPhantom sheppLogan(const VolumeGeometry& volume);
    // One uniform ball (3D) or disc (2D) of `attenuation` 1/mm.
    static CtPhantom ball(int dims, std::array<double, 3> centre_mm, double radius_mm, double attenuation);

    int dims() const { return dims_; }
    const std::vector<CtEllipsoid>& parts() const { return parts_; }

    double value(double x, double y, double z) const;  // 1/mm
    // The integral of the attenuation along the whole line through `point` in `direction`
    // (need not be normalised): the sum over parts of chord length times attenuation.
    double lineIntegral(const std::array<double, 3>& point, const std::array<double, 3>& direction) const;

    // Every detector pixel's mean line integral over subpixels x subpixels rays spread over
    // the pixel (subpixels x 1 for fan beam), projections in the geometry's memory order.
    // Progress per view; cancel takes effect between views.
    std::vector<double> project(const CtGeometry& geometry, int subpixels = 3, const Progress& progress = {}) const;
    // The truth on the volume: each voxel the mean over subsamples^d points inside it.
    std::vector<double> voxelise(const VolumeGeometry& volume, int subsamples = 3) const;

private:
    int dims_;
    std::vector<CtEllipsoid> parts_;
};

// Where a ray from the source of view `view` through detector point (u, v) runs:
// the source position and the (unnormalised) direction towards that point.
struct Ray {
    std::array<double, 3> source, direction;
};
Ray rayThrough(const ConeBeamGeometry& beam, std::size_t view, double u, double v);

// Poisson noise of a scan with `photons` incident photons per detector pixel: counts ~
// Poisson(photons · exp(-p)), clamped at >= 1 (a pixel that saw nothing), and p replaced by
// -log(counts / photons). Returns the counts (the weights of a weighted least-squares fit:
// the inverse variance of -log(counts/photons) to first order). Seeded, reproducible.
std::vector<double> addPoissonNoise(std::vector<double>& projections, double photons, std::uint64_t seed);

}  // namespace recon::ct
