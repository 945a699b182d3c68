// The type-1 NUFFT's FFT, pruned: an unnormalised backward transform (exp(+i)) of an
// oversampled grid of G points per axis of which only the S lowest frequencies,
// d in [-S/2, S - S/2) per axis, are wanted. Axis by axis, cropping after each: x on every
// line of the fine grid, y only on the kept x columns, z only on the kept (x, y) columns
// (FFTW's guru interface, single-threaded plans inside the engine's OpenMP loops, z a
// tile of columns at a time). At sigma = 2 in 3D that is 14 G^3 / 8 points transformed
// instead of 3 G^3; with a real fine grid (Q's: real weights spread) x is a real-to-complex
// transform and only d_x >= 0 is made (the rest is the conjugate), half again.
#pragma once

#include <array>
#include <complex>
#include <memory>

#include "recon/core/errors.hpp"

namespace recon {

template <class T>
class CroppedFft {
public:
    // fine: G per axis, kept: S per axis (S <= G), dims 2 or 3 (x fastest; unused axes 1).
    // real_input: the fine grid holds real values (T), else complex ones.
    CroppedFft(std::array<int, 3> fine, std::array<int, 3> kept, int dims, bool real_input);
    ~CroppedFft();
    CroppedFft(const CroppedFft&) = delete;
    CroppedFft& operator=(const CroppedFft&) = delete;

    // out(d) = sum_n fine(n) exp(+i 2 pi n . d / G), on outShape(), x fastest: per axis the
    // index is d + S/2, except x of a real input, whose index is d_x in [0, S_x/2].
    // `fine` (complex<T> or T, x fastest, on an FFTW-aligned buffer such as fftw::Buffer) is
    // not changed. Polls progress's cancel between planes and tiles (throws Cancelled).
    void execute(const void* fine, std::complex<T>* out, const Progress& progress = {}) const;
    std::array<int, 3> outShape() const;
    std::size_t outSize() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
