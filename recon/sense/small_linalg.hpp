// Dense linear algebra on coils x coils matrices (C <= a few hundred): the
// Cholesky factor of a noise covariance and the eigenvectors of a coil Gram
// matrix. Row-major, complex double. Small enough to need no LAPACK.
#pragma once

#include <vector>

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

}  // namespace recon
