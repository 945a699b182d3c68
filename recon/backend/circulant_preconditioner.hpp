// A circulant preconditioner for the quadratic solve (F^H F + w W^H W) x = F^H d.
// F^H F is Toeplitz (block-Toeplitz, kernel Q on the 2N grid); a circulant on the N
// grid approximates it and is diagonalised by one FFT, so its inverse costs two.
// The data term's circulant is Strang's (the central part of Q, wrapped; G. Strang
// 1986) or T. Chan's optimal one (the least-squares closest circulant, weights
// (N - |d|)/N per axis; T. Chan 1988); the penalty's is T. Chan's optimal circulant
// of the sparse matrix W^T W, whatever the regulariser (identity: 1; finite
// differences: nearly sum_axes 4 sin^2(pi k/N); anatomical: its weights averaged).
// M = C(Q) + w C(W^T W); the eigenvalues of both are computed once, and a new w (a
// lambda change) only rebuilds the preconditioner. It applies M^{-p}: p = 1 is the
// classical inverse; p = 1/2 damps the undersampled edge of k-space, which the full
// inverse amplifies in the first iterations (measured in docs/SCALING.md).
//
// Two ways to apply M^{-p}, the same operator: as a Toeplitz operator through
// Backend::toeplitzFromQ, so it runs on every backend with no code of its own (a circulant
// with kernel c on the N grid equals the Toeplitz embedding of the kernel q'(d) = c(d mod N),
// d in [-N, N)); or by an FFT pair on the N grid in the host's memory, for the CPU backend,
// whose vectors are there (a fraction of the 2N-grid product's cost).
#pragma once

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
// floor out of range, or eigenvalues that are all zero.
std::vector<double> inverseCirculantSpectrum(const Grid& grid, const std::vector<double>& data, const std::vector<double>& penalty,
                                             double weight, double exponent = 1, double floor = 1e-3);
// The kernel q' on grid.doubled() of that operator (Toeplitz embedding); the same InputErrors.
ComplexArray inverseCirculantKernel(const Grid& grid, const std::vector<double>& data, const std::vector<double>& penalty,
                                    double weight, double exponent = 1, double floor = 1e-3);
// That preconditioner as an operator on `backend` (its forward applies it) through the Toeplitz
// product: the backend's own FFTs on the 2N grid (on a GPU the vectors never leave it).
std::shared_ptr<ToeplitzOperator> inverseCirculant(Backend& backend, const Grid& grid, const std::vector<double>& data,
                                                   const std::vector<double>& penalty, double weight, double exponent = 1,
                                                   double floor = 1e-3);

// The same operator applied on the N grid by an FFT pair in the host's memory (download, FFT,
// spectrum, inverse FFT, upload): for the CPU backend, whose vectors are on the host already
// (its cost against the Toeplitz product's: docs/SCALING.md).
LinearOperatorPtr inverseCirculantOnGrid(VectorSpace& space, const Grid& grid, const std::vector<double>& data,
                                         const std::vector<double>& penalty, double weight, double exponent = 1,
                                         double floor = 1e-3);

}  // namespace recon
