#include "toeplitz_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include <sys/resource.h>

#include "arguments.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/fftw_planner.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/nufft/padded_convolution.hpp"
#include "recon/nufft/toeplitz_spectrum.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon::cli {
namespace {

using Clock = std::chrono::steady_clock;
using C = std::complex<float>;

std::string fmt(const char* f, double a, double b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, a, b);
    return buf;
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// User + system seconds of the whole process: on a shared machine the work itself, where
// wall time also counts the other processes' share of the cores.
double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

Grid parseGrid(const std::string& text) {
    std::vector<int> n;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, 'x')) {
        try {
            n.push_back(std::stoi(item));
        } catch (const std::exception&) {
            n.clear();
            break;
        }
    }
    if (n.size() < 2 || n.size() > 3 || *std::min_element(n.begin(), n.end()) < 2 || *std::max_element(n.begin(), n.end()) > 1024)
        throw UsageError("--toeplitz expects grids like 256x256 or 64x64x64 (2..1024 per axis), got '" + text + "'");
    return n.size() == 2 ? Grid::make2D(n[0], n[1]) : Grid::make3D(n[0], n[1], n[2]);
}

// The product before pruning: the padded image on the whole 2N grid, FFTW's whole transforms.
struct FullProduct {
    Grid g, big;
    std::vector<C> spectrum, work;
    FftPlan<float> forward, inverse;
    FullProduct(const Grid& grid, std::vector<C> s)
        : g(grid), big(grid.doubled()), spectrum(std::move(s)), work(big.voxels()),
          forward(big.n, grid.dims, FftDirection::Forward), inverse(big.n, grid.dims, FftDirection::Backward) {}
    void apply(const C* x, C* y) {
        std::fill(work.begin(), work.end(), C(0));
#pragma omp parallel for schedule(static)
        for (int z = 0; z < g.n[2]; ++z)
            for (int r = 0; r < g.n[1]; ++r) std::copy_n(x + g.index(0, r, z), g.n[0], work.begin() + std::ptrdiff_t(big.index(0, r, z)));
        forward.execute(work.data());
        const std::int64_t n = std::int64_t(work.size());
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) work[std::size_t(i)] *= spectrum[std::size_t(i)];
        inverse.execute(work.data());
#pragma omp parallel for schedule(static)
        for (int z = 0; z < g.n[2]; ++z)
            for (int r = 0; r < g.n[1]; ++r) std::copy_n(work.begin() + std::ptrdiff_t(big.index(0, r, z)), g.n[0], y + g.index(0, r, z));
    }
};

struct Timing {
    double plan = 0;
    std::vector<double> products, cpu;  // milliseconds: wall, process CPU
    double best() const { return *std::min_element(products.begin(), products.end()); }
    static double median(std::vector<double> t) {
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

// The benchmark's trajectories: a 3D kooshball with the paper's M = 284,592 scaled by
// (N/128)^3, or 2D golden-angle radial with N pi/2 spokes of 2N samples (Nyquist); |phi|^2 = 1.
Trajectory timingTrajectory(const Grid& g) {
    if (g.dims == 2) return goldenAngleRadial2D(g.n[0], int(std::lround(g.n[0] * 1.5708)), 2 * g.n[0]);
    const double f = double(g.n[0]) / 128.0;
    const double m = 284592 * f * f * f;
    const int readout = std::max(8, int(std::lround(112 * f)));
    Trajectory t = radial3D(g.n[0], int(std::ceil(m / readout)), readout);
    t.k.resize(3 * std::size_t(std::llround(m)));
    return t;
}

// Q's spectrum and F^H d on the CPU at each oversampling and tolerance: seconds (wall, CPU) and
// relative error against a float64 run at sigma 2, 1e-9 (grids up to 64^3; larger take GBs).
void timeQAndAdjoint(const Grid& g) {
    const Trajectory t = timingTrajectory(g);
    const std::vector<double> w(t.samples(), 1.0);
    std::vector<C> c(t.samples());
    for (std::size_t m = 0; m < c.size(); ++m) c[m] = C(float(std::cos(0.3 * double(m))), float(std::sin(0.7 * double(m))));
    const bool reference = g.voxels() <= std::size_t(64 * 64 * 64);
    ComplexArray q_ref, a_ref;
    if (reference) {
        const SpreadKernel k = SpreadKernel::forTolerance(1e-9, 2.0);
        q_ref = qFromToeplitzSpectrum(g, toeplitzSpectrum<double>(t, w, g, k));
        const std::vector<cdouble> cd(c.begin(), c.end());
        a_ref.resize(g.voxels());
        NufftPlan<double>(t, SampleGrid::image(g), k).adjoint(cd.data(), a_ref.data());
    }
    auto error = [](const auto& a, const ComplexArray& ref) {
        double num = 0, den = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
            num += std::norm(cdouble(a[i]) - ref[i]);
            den += std::norm(ref[i]);
        }
        return std::sqrt(num / den);
    };
    for (double sigma : {2.0, 1.5, 1.25})
        for (double tol : {1e-3, 1e-4, 1e-5, 1e-6}) {
            const SpreadKernel k = SpreadKernel::forTolerance(tol, sigma);
            std::vector<float> spectrum;
            std::vector<C> image(g.voxels());
            // Best of two (the first also plans the FFTs: measured once per machine and size).
            double q_wall = 1e30, q_cpu = 1e30, a_wall = 1e30, a_cpu = 1e30;
            for (int r = 0; r < 2; ++r) {
                double c0 = cpuSeconds();
                auto t0 = Clock::now();
                spectrum = toeplitzSpectrum<float>(t, w, g, k);
                q_wall = std::min(q_wall, since(t0));
                q_cpu = std::min(q_cpu, cpuSeconds() - c0);
                c0 = cpuSeconds();
                t0 = Clock::now();
                NufftPlan<float>(t, SampleGrid::image(g), k).adjoint(c.data(), image.data());
                a_wall = std::min(a_wall, since(t0));
                a_cpu = std::min(a_cpu, cpuSeconds() - c0);
            }
            char qe[32] = "-", ae[32] = "-";
            if (reference) {
                std::snprintf(qe, sizeof qe, "%.1e", error(qFromToeplitzSpectrum(g, spectrum), q_ref));
                std::snprintf(ae, sizeof ae, "%.1e", error(image, a_ref));
            }
            std::printf("| %s | %zu | %.2f | %.0e | %d | %s | %s | %s | %s |\n", g.describe().c_str(), t.samples(), sigma, tol, k.width,
                        fmt("%.3f / %.3f", q_wall, q_cpu).c_str(), qe, fmt("%.3f / %.3f", a_wall, a_cpu).c_str(), ae);
            std::fflush(stdout);
        }
}

}  // namespace

