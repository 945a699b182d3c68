// The few choices every tool in this field must agree on, pinned in one place.
// docs/CONVENTIONS.md explains each; the GUI's data panel shows them.
//
//  - Voxel n (0..N-1 per axis) sits at x_n = (n - N/2)/N in FOV units: [-1/2, 1/2).
//  - k is in cycles per FOV; the grid's band is [-N/2, N/2) per axis.
//  - Forward d_m = phi(k_m) sum_n rho_n exp(-i 2 pi k_m.x_n); adjoint with phi* and +i.
//    No 1/N normalisation in either.
//  - phi is the Fourier transform of the voxel basis: box voxel -> prod sinc(k/N).
//  - Normal equations (F^H F + lambda * s * W^H W) rho = F^H d with s = Q(0) =
//    sum_m |phi(k_m)|^2, the mean eigenvalue of F^H F, so lambda transfers
//    between data sets of any size, basis or amplitude.
#pragma once

#include <cmath>
#include <string>

#include "recon/core/types.hpp"

namespace recon {

inline constexpr double kPi = 3.14159265358979323846;

enum class BasisFunction { BoxVoxel, Point };
inline constexpr BasisFunction kDefaultBasis = BasisFunction::BoxVoxel;
std::string toString(BasisFunction b);
BasisFunction parseBasis(const std::string& s);  // "box" | "point"

// Units trajectories may arrive in; readers convert to cycles per FOV.
enum class TrajectoryUnits { CyclesPerFov, CyclesPerVoxel, RadiansPerVoxel };
std::string toString(TrajectoryUnits u);
TrajectoryUnits parseTrajectoryUnits(const std::string& s);  // "cycles-per-fov", "cycles-per-voxel", "radians"
// Factor taking a k component in `units` to cycles per FOV on an axis of n voxels.
double toCyclesPerFov(TrajectoryUnits units, int n);

inline double sinc(double u) {
    if (std::abs(u) < 1e-8) return 1.0 - (kPi * u) * (kPi * u) / 6.0;
    return std::sin(kPi * u) / (kPi * u);
}

// phi(k) for one sample; real for both bases we support.
inline double basisTransform(BasisFunction b, const Grid& g, double kx, double ky, double kz) {
    if (b == BasisFunction::Point) return 1.0;
    double v = sinc(kx / g.n[0]) * sinc(ky / g.n[1]);
    if (g.dims == 3) v *= sinc(kz / g.n[2]);
    return v;
}

inline double voxelPosition(int index, int n) { return (index - n / 2) / double(n); }

// The scale s applied to lambda: Q(0) = sum |phi|^2.
double regularizationScale(BasisFunction b, const Grid& g, const Trajectory& t);

// True when every component lies in the grid's band [-N/2, N/2) (with a tolerance
// for samples exactly at +N/2, which alias onto -N/2 and are accepted).
bool trajectoryInBand(const Grid& g, const Trajectory& t, std::string* why = nullptr);

}  // namespace recon
