// The Toeplitz embedding's product on the CPU: y = crop_N(IFFT_2N(spectrum .* FFT_2N(pad_N(x)))),
// unnormalised (the spectrum carries any scale), on a grid of N per axis embedded in 2N.
//
// Pruned: the padded input is zero outside [0, N) on every axis and only [0, N) of the
// output is kept, so the forward transform runs along x on the lines whose other indices
// are below N, then along y on the lines of the non-zero z planes, and only the slowest
// axis on every line; the inverse runs in the reverse order, cropping as early. In 3D
// that is 14 N^3 points per transform instead of 24 N^3, and the 2N grid is kept only for
// the N non-zero slabs of the slowest axis (half the memory).
// Fused: the slowest axis's forward transform, the product with the spectrum and its
// inverse run on a few columns at a time in a small per-thread buffer (FFTW's guru
// interface, one plan for all tiles), so that stage reads and writes the half grid once
// and the spectrum (stored tile by tile) once, instead of three passes over the whole grid.
// The spectrum is real: the kernel of a Hermitian operator (F^H F, a circulant
// preconditioner) is Hermitian, Q(-d) = conj Q(d), once its unused -N entries are made so
// (recon/nufft/toeplitz_spectrum.hpp), and a real spectrum halves its memory and reads.
#pragma once

#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

// Above this size of the half 2N grid a thread per coil would hold too much memory, and one
// product has slabs enough to keep the threads busy: 2D up to 1024^2, 3D up to 64^3 (float).
inline constexpr std::size_t kCoilThreadGridBytes = std::size_t(8) << 20;
// At most this size of the half 2N grid a 2D product runs on one thread (apply).
inline constexpr std::size_t kSerialGridBytes = std::size_t(64) << 10;

template <class T>
class PaddedConvolution {
public:
    // `spectrum`: on g.doubled(), x fastest. `tile_columns`: columns of the fused stage per
    // tile (0: chosen to fit the cache; tests set it to exercise a remainder).
    PaddedConvolution(const Grid& g, const std::vector<T>& spectrum, int tile_columns = 0);
    ~PaddedConvolution();
    PaddedConvolution(const PaddedConvolution&) = delete;
    PaddedConvolution& operator=(const PaddedConvolution&) = delete;

    // x and y on g (may be the same array). Not for concurrent calls on one object. A 2D grid of
    // at most kSerialGridBytes runs on the calling thread alone.
    void apply(const std::complex<T>* x, std::complex<T>* y) const;
    // SENSE's normal with this kernel: y = sum_c conj(S_c) .* T (S_c .* x), maps[c] on g (y not
    // x). The map products are fused into the padding and the cropping; with several threads and
    // a grid of at most kCoilThreadGridBytes the threads share out the coils, each on a grid of its
    // own (no barriers between the stages; one more grid and image per thread), else coil after
    // coil with each product in parallel.
    void applyCoilSum(const std::vector<const std::complex<T>*>& maps, const std::complex<T>* x, std::complex<T>* y) const;
    // The spectrum as given (on g.doubled(), x fastest).
    std::vector<T> spectrum() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
