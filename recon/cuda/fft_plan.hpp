// cuFFT behind a small typed wrapper: one complex-to-complex plan per shape (x
// fastest, like the engine's arrays), in place, on a stream. Plan creation that
// runs out of device memory raises recon::OutOfMemory with the grid's size.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstddef>

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
// (the crop). So the transforms over the other axes run on half of the slices,
// and only the 1D transforms along the slowest axis touch the whole grid:
// 2/3 of a full 3D FFT's passes over memory (3/4 in 2D).
template <class T>
class PaddedFft {
public:
    PaddedFft(std::array<int, 3> big, int dims, cudaStream_t stream);
    ~PaddedFft();
    PaddedFft(const PaddedFft&) = delete;
    PaddedFft& operator=(const PaddedFft&) = delete;
    // Forward FFT of data that are zero in the second half of the slowest axis.
    void forward(std::complex<T>* data) const;
    // Inverse FFT, valid only in the first half of the slowest axis afterwards.
    void inverse(std::complex<T>* data) const;

private:
    int inner_ = 0, outer_ = 0;  // cuFFT handles: the faster axes on half the slices; the slowest axis
};

}  // namespace recon::cuda
