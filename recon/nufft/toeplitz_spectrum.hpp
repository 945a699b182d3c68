// The Toeplitz embedding's kernel on the CPU, as the real spectrum PaddedConvolution takes:
// s(k) = (2N)^-d sum_d Q(d) exp(-i 2 pi k . d / 2N) on the 2N grid (FFT order, x fastest),
// with Q(d) = sum_m w_m exp(+i 2 pi k_m . d / N), d in [-N, N) per axis (docs/CONVENTIONS.md).
//
// Q is Hermitian, Q(-d) = conj Q(d), because the weights w = |phi|^2 are real; its circular
// embedding is too except where an axis holds d = -N, which pairs with itself. Those entries
// are outside the product's reach (differences of two voxels lie in (-N, N)): they are set to
// zero, so the spectrum is real and is made by one complex-to-real FFT of half of Q.
#pragma once

#include <vector>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/nufft/spread_kernel.hpp"

namespace recon {

// By the NUFFT: the real weights spread onto a real grid oversampled kernel.sigma times
// around the 2N grid, its transform pruned to the 2N grid's d_x >= 0 half (CroppedFft),
// deapodised. Cancellable through progress (throws Cancelled).
template <class T>
std::vector<T> toeplitzSpectrum(const Trajectory& t, const std::vector<double>& weights, const Grid& g,
                                const SpreadKernel& kernel, const Progress& progress = {});

// From Q on the 2N grid (index d + N per axis, as ToeplitzOperator::q() gives it). Throws
// InputError when Q is not Hermitian (|Q(d) - conj Q(-d)| above 1e-4 of max |Q|).
template <class T>
std::vector<T> toeplitzSpectrumFromQ(const Grid& g, const ComplexArray& q);

// Q back from a spectrum (index d + N per axis; zero where an axis holds d = -N).
template <class T>
ComplexArray qFromToeplitzSpectrum(const Grid& g, const std::vector<T>& spectrum);

}  // namespace recon
