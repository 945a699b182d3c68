// Dense linear algebra on coils x coils matrices (C <= a few hundred): the
// Cholesky factor of a noise covariance, the eigenvectors of a coil Gram
// matrix, and the dominant eigenvector of one such matrix per voxel (ESPIRiT,
// Walsh). Row-major, complex double.
#pragma once

#include <cstdint>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"

namespace recon {

struct SquareMatrix {
    int n = 0;
    ComplexArray a;  // n x n, row-major
    explicit SquareMatrix(int size = 0) : n(size), a(std::size_t(size) * std::size_t(size)) {}
    cdouble& operator()(int r, int c) { return a[std::size_t(r) * std::size_t(n) + std::size_t(c)]; }
    cdouble operator()(int r, int c) const { return a[std::size_t(r) * std::size_t(n) + std::size_t(c)]; }
};

// Lower-triangular L with L L^H = A (A Hermitian positive definite). Throws
// NumericalError naming the pivot when A is not positive definite (a dead coil).
SquareMatrix cholesky(const SquareMatrix& a);

// Eigen-decomposition of a Hermitian matrix: eigenvalues in descending order and
// the eigenvectors as the columns of `vectors`.
struct HermitianEigen {
    std::vector<double> values;
    SquareMatrix vectors;
};
HermitianEigen hermitianEigen(const SquareMatrix& a);

// A C x C Hermitian matrix per voxel, stored as its upper triangle: pair (r, c), r <= c,
// is image pairIndex(r, c), each image `voxels` long (pair after pair).
struct HermitianField {
    int n = 0;
    std::size_t voxels = 0;
    ComplexArray upper;
    HermitianField(int size, std::size_t voxel_count)
        : n(size), voxels(voxel_count), upper(pairs() * voxel_count) {}
    std::size_t pairs() const { return std::size_t(n) * std::size_t(n + 1) / 2; }
    std::size_t pairIndex(int r, int c) const {  // r <= c
        return std::size_t(r) * std::size_t(n) - std::size_t(r) * std::size_t(r - 1) / 2 + std::size_t(c - r);
    }
    cdouble* pair(int r, int c) { return upper.data() + pairIndex(r, c) * voxels; }
    const cdouble* pair(int r, int c) const { return upper.data() + pairIndex(r, c) * voxels; }
};

// Per voxel the largest eigenvalue and its eigenvector (unit norm, arbitrary phase):
// vectors is n x voxels, component after component, on `backend` (Backend::dominantEigenvectors:
// the host's cores, or the GPU). Polls `progress` for cancel.
// `only` (voxels long): decompose only where it is non-zero, value and vector 0 elsewhere
// (coil maps are zero outside the object, so its background need not be decomposed).
struct DominantEigen {
    ComplexArray vectors;
    std::vector<double> values;
};
DominantEigen dominantEigenvectors(Backend& backend, const HermitianField& field, const Progress& progress = {},
                                   const std::vector<std::uint8_t>* only = nullptr);

}  // namespace recon
