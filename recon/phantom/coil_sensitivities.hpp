// Synthetic receive-coil sensitivities for simulation: smooth bumps centred on a
// ring of coils, each a short Fourier series S_c(x) = sum_j a_cj exp(i 2 pi k_j . x)
// (integer |k_j| <= 2 per axis). A finite Fourier series keeps the simulated data
// exact: the transform of S_c rho is sum_j a_cj rho^(k - k_j), the analytic
// phantom's transform at shifted points, so multi-coil data carry no inverse crime.
#pragma once

#include <vector>

#include "recon/core/types.hpp"
#include "recon/phantom/shepp_logan.hpp"

namespace recon {

class SyntheticCoils {
public:
    // `coils` bumps of width sigma (FOV units) on a ring of radius `ring` in the x-y plane,
    // each with its own constant phase; the largest sum-of-squares magnitude is about 1.
    SyntheticCoils(int dims, int coils, double sigma = 0.3, double ring = 0.3);
    int coils() const { return coils_; }
    int dims() const { return dims_; }
    cdouble value(int coil, double x, double y, double z = 0) const;
    // The maps on the grid at voxel centres: coils x voxels, coil after coil.
    ComplexArray maps(const Grid& g) const;
    // Exact k-space of S_c rho for every coil (coils x M, sample index fastest),
    // in the same units as Phantom::kspace.
    ComplexArray kspace(const Phantom& phantom, const Trajectory& t, const Grid& g) const;

private:
    int dims_, coils_;
    std::vector<std::array<double, 3>> k_;  // the Fourier series' frequencies (cycles/FOV)
    std::vector<ComplexArray> a_;            // per coil, one coefficient per frequency
};

}  // namespace recon
