// The exact Fourier sums of the reference paper (Fig. 14.4's loops) on the CPU.
// Exact: every term is evaluated; the phase exp(i 2 pi k.x) is formed as a
// product of per-axis factors (an identity, not an approximation), so a block of
// voxels costs one sin/cos per axis position instead of one per voxel. Phases
// are computed in double; accumulation in T.
#pragma once

#include <complex>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"

namespace recon {

// out_j = sum_m c_m exp(+i 2 pi k_m . x_j)
template <class T>
void directAdjointSum(const Trajectory& t, const std::complex<T>* c, const SampleGrid& g, std::complex<T>* out,
                      const Progress& progress = {});

// out_m = sum_j f_j exp(-i 2 pi k_m . x_j)
template <class T>
void directForwardSum(const Trajectory& t, const std::complex<T>* f, const SampleGrid& g, std::complex<T>* out,
                      const Progress& progress = {});

}  // namespace recon
