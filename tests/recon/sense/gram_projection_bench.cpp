// ESPIRiT's signal-subspace step alone (hostGramProjection: A^H A's eigen-decomposition, the
// kept eigenvectors, P = V V^H) on a synthetic Gram matrix of the 3D default's size (8 coils x
// 6^3 kernel = 1728 columns). Not a test: prints CPU and wall seconds per run (docs/SENSE.md).
//   gram_projection_bench [--n 1728] [--kept 200] [--repeats 3]
// The matrix is U diag(s) U^H with U a product of three Householder reflections (dense, unitary,
// made in O(n^2)) and s falling from 1 to 10^-2.5 over the first `kept` values, then below 1e-5:
// the threshold 1e-3 keeps exactly `kept`, as a calibration matrix's gap does. The tridiagonal
// reduction's cost does not depend on the spectrum; the kept vectors' cost grows with `kept`.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"

using recon::cdouble;
using recon::ComplexArray;

namespace {

double cpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// g <- H g H with H = I - 2 u u^H / |u|^2 (column-major n x n).
void reflectBothSides(ComplexArray& g, const ComplexArray& u, std::size_t n) {
    double len2 = 0;
    for (const cdouble& x : u) len2 += std::norm(x);
    std::vector<cdouble> w(n);
    for (std::size_t j = 0; j < n; ++j) {  // left: column j -= 2 u (u^H g_j) / |u|^2
        cdouble dot = 0;
        for (std::size_t i = 0; i < n; ++i) dot += std::conj(u[i]) * g[j * n + i];
        for (std::size_t i = 0; i < n; ++i) g[j * n + i] -= 2.0 * u[i] * dot / len2;
    }
    for (std::size_t i = 0; i < n; ++i) w[i] = 0;  // right: g -= 2 (g u) u^H / |u|^2
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) w[i] += g[j * n + i] * u[j];
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) g[j * n + i] -= 2.0 * w[i] * std::conj(u[j]) / len2;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 1728, kept_wanted = 200;
    int repeats = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const long v = std::strtol(argv[i + 1], nullptr, 10);
        if (a == "--n") n = std::size_t(v);
        else if (a == "--kept") kept_wanted = std::size_t(v);
        else if (a == "--repeats") repeats = int(v);
        else {
            std::fprintf(stderr, "gram_projection_bench: unknown option %s (--n, --kept, --repeats)\n", a.c_str());
            return 2;
        }
    }
    if (n < 2 || kept_wanted < 2 || kept_wanted >= n || repeats < 1) {
        std::fprintf(stderr, "gram_projection_bench: need 2 <= --kept < --n and --repeats >= 1\n");
        return 2;
    }
    ComplexArray g(n * n, cdouble(0));
    for (std::size_t j = 0; j < n; ++j)
        g[j * n + j] = j < kept_wanted ? std::pow(10.0, -2.5 * double(j) / double(kept_wanted - 1))
                                       : 1e-5 * std::pow(10.0, -3.0 * double(j - kept_wanted) / double(n - kept_wanted));
    for (int r = 0; r < 3; ++r) {
        ComplexArray u(n);
        for (std::size_t i = 0; i < n; ++i) u[i] = cdouble(std::sin(0.37 * double(i) + r), std::cos(1.13 * double(i) * (r + 1)));
        reflectBothSides(g, u, n);
    }
    std::printf("hostGramProjection, %zu x %zu complex double, %zu kept by construction, %d runs\n", n, n, kept_wanted, repeats);
    for (int r = 0; r < repeats; ++r) {
        std::vector<double> values;
        std::size_t kept = 0;
        ComplexArray projection;
        const double c0 = cpuSeconds();
        const auto w0 = std::chrono::steady_clock::now();
        recon::hostGramProjection(g, n, 1e-3, values, kept, projection);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        const double cpu = cpuSeconds() - c0;
        double trace = 0;  // the projection's trace is its rank
        for (std::size_t i = 0; i < n; ++i) trace += projection[i * n + i].real();
        std::printf("run %d: %.3f CPU s, %.3f wall s, kept %zu, trace(P) %.6f\n", r + 1, cpu, wall, kept, trace);
    }
    return 0;
}
