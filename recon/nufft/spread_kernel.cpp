#include "recon/core/errors.hpp"
#include "recon/nufft/spread_kernel.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "recon/core/conventions.hpp"
#include "recon/core/vector_clones.hpp"

namespace recon {
namespace {

// 1/k^2 from a table: a division per term was most of a Kaiser-Bessel kernel value's time.
const std::array<double, 500>& inverseSquares() {
    static const std::array<double, 500> t = [] {
        std::array<double, 500> v{};
        for (int k = 1; k < 500; ++k) v[std::size_t(k)] = 1.0 / (double(k) * k);
        return v;
    }();
    return t;
}

// Modified Bessel function I0 by its power series sum (x^2/4)^k / (k!)^2: all
// terms positive, so it is accurate to rounding; much faster than
// std::cyl_bessel_i, and the KB kernel evaluates it per sample per cell.
// `terms`: set to the number of terms added.
double besselI0(double x, int* terms = nullptr) {
    const std::array<double, 500>& inverse_square = inverseSquares();
    const double q = 0.25 * x * x;
    double term = 1.0, sum = 1.0;
    int k = 1;
    for (; k < 500; ++k) {
        term *= q * inverse_square[std::size_t(k)];
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    if (terms) *terms = std::min(k, 499);
    return sum;
}

// expNonPositive's body, inline here so that the kernels' loops vectorise: 2^n by the exponent
// bits, exp(r) for |r| <= ln 2 / 2 by its Taylor series to r^13 (truncation below 2e-16).
inline double expOfNonPositive(double x) {
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

// Gauss-Legendre nodes and weights on [0, 1] by Newton iteration on P_n.
void gaussLegendre(int n, std::vector<double>& x, std::vector<double>& w) {
    x.resize(n);
    w.resize(n);
    for (int i = 0; i < n; ++i) {
        double z = std::cos(kPi * (i + 0.75) / (n + 0.5));
        double dp = 0;
        for (int it = 0; it < 100; ++it) {
            double p0 = 1, p1 = 0;
            for (int j = 1; j <= n; ++j) {
                double p2 = p1;
                p1 = p0;
                p0 = ((2 * j - 1) * z * p1 - (j - 1) * p2) / j;
            }
            dp = n * (z * p0 - p1) / (z * z - 1);
            double dz = p0 / dp;
            z -= dz;
            if (std::abs(dz) < 1e-16) break;
        }
        x[i] = 0.5 * (1 - z);
        w[i] = 1.0 / ((1 - z * z) * dp * dp);  // (2 / ((1-z^2) dp^2)) / 2 for [0, 1]
    }
}

}  // namespace

double expNonPositive(double x) { return expOfNonPositive(x); }

double SpreadKernel::value(double z) const {
    double h = 0.5 * width;
    double a = std::abs(z);
    if (a >= h) return 0.0;
    switch (kind) {
        case SpreadKernelKind::Linear: return 1.0 - a;
        case SpreadKernelKind::KaiserBessel: {
            double r = a / h;
            return besselI0(beta * std::sqrt(1 - r * r)) * norm;
        }
        case SpreadKernelKind::ExpSemicircle: {
            double r = a / h;
            return expOfNonPositive(beta * (std::sqrt(1 - r * r) - 1));
        }
    }
    return 0.0;
}

// Wider vectors where the processor has them (the same operations, so the same bits).
RECON_VECTOR_CLONES
void SpreadKernel::values(const double* z, std::size_t n, double* out) const {
    if (kind == SpreadKernelKind::KaiserBessel) {
        // besselI0's series to the term where besselI0(beta), the largest argument, stops: a
        // smaller argument stops earlier, and every later term is below half an ulp of its sum
        // (the series decreases there), so adding it changes no bit; a fixed count vectorises.
        int terms = 0;
        besselI0(beta, &terms);
        const std::array<double, 500>& inverse_square = inverseSquares();
        const double h = 0.5 * width;
        constexpr std::size_t kBlock = 256;
        double q[kBlock], term[kBlock], sum[kBlock];
        for (std::size_t i0 = 0; i0 < n; i0 += kBlock) {
            const std::size_t m = std::min(kBlock, n - i0);
            for (std::size_t i = 0; i < m; ++i) {
                const double r = z[i0 + i] / h, t = 1 - r * r;
                const double x = beta * std::sqrt(0.5 * (t + std::abs(t)));
                q[i] = 0.25 * x * x;
                term[i] = sum[i] = 1.0;
            }
            for (int k = 1; k <= terms; ++k) {
                const double c = inverse_square[std::size_t(k)];
                for (std::size_t i = 0; i < m; ++i) {
                    term[i] *= q[i] * c;
                    sum[i] += term[i];
                }
            }
            for (std::size_t i = 0; i < m; ++i) out[i0 + i] = std::abs(z[i0 + i]) >= h ? 0.0 : sum[i] * norm;
        }
        return;
    }
    if (kind != SpreadKernelKind::ExpSemicircle) {
        for (std::size_t i = 0; i < n; ++i) out[i] = value(z[i]);
        return;
    }
    // value()'s operations in the same order (|z| / h squares as z / h does; (t + |t|) / 2 is t where
    // t > 0), branch-free so that the loop vectorises; offsets outside the support set to 0 after it.
    const double h = 0.5 * width, b = beta;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
        const double r = z[i] / h, t = 1 - r * r;
        out[i] = expOfNonPositive(b * (std::sqrt(0.5 * (t + std::abs(t))) - 1));
    }
    for (std::size_t i = 0; i < n; ++i)
        if (std::abs(z[i]) >= h) out[i] = 0.0;
}

std::vector<double> SpreadKernel::deapodization(int S, int G) const {
    // Even kernel: 2 * integral_0^{W/2} psi(s) cos(2 pi s t / G) ds.
    int nodes = 2 * width + 40;
    if (kind == SpreadKernelKind::Linear) nodes = 64;  // the kink sits at the end point only
    std::vector<double> x, w;
    gaussLegendre(nodes, x, w);
    double h = 0.5 * width;
    std::vector<double> psi(nodes);
    for (int q = 0; q < nodes; ++q) psi[q] = value(x[q] * h);
    std::vector<double> out(S);
    for (int j = 0; j < S; ++j) {
        double t = j - S / 2;
        double acc = 0;
        for (int q = 0; q < nodes; ++q) acc += w[q] * psi[q] * std::cos(2 * kPi * x[q] * h * t / G);
        out[j] = 2 * h * acc;
    }
    return out;
}

double SpreadKernel::integral() const { return deapodization(2, 2)[1]; }

std::string SpreadKernel::describe() const {
    std::string k = kind == SpreadKernelKind::KaiserBessel ? "Kaiser-Bessel"
                    : kind == SpreadKernelKind::ExpSemicircle ? "exp-semicircle"
                                                              : "linear";
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s W=%d sigma=%.2f beta=%.3f", k.c_str(), width, sigma, beta);
    return buf;
}

SpreadKernel SpreadKernel::kaiserBessel(double sigma, int width) {
    if (sigma < 1.0 || width < 1 || width > 32) throw InputError("Kaiser-Bessel kernel needs sigma >= 1 and 1 <= W <= 32");
    SpreadKernel k;
    k.kind = SpreadKernelKind::KaiserBessel;
    k.width = width;
    k.sigma = sigma;
    double s = double(width) * width / (sigma * sigma) * (sigma - 0.5) * (sigma - 0.5) - 0.8;
    k.beta = kPi * std::sqrt(std::max(s, 1e-6));
    k.norm = 1.0 / besselI0(k.beta);
    return k;
}

SpreadKernel SpreadKernel::expSemicircle(double sigma, int width) {
    SpreadKernel k;
    k.kind = SpreadKernelKind::ExpSemicircle;
    k.width = width;
    k.sigma = sigma;
    k.beta = 2.30 * width;
    return k;
}

SpreadKernel SpreadKernel::linear() {
    SpreadKernel k;
    k.kind = SpreadKernelKind::Linear;
    k.width = 2;
    k.sigma = 1.0;
    return k;
}

SpreadKernel SpreadKernel::forTolerance(double tolerance, double sigma) {
    if (!(tolerance > 0) || !std::isfinite(tolerance)) throw InputError("NUFFT tolerance must be a positive number");
    if (!(sigma >= 1.25 && sigma <= 2.0)) throw InputError("NUFFT oversampling must be between 1.25 and 2");
    if (sigma == 2.0) return expSemicircle(2.0, std::clamp(int(std::ceil(std::log10(1.0 / tolerance))) + 2, 2, 16));
    const int w = std::clamp(int(std::ceil(std::log(1.0 / tolerance) / (kPi * std::sqrt(1.0 - 1.0 / sigma)))) + 1, 2, 16);
    SpreadKernel k = expSemicircle(sigma, w);
    k.beta = 0.97 * kPi * (1.0 - 0.5 / sigma) * w;
    return k;
}


int oversampledLength(int S, double sigma) {
    if (S <= 1) return 1;
    int n = int(std::ceil(sigma * S - 1e-9));
    if (n < 2) n = 2;
    for (;; ++n) {
        if (n % 2) continue;
        int m = n;
        for (int p : {2, 3, 5}) while (m % p == 0) m /= p;
        if (m == 1) return n;
    }
}

}  // namespace recon
