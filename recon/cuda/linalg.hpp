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
template <class T>
void vecScaleComplex(std::complex<double> a, DComplex<T>* y, std::size_t n, cudaStream_t s);  // y *= a
// y = d .* x, or conj(d) .* x; y may be x.
template <class T>
void vecMultiply(const DComplex<T>* d, const DComplex<T>* x, DComplex<T>* y, bool conjugate, std::size_t n, cudaStream_t s);
// y = sum_i w[i] xs[i], up to kMaxCombine terms.
inline constexpr int kMaxCombine = 6;
template <class T>
void vecCombine(int k, const double* w, const DComplex<T>* const* xs, DComplex<T>* y, std::size_t n, cudaStream_t s);
// y = x .* w for a real per-element weight (density compensation, |phi|^2).
template <class T>
void vecMultiplyReal(const T* w, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s);

// The prox of t sum_g ||x_g||_2 over `stride` groups of `group` values (value i + k stride belongs
// to group i): y_g = x_g max(0, 1 - t / ||x_g||); y may be x. group 1: the complex soft threshold.
template <class T>
void vecGroupSoftThreshold(const DComplex<T>* x, std::size_t group, std::size_t stride, double t, DComplex<T>* y,
                           cudaStream_t s);

// Reductions in float64 for the CG's scalars, each one launch that ends in
// mapped host memory (one synchronisation): several inner products sharing a
// vector, and an axpy fused with the norm of its result. One object serves one
// stream at a time.
inline constexpr int kMaxDots = 8;
class DeviceReductions {
public:
    DeviceReductions();
    ~DeviceReductions();
    DeviceReductions(const DeviceReductions&) = delete;
    DeviceReductions& operator=(const DeviceReductions&) = delete;
    // out[k] = a^H bs[k], k < count <= kMaxDots.
    template <class T>
    void dots(const DComplex<T>* a, const DComplex<T>* const* bs, int count, std::size_t n, std::complex<double>* out,
              cudaStream_t s);
    template <class T>
    std::complex<double> dot(const DComplex<T>* a, const DComplex<T>* b, std::size_t n, cudaStream_t s) {
        std::complex<double> r;
        dots<T>(a, &b, 1, n, &r, s);
        return r;
    }
    // out[k] = as[k]^H bs[k], k < count <= kMaxDots, all of length n.
    template <class T>
    void dotPairs(const DComplex<T>* const* as, const DComplex<T>* const* bs, int count, std::size_t n,
                  std::complex<double>* out, cudaStream_t s);
    // y += alpha x; returns ||y||^2.
    template <class T>
    double axpyNorm2(double alpha, const DComplex<T>* x, DComplex<T>* y, std::size_t n, cudaStream_t s);
    // sum_g ||x_g||_2 over `stride` groups of `group` values (vecGroupSoftThreshold's layout).
    template <class T>
    double groupNorm1(const DComplex<T>* x, std::size_t group, std::size_t stride, cudaStream_t s);

private:
    DeviceBuffer<double> partial_;
    DeviceBuffer<unsigned> counter_;
    double* host_ = nullptr;          // mapped pinned host memory, 2 kMaxDots doubles
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
// by a spectrum, crop back. `n` is the image grid, `big` the 2N grid (2n on the
// image's axes, 1 elsewhere). `halfSlowest`: write only the first half of the 2N
// grid's slowest axis (for a transform that never reads the rest).
template <class T>
void toeplitzPad(std::array<int, 3> n, std::array<int, 3> big, bool halfSlowest, const DComplex<T>* x, DComplex<T>* b,
                 cudaStream_t s);
template <class T>
void toeplitzMultiply(const DComplex<T>* spectrum, DComplex<T>* b, std::size_t n, cudaStream_t s);
template <class T>
void toeplitzCrop(std::array<int, 3> n, std::array<int, 3> big, const DComplex<T>* b, DComplex<T>* y, cudaStream_t s);
// The same for a chunk of SENSE coils (at most kMaxCoilBatch), their maps' products fused in:
// pad writes, for each coil c < coils, the first half (along the slowest axis) of the 2N grid
// of maps[c] .* x at b + c * stride; crop sets y = sum_c conj(maps[c]) .* crop(b + c * stride),
// or adds that to y (`accumulate`: the chunks after the first).
inline constexpr int kMaxCoilBatch = 16;
template <class T>
void toeplitzPadCoils(std::array<int, 3> n, std::array<int, 3> big, int coils, const DComplex<T>* const* maps,
                      const DComplex<T>* x, DComplex<T>* b, std::size_t stride, cudaStream_t s);
template <class T>
void toeplitzCropCoils(std::array<int, 3> n, std::array<int, 3> big, int coils, const DComplex<T>* const* maps,
                       const DComplex<T>* b, std::size_t stride, bool accumulate, DComplex<T>* y, cudaStream_t s);
// Circular shift by half the 2N grid on each axis: Kcirc[l] = Q[(l + N) mod 2N]
// (forward) and back; `big` as above.
template <class T>
void halfShift(std::array<int, 3> big, const DComplex<T>* in, DComplex<T>* out, bool inverse, cudaStream_t s);

}  // namespace recon::cuda
