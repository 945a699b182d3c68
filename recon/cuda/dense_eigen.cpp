#include "recon/cuda/dense_eigen.hpp"

#include <cublas_v2.h>
#include <cuComplex.h>
#include <cusolverDn.h>

#include <algorithm>
#include <string>

#include "recon/backend/coil_field.hpp"
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

namespace {

// A^H A's eigen-decomposition left on the device: `gram` holds the eigenvectors (column-major).
void gramEigenOnDevice(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
                       DeviceBuffer<cuDoubleComplex>& gram, cudaStream_t stream) {
    static_assert(sizeof(cdouble) == sizeof(cuDoubleComplex));
    if (a.size() != rows * cols || cols == 0)
        throw InputError("gramEigen: " + std::to_string(a.size()) + " values for a " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix");
    Handles& h = handles();
    checkBlas(cublasSetStream(h.blas, stream), "setting the stream");
    checkSolver(cusolverDnSetStream(h.solver, stream), "setting the stream");
    DeviceBuffer<cuDoubleComplex> da(a.size(), "calibration matrix");
    gram = DeviceBuffer<cuDoubleComplex>(cols * cols, "calibration Gram matrix");
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
    dw.download(values.data(), cols, stream);
}

}  // namespace

void gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
               ComplexArray& vectors, cudaStream_t stream) {
    DeviceBuffer<cuDoubleComplex> gram;
    gramEigenOnDevice(a, rows, cols, values, gram, stream);
    vectors.resize(cols * cols);
    gram.download(reinterpret_cast<cuDoubleComplex*>(vectors.data()), cols * cols, stream);
}

void gramProjection(const ComplexArray& a, std::size_t rows, std::size_t cols, double threshold, std::vector<double>& values,
                    std::size_t& kept, ComplexArray& projection, cudaStream_t stream) {
    DeviceBuffer<cuDoubleComplex> gram;
    gramEigenOnDevice(a, rows, cols, values, gram, stream);
    kept = signalSubspaceSize(values, threshold);
    DeviceBuffer<cuDoubleComplex> p(cols * cols, "signal subspace projection");
    if (kept == 0) {
        p.fill0(stream);
    } else {
        // The eigenvectors of the `kept` largest eigenvalues: the last columns (ascending order).
        const cuDoubleComplex one = {1, 0}, zero = {0, 0};
        const int n = int(cols), k = int(kept);
        checkBlas(cublasZgemm(handles().blas, CUBLAS_OP_N, CUBLAS_OP_C, n, n, k, &one, gram.data() + (cols - kept) * cols, n,
                              gram.data() + (cols - kept) * cols, n, &zero, p.data(), n),
                  "V V^H (zgemm)");
    }
    projection.resize(cols * cols);
    p.download(reinterpret_cast<cuDoubleComplex*>(projection.data()), cols * cols, stream);
}

}  // namespace recon::cuda
