#include "recon/cuda/dense_eigen.hpp"

#include <cublas_v2.h>
#include <cuComplex.h>
#include <cusolverDn.h>

#include <algorithm>
#include <string>

#include "recon/core/errors.hpp"
#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {
namespace {

void checkBlas(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS failed in ") + what + " (status " + std::to_string(int(s)) + ")");
}
void checkSolver(cusolverStatus_t s, const char* what) {
    if (s != CUSOLVER_STATUS_SUCCESS)
        throw Error(std::string("cuSOLVER failed in ") + what + " (status " + std::to_string(int(s)) + ")");
}

// The library handles, made once per host thread and device (making one costs milliseconds).
struct Handles {
    int device = -1;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    ~Handles() {
        if (blas) cublasDestroy(blas);
        if (solver) cusolverDnDestroy(solver);
    }
};
Handles& handles() {
    thread_local Handles h;
    int device = 0;
    check(cudaGetDevice(&device), "gramEigen");
    if (h.device != device) {
        if (h.blas) cublasDestroy(h.blas);
        if (h.solver) cusolverDnDestroy(h.solver);
        h.blas = nullptr;
        h.solver = nullptr;
        checkBlas(cublasCreate(&h.blas), "creating a handle");
        checkSolver(cusolverDnCreate(&h.solver), "creating a handle");
        h.device = device;
    }
    return h;
}

}  // namespace

void gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
               ComplexArray& vectors, cudaStream_t stream) {
    static_assert(sizeof(cdouble) == sizeof(cuDoubleComplex));
    if (a.size() != rows * cols || cols == 0)
        throw InputError("gramEigen: " + std::to_string(a.size()) + " values for a " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix");
    Handles& h = handles();
    checkBlas(cublasSetStream(h.blas, stream), "setting the stream");
    checkSolver(cusolverDnSetStream(h.solver, stream), "setting the stream");
    DeviceBuffer<cuDoubleComplex> da(a.size(), "calibration matrix"), gram(cols * cols, "calibration Gram matrix");
    DeviceBuffer<double> dw(cols, "eigenvalues");
    DeviceBuffer<int> info(1, "cuSOLVER status");
    da.upload(reinterpret_cast<const cuDoubleComplex*>(a.data()), a.size(), stream);
    const double one = 1, zero = 0;
    const int n = int(cols), m = int(rows);
    // The lower triangle of A^H A (what zheevd reads with CUBLAS_FILL_MODE_LOWER).
    checkBlas(cublasZherk(h.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, n, m, &one, da.data(), m, &zero, gram.data(), n),
              "A^H A (zherk)");
    int lwork = 0;
    checkSolver(cusolverDnZheevd_bufferSize(h.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, gram.data(), n,
                                            dw.data(), &lwork),
                "the eigensolver's workspace size");
    DeviceBuffer<cuDoubleComplex> work(std::size_t(std::max(lwork, 1)), "eigensolver workspace");
    checkSolver(cusolverDnZheevd(h.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, gram.data(), n, dw.data(),
                                 work.data(), lwork, info.data()),
                "the eigen-decomposition (zheevd)");
    int status = 0;
    info.download(&status, 1, stream);  // synchronises the stream
    if (status != 0) throw NumericalError("the eigen-decomposition of A^H A did not converge (cuSOLVER info " + std::to_string(status) + ")");
    values.resize(cols);
    vectors.resize(cols * cols);
    dw.download(values.data(), cols, stream);
    gram.download(reinterpret_cast<cuDoubleComplex*>(vectors.data()), cols * cols, stream);
}

}  // namespace recon::cuda
