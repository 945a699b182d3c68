// cuFFT behind a small typed wrapper: one complex-to-complex plan per shape (x
// fastest, like the engine's arrays), in place, on a stream. Plan creation that
// runs out of device memory raises recon::OutOfMemory with the grid's size.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstddef>
#include <utility>
#include <vector>

namespace recon::cuda {

template <class T>
class GpuFft {
public:
    GpuFft(std::array<int, 3> shape, int dims, cudaStream_t stream);
    ~GpuFft();
    GpuFft(const GpuFft&) = delete;
    GpuFft& operator=(const GpuFft&) = delete;
    // forward: exp(-i), inverse: exp(+i), unnormalised.
    void forward(std::complex<T>* data) const;
    void inverse(std::complex<T>* data) const;
    std::size_t size() const { return size_; }

private:
    int handle_ = 0;
    std::size_t size_ = 0;
};

// FFTs of the Toeplitz embedding's 2N grid, pruned along the slowest axis: the
// forward transform's input is zero outside the first half of the slowest axis
// (the padded image), and the inverse transform's output is wanted only there
// (the crop). So the transforms over the other axes run on half of the slices.
// convolve() goes further: where the slowest axis has a power-of-two length, the
// forward transform along it, the product with the spectrum and the inverse
// transform run as one kernel of ours, column by column in registers and shared
// memory, so that stage reads the half-grid once and the spectrum once and writes
// the half-grid once (cuFFT's two passes and a separate product move the whole
// grid seven times).
template <class T>
class PaddedFft {
public:
    // `fuse`: use the fused kernel where the slowest axis allows it (a power of two, 4..1024;
    // up to 512 in float64).
    PaddedFft(std::array<int, 3> big, int dims, cudaStream_t stream, bool fuse = true);
    ~PaddedFft();
    PaddedFft(const PaddedFft&) = delete;
    PaddedFft& operator=(const PaddedFft&) = delete;
    // data <- IFFT(spectrum .* FFT(data)), unnormalised, for data that are zero in the
    // second half of the slowest axis; valid in the first half only afterwards. The
    // fused path reads only the first half, so the caller need not clear the rest.
    void convolve(std::complex<T>* data, const std::complex<T>* spectrum) const;
    // Whether convolve() runs the fused kernel (else two cuFFT passes and a product).
    bool fused() const { return twiddles_ != nullptr; }
    // Values in the first half of the 2N grid along the slowest axis: what convolve() reads and writes.
    std::size_t halfSize() const { return std::size_t(slice_) * std::size_t(slow_ / 2); }
    // convolve() on `count` grids at once, each only its first half (halfSize() values), one after
    // another from `data`: one batched cuFFT plan per direction (made on first use for each count,
    // kept) and one launch of the fused kernel, whose neighbouring blocks take the same columns of
    // different grids so the spectrum is read from L2 once per column. Fused path only (Error otherwise).
    void convolveBatch(std::complex<T>* data, int count, const std::complex<T>* spectrum) const;
    // Whether coilSumConvolve runs: the fused path, and the faster axes' lengths are ones the line
    // kernels take too (powers of two, as for the slowest).
    bool prunesEveryAxis() const { return row_twiddles_ != nullptr; }
    // The whole Toeplitz product of `count` grids with every axis pruned, the pad and crop fused in:
    // y = sum_{c < count} conj(S_c) .* crop(IFFT(spectrum .* FFT(pad(S_c .* x)))) on the image grid `n`
    // (half the 2N grid on each axis), or that added to y (`accumulate`); maps: `count` device arrays
    // (null with count 1: no maps, the single-coil product). `work` holds count halfSize() values, one
    // grid after another. The x pass transforms only the image's rows, the y pass reads (forward) and
    // writes (inverse) only the first half of its columns, the slowest axis as convolve(): outside that
    // axis's pass 0.42x the memory traffic of cuFFT's inner plans with a pad and a crop (ncu, 128^3).
    void coilSumConvolve(std::array<int, 3> n, const std::complex<T>* x, const std::complex<T>* const* maps, int count,
                         std::complex<T>* work, const std::complex<T>* spectrum, bool accumulate, std::complex<T>* y) const;

private:
    int batchPlan(int count) const;
    int inner_ = 0, outer_ = 0;  // cuFFT handles: the faster axes on half the slices; the slowest axis (unfused only)
    cudaStream_t stream_ = nullptr;
    long long slice_ = 0;        // points per slice of the slowest axis: the columns
    int slow_ = 0;               // the slowest axis's length
    int tile_ = 0;               // columns per block of the fused kernel
    std::complex<T>* twiddles_ = nullptr;  // exp(-2 pi i m / slow_), m < slow_ (fused path only)
    std::complex<T>* row_twiddles_ = nullptr;     // the same for the x axis (prunesEveryAxis only)
    std::complex<T>* column_twiddles_ = nullptr;  // and the y axis (3D)
    int big_[3] = {1, 1, 1};
    int dims_ = 0;
    mutable std::vector<std::pair<int, int>> batch_plans_;  // (count, cuFFT handle) of the inner axes
};

}  // namespace recon::cuda
