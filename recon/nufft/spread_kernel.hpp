// Spreading kernels for the NUFFT and for gridding, and their Fourier
// transforms for deapodisation. Shared by the CPU and CUDA backends: a backend
// evaluates `value()` per sample offset (or the same closed forms on the device)
// and divides by `deapodization()` on the output grid.
#pragma once

#include <cstddef>
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

// exp(x) for -700 < x <= 0 within about 1 ulp of std::exp: the kernels' own, whose loops vectorise
// (std::exp is a call per value, and the exp-semicircle kernel's values were most of the NUFFT's
// spreading time: docs/SCALING.md). Defined in spread_kernel.cpp (C++20; CUDA sources include this header).
double expNonPositive(double x);

// Oversampled FFT length for an axis of S points: >= sigma*S, even, with small prime factors.
int oversampledLength(int S, double sigma);

}  // namespace recon
