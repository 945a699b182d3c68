// The few LAPACK and BLAS routines the engine calls, by their Fortran names (OpenBLAS, OpenMP
// build: Debian's libopenblas0-openmp; its threads follow OpenMP's, so they never compete with
// ours). Declared here rather than through LAPACKE/CBLAS headers, which would add packages for
// nothing: column-major arrays, every argument by address, then the hidden lengths of the
// character arguments (gfortran's calling convention; BLAS written in C ignores them).
#pragma once

#include <complex>
#include <cstddef>

namespace recon::lapack {

using fint = int;  // Debian's LAPACK and OpenBLAS use 32-bit integers (LP64)
using fchar_len = std::size_t;

extern "C" {
// A = Q T Q^H: Hermitian to real symmetric tridiagonal (blocked, BLAS-3).
void zhetrd_(const char* uplo, const fint* n, std::complex<double>* a, const fint* lda, double* d, double* e,
             std::complex<double>* tau, std::complex<double>* work, const fint* lwork, fint* info, fchar_len);
// All eigenvalues of a real symmetric tridiagonal matrix (ascending, no vectors).
void dsterf_(const fint* n, double* d, double* e, fint* info);
// Selected eigenpairs of a real symmetric tridiagonal matrix (MRRR), the vectors stored complex.
void zstemr_(const char* jobz, const char* range, const fint* n, double* d, double* e, const double* vl, const double* vu,
             const fint* il, const fint* iu, fint* m, double* w, std::complex<double>* z, const fint* ldz, const fint* nzc,
             fint* isuppz, fint* tryrac, double* work, const fint* lwork, fint* iwork, const fint* liwork, fint* info,
             fchar_len, fchar_len);
// C = Q C with zhetrd's Q (blocked Householder reflectors).
void zunmtr_(const char* side, const char* uplo, const char* trans, const fint* m, const fint* n,
             const std::complex<double>* a, const fint* lda, const std::complex<double>* tau, std::complex<double>* c,
             const fint* ldc, std::complex<double>* work, const fint* lwork, fint* info, fchar_len, fchar_len, fchar_len);
// C = alpha A A^H + beta C (one triangle of C).
void zherk_(const char* uplo, const char* trans, const fint* n, const fint* k, const double* alpha,
            const std::complex<double>* a, const fint* lda, const double* beta, std::complex<double>* c, const fint* ldc,
            fchar_len, fchar_len);
}

}  // namespace recon::lapack
