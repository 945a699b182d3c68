// Vector and sparse-matrix operations on device arrays for the CG solve and the
// Toeplitz operator. Complex vectors are std::complex<T> device pointers; the
// scalars that cross to the host are float64.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstdint>

#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {

template <class T>
using DComplex = std::complex<T>;

template <class T>
void vecZero(DComplex<T>* y, std::size_t n, cudaStream_t s);
template <class T>
void vecCopy(const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s);
template <class T>
void vecAxpy(double a, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s);  // y += a x
template <class T>
void vecXpby(const DComplex<T>* x, double b, DComplex<T>* y, std::size_t n, cudaStream_t s);  // y = x + b y
template <class T>
void vecScale(double a, DComplex<T>* y, std::size_t n, cudaStream_t s);                       // y *= a
// y = sum_i w[i] xs[i], up to kMaxCombine terms.
inline constexpr int kMaxCombine = 4;
template <class T>
void vecCombine(int k, const double* w, const DComplex<T>* const* xs, DComplex<T>* y, std::size_t n, cudaStream_t s);
// y = x .* w for a real per-element weight (density compensation, |phi|^2).
template <class T>
void vecMultiplyReal(const T* w, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s);

// a^H b in float64, reduced on the device in one launch; the result lands in
// mapped host memory. One reducer serves one stream at a time.
class DotReducer {
public:
    DotReducer();
    ~DotReducer();
    DotReducer(const DotReducer&) = delete;
    DotReducer& operator=(const DotReducer&) = delete;
    template <class T>
    std::complex<double> dot(const DComplex<T>* a, const DComplex<T>* b, std::size_t n, cudaStream_t s);

private:
    DeviceBuffer<double> partial_;
    DeviceBuffer<unsigned> counter_;
    double* host_ = nullptr;          // mapped pinned host memory, 2 doubles
    double* hostOnDevice_ = nullptr;  // the same, as the device sees it
};

// CSR matrix with real values on the device (rows, cols, int64 row pointers).
template <class T>
struct DeviceCsr {
    std::int64_t rows = 0, cols = 0;
    DeviceBuffer<std::int64_t> row_ptr;
    DeviceBuffer<std::int32_t> col;
    DeviceBuffer<T> val;
};
template <class T>
void csrMultiply(const DeviceCsr<T>& a, const DComplex<T>* x, DComplex<T>* y, cudaStream_t s);  // y = A x

// Toeplitz embedding on the 2N grid: pad the N grid into a zeroed 2N grid, multiply
// by a spectrum, crop back (optionally y = crop + beta y is not needed: plain crop).
// `n` is the image grid, `big` the 2N grid (2n on the image's axes, 1 elsewhere).
template <class T>
void toeplitzPad(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* x, DComplex<T>* b, cudaStream_t s);
template <class T>
void toeplitzMultiply(const DComplex<T>* spectrum, DComplex<T>* b, std::size_t n, cudaStream_t s);
template <class T>
void toeplitzCrop(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* b, DComplex<T>* y, cudaStream_t s);
// Circular shift by half the 2N grid on each axis: Kcirc[l] = Q[(l + N) mod 2N]
// (forward) and back; `big` as above.
template <class T>
void halfShift(std::array<int, 3> big, const DComplex<T>* in, DComplex<T>* out, bool inverse, cudaStream_t s);

}  // namespace recon::cuda