void runToeplitzTiming(const std::string& grids, int repetitions) {
    const std::string folder = fftw::wisdomFolder();
    std::printf("CPU Toeplitz product, float32, %d threads; FFTW plans %s\n", cpuThreads(),
                folder.empty() ? "by estimate (RECONSTUDIO_FFTW_WISDOM=0)" : ("measured, wisdom in " + folder).c_str());
    std::printf("per product of %d: best wall ms / median CPU ms (the process's user + system time); planning: seconds\n\n",
                repetitions);
    std::printf("| grid | full FFTs | pruned, fused | pruned, unfused (wide tiles) | full / pruned fused: wall, CPU | planning: full, pruned fused |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    std::stringstream ss(grids);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const Grid g = parseGrid(item);
        const Grid big = g.doubled();
        // The product takes a real spectrum (Q is Hermitian); the earlier one, a complex spectrum.
        std::vector<float> spectrum(big.voxels());
        std::vector<C> x(g.voxels()), y(g.voxels());
        for (std::size_t i = 0; i < spectrum.size(); ++i) spectrum[i] = float(std::cos(0.1 * double(i))) / float(big.voxels());
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = C(float(i % 17), float(i % 5));
        std::size_t slab = 1;
        for (int a = 0; a + 1 < g.dims; ++a) slab *= std::size_t(big.n[a]);
        const int wide = int(std::max<std::size_t>(1, slab / std::size_t(std::max(1, cpuThreads()))));

        Timing full, fused, unfused;
        auto t0 = Clock::now();
        FullProduct plain(g, std::vector<C>(spectrum.begin(), spectrum.end()));
        full.plan = since(t0);
        t0 = Clock::now();
        PaddedConvolution<float> pruned(g, spectrum);
        fused.plan = since(t0);
        PaddedConvolution<float> pruned_wide(g, spectrum, wide);
        const std::vector<std::pair<Timing*, std::function<void()>>> variants{
            {&full, [&] { plain.apply(x.data(), y.data()); }},
            {&fused, [&] { pruned.apply(x.data(), y.data()); }},
            {&unfused, [&] { pruned_wide.apply(x.data(), y.data()); }}};
        for (auto& v : variants) v.second();  // warm-up: pages touched, caches filled
        // Interleaved, so that a load change on a shared machine hits every variant alike.
        for (int r = 0; r < repetitions; ++r)
            for (auto& v : variants) {
                const double c0 = cpuSeconds();
                t0 = Clock::now();
                v.second();
                v.first->products.push_back(1e3 * since(t0));
                v.first->cpu.push_back(1e3 * (cpuSeconds() - c0));
            }
        auto cell = [](const Timing& t) { return fmt("%.2f / %.1f", t.best(), Timing::median(t.cpu)); };
        std::printf("| %s | %s | %s | %s | %.2f, %.2f | %.2f, %.2f |\n", g.describe().c_str(), cell(full).c_str(),
                    cell(fused).c_str(), cell(unfused).c_str(), full.best() / fused.best(),
                    Timing::median(full.cpu) / Timing::median(fused.cpu), full.plan, fused.plan);
        std::fflush(stdout);
    }

    std::printf("\nQ's real spectrum (spread, pruned real FFT, c2r) and F^H d (pruned type-1), float32: best of two, wall / CPU seconds,\n"
                "relative error against float64 at sigma 2, 1e-9 (grids up to 64^3)\n\n");
    std::printf("| grid | M | sigma | tolerance | W | Q s | Q error | F^H d s | F^H d error |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    std::stringstream again(grids);
    while (std::getline(again, item, ',')) timeQAndAdjoint(parseGrid(item));
}

}  // namespace recon::cli
