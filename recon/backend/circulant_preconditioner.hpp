// A circulant preconditioner for the quadratic solve (F^H F + w W^H W) x = F^H d.
// F^H F is Toeplitz (block-Toeplitz, kernel Q on the 2N grid); a circulant on the N
// grid approximates it and is diagonalised by one FFT, so its inverse costs two.
// The data term's circulant is Strang's (the central part of Q, wrapped; G. Strang
// 1986) or T. Chan's optimal one (the least-squares closest circulant, weights
// (N - |d|)/N per axis; T. Chan 1988); the penalty's is the circulant of W^H W's
// response to an impulse at the grid's centre, whatever the regulariser (identity: 1;
// finite differences: sum_axes 4 sin^2(pi k/N); anatomical: the weights there).
// M = C(Q) + w C(W^T W); the eigenvalues of both are computed once, and a new w (a
// lambda change) only rebuilds the preconditioner. It applies M^{-p}: p = 1 is the
// classical inverse; p = 1/2 damps the undersampled edge of k-space, which the full
// inverse amplifies in the first iterations (measured in docs/SCALING.md).
//
// Where it lives: Q's fold onto the N grid, the penalty's impulse response, M^{-p} and its
// application are backend primitives (Backend::circulantEigenvalues, inverseCirculantPower,
// circulantSpectrum, circulantMultiply), so on a GPU nothing crosses to the host, a lambda change
// costs one elementwise pass, and an application costs an N-grid FFT pair, not the 2N-grid
// Toeplitz product. The host functions below are the references the backends are tested against.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon {

enum class CirculantApproximation { Strang, Chan };

// Eigenvalues (N grid, FFT order, x fastest) of the circulant approximating the
// Toeplitz matrix whose kernel is `q` on grid.doubled() (difference d at index d + N).
// Q is Hermitian, so the eigenvalues are real (the rounding's imaginary part is dropped).
std::vector<double> circulantEigenvalues(const Grid& grid, const ComplexArray& q, CirculantApproximation a);
// Eigenvalues of T. Chan's optimal circulant of a real square matrix on the grid (e.g. W^T W).
std::vector<double> circulantEigenvalues(const Grid& grid, const CsrMatrix& a);

// The spectrum (N grid, FFT order) of m_max^{p-1} M^{-p}, M = data + weight * penalty (eigenvalues
// as above; `penalty` may be empty; p = `exponent` in (0, 1], 1 the plain inverse), each eigenvalue
// floored at `floor` times the largest m_max so that it stays bounded where the data hardly
// sample k-space. Throws InputError on mismatched sizes, a non-finite weight, an exponent or
// floor out of range, or eigenvalues that are all zero. (The host's reference.)
std::vector<double> inverseCirculantSpectrum(const Grid& grid, const std::vector<double>& data, const std::vector<double>& penalty,
                                             double weight, double exponent = 1, double floor = 1e-3);
// The kernel q' on grid.doubled() of that operator's Toeplitz embedding (a circulant with kernel c
// on the N grid equals the Toeplitz embedding of q'(d) = c(d mod N), d in [-N, N)): the same
// operator through Backend::toeplitzFromQ, a reference for the N-grid application; the same InputErrors.
ComplexArray inverseCirculantKernel(const Grid& grid, const std::vector<double>& data, const std::vector<double>& penalty,
                                    double weight, double exponent = 1, double floor = 1e-3);

// The folds the backends compute eigenvalues with: Q (on grid.doubled(), difference d at index
// d + N) onto the N grid with the approximation's weights; and a response to an impulse at
// `centre` read as a kernel centred there (kernel(d) = response(centre + d), wrapped per axis).
CirculantFold toeplitzFold(const Grid& grid, CirculantApproximation a);
CirculantFold impulseFold(const Grid& grid, const std::array<int, 3>& centre);

// The eigenvalues of the circulant approximating `kernel`'s Toeplitz matrix, on `backend` (Q never
// leaves it on a GPU); equal to circulantEigenvalues(grid, kernel.q(), a).
Vector circulantEigenvalues(Backend& backend, const ToeplitzOperator& kernel, CirculantApproximation a);
// The eigenvalues of the circulant whose kernel is W^H W's response to an impulse at the grid's
// centre, through w's normal on `backend`: exact for a shift-invariant W^H W with periodic ends
// (finite differences: the discrete Laplacian's sum_axes 4 sin^2(pi k / N); an orthogonal wavelet: 1),
// close for one-sided ends and the anatomical weights; any prior gets one without a matrix.
// Rounding's negative values are dropped (W^H W is positive semi-definite).
Vector impulseCirculantEigenvalues(Backend& backend, const Grid& grid, const LinearOperator& w);

// The preconditioner m_max^{p-1} M^{-p}, M = data + sum_k weights[k] penalties[k] (eigenvalue
// vectors on `backend`), as an operator on `backend` (its forward applies it: an FFT pair on the
// N grid, Backend::circulantMultiply). A lambda change makes a new one from the same eigenvalues:
// one combination and one elementwise pass on the backend. The InputErrors of inverseCirculantSpectrum.
LinearOperatorPtr inverseCirculant(Backend& backend, const Grid& grid, const Vector& data, const std::vector<double>& weights,
                                   const std::vector<const Vector*>& penalties, double exponent = 1, double floor = 1e-3);
// The same from eigenvalues in host memory (uploaded; `penalty` may be empty).
LinearOperatorPtr inverseCirculant(Backend& backend, const Grid& grid, const std::vector<double>& data,
                                   const std::vector<double>& penalty, double weight, double exponent = 1, double floor = 1e-3);

}  // namespace recon
