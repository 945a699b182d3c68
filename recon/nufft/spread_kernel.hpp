// Spreading kernels for the NUFFT and for gridding, and their Fourier
// transforms for deapodisation. Shared by the CPU and CUDA backends: a backend
// evaluates `value()` per sample offset (or the same closed forms on the device)
// and divides by `deapodization()` on the output grid.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace recon {

// Kernel used to spread samples onto a grid: by the NUFFT (chosen from its
// tolerance) and by gridding (chosen by the user).
enum class SpreadKernelKind { KaiserBessel, ExpSemicircle, Linear };

struct SpreadKernel {
    SpreadKernelKind kind = SpreadKernelKind::ExpSemicircle;
    int width = 7;            // W, in oversampled grid cells
    double beta = 0;          // shape parameter (KB and ES)
    double sigma = 2.0;       // oversampling factor
    double norm = 1.0;        // KB: 1 / I0(beta), so the kernel is 1 at its centre

    // Kernel value at offset z (in cells) from the sample; zero for |z| >= W/2.
    double value(double z) const;
    // value(z[i]) for n offsets, the same bits: the spreading's batches (the exp-semicircle's loop vectorises).
    void values(const double* z, std::size_t n, double* out) const;
    // Psi_hat(t) = integral psi(s) cos(2 pi s t / G) ds for t = -S/2 .. S/2-1 (length S),
    // by Gauss-Legendre quadrature: works for every kernel kind alike.
    std::vector<double> deapodization(int S, int G) const;
    double integral() const;  // Psi_hat(0)
    std::string describe() const;

    // Beatty et al. 2005: beta = pi sqrt(W^2/sigma^2 (sigma - 1/2)^2 - 0.8).
    static SpreadKernel kaiserBessel(double sigma, int width);
    // Exponential of semicircle with beta = 2.30 W (Barnett et al. 2019, sigma = 2).
    static SpreadKernel expSemicircle(double sigma, int width);
    static SpreadKernel linear();
    // The NUFFT's kernel for a requested relative accuracy on a grid oversampled sigma times.
    // sigma = 2: W = ceil(log10(1/tol)) + 2, beta = 2.30 W, from 2 to 16 (one more than
    // Barnett et al.'s rule, which measured 1.2-2.7x the tolerance here; this meets it).
    // Other sigma (1.25 ... 2): W = ceil(ln(1/tol) / (pi sqrt(1 - 1/sigma))) + 1 and
    // beta = 0.97 pi (1 - 1/(2 sigma)) W, the exp-semicircle's rule for a low upsampling
    // (Barnett et al. 2019, sec. 4), again one wider than the rule, to 16. Measured in
    // float64: meets the tolerance at sigma 1.5; at 1.25 up to 2 % above it.
    static SpreadKernel forTolerance(double tolerance, double sigma = 2.0);
};

// exp(x) for -700 < x <= 0 within 1 ulp or so of std::exp, inline so that a loop over it
// vectorises: std::exp is a call per value, and the exp-semicircle kernel's values were most of
// the NUFFT's spreading time (docs/SCALING.md). 2^n by the exponent bits, exp(r) for
// |r| <= ln 2 / 2 by its Taylor series to r^13 (truncation below 2e-16).
inline double expNonPositive(double x) {
    constexpr double log2e = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    constexpr double shifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
    const double shifted = x * log2e + shifter;
    const double n = shifted - shifter;
    const double r = (x - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 6227020800.0;  // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // The low bits of `shifted` hold n + 2^51; n + 1023 in the exponent field is 2^n.
    const std::int64_t bits = (std::bit_cast<std::int64_t>(shifted) - std::bit_cast<std::int64_t>(shifter) + 1023) << 52;
    return p * std::bit_cast<double>(bits);
}

// Oversampled FFT length for an axis of S points: >= sigma*S, even, with small prime factors.
int oversampledLength(int S, double sigma);

}  // namespace recon
