#include "recon/operators/direct_sums.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "recon/core/conventions.hpp"

namespace recon {
namespace {

// Per-axis phase factors exp(sign i 2 pi k x_j) for j = 0..size-1.
template <class T>
void axisPhases(double k, const SampleGrid& g, int axis, int first, int count, double sign, T* re, T* im) {
    for (int j = 0; j < count; ++j) {
        double x = (first + j - g.size[axis] / 2) * g.spacing[axis];
        double ph = sign * 2 * kPi * k * x;
        re[j] = T(std::cos(ph));
        im[j] = T(std::sin(ph));
    }
}

}  // namespace

template <class T>
void directAdjointSum(const Trajectory& t, const std::complex<T>* c, const SampleGrid& g, std::complex<T>* out,
                      const Progress& progress) {
    const int nx = g.size[0], ny = g.size[1], nz = g.size[2];
    const std::size_t M = t.samples();
    // Work items: blocks of up to kRows rows (fixed y range within one z plane).
    constexpr int kRows = 32;
    const int yblocks = (ny + kRows - 1) / kRows;
    const int items = yblocks * nz;
    std::atomic<int> done{0};
    std::atomic<bool> stop{false};
#pragma omp parallel
    {
        std::vector<T> exr(nx), exi(nx), eyr(kRows), eyi(kRows), accr(std::size_t(kRows) * nx), acci(std::size_t(kRows) * nx);
#pragma omp for schedule(dynamic, 1)
        for (int item = 0; item < items; ++item) {
            if (stop.load(std::memory_order_relaxed)) continue;
            const int z = item / yblocks, y0 = (item % yblocks) * kRows, rows = std::min(kRows, ny - y0);
            std::fill(accr.begin(), accr.end(), T(0));
            std::fill(acci.begin(), acci.end(), T(0));
            const double zpos = (z - nz / 2) * g.spacing[2];
            for (std::size_t m = 0; m < M; ++m) {
                axisPhases(t.kx(m), g, 0, 0, nx, 1.0, exr.data(), exi.data());
                axisPhases(t.ky(m), g, 1, y0, rows, 1.0, eyr.data(), eyi.data());
                const double phz = 2 * kPi * t.kz(m) * zpos;
                const std::complex<T> a = c[m] * std::complex<T>(T(std::cos(phz)), T(std::sin(phz)));
                for (int r = 0; r < rows; ++r) {
                    const T br = a.real() * eyr[r] - a.imag() * eyi[r];
                    const T bi = a.real() * eyi[r] + a.imag() * eyr[r];
                    T* orr = &accr[std::size_t(r) * nx];
                    T* oii = &acci[std::size_t(r) * nx];
#pragma omp simd
                    for (int x = 0; x < nx; ++x) {
                        orr[x] += br * exr[x] - bi * exi[x];
                        oii[x] += br * exi[x] + bi * exr[x];
                    }
                }
            }
            for (int r = 0; r < rows; ++r)
                for (int x = 0; x < nx; ++x) {
                    std::size_t i = r * std::size_t(nx) + x;
                    out[(std::size_t(z) * ny + y0 + r) * nx + x] = std::complex<T>(accr[i], acci[i]);
                }
            int d = ++done;
            if (omp_get_thread_num() == 0) {
                try {
                    progress.update(double(d) / items);
                } catch (const Cancelled&) {
                    stop = true;
                }
            } else if (progress.cancelled()) {
                stop = true;
            }
        }
    }
    progress.check();
}

template <class T>
void directForwardSum(const Trajectory& t, const std::complex<T>* f, const SampleGrid& g, std::complex<T>* out,
                      const Progress& progress) {
    const int nx = g.size[0], ny = g.size[1], nz = g.size[2];
    const std::int64_t M = std::int64_t(t.samples());
    // Samples in blocks so each sweep over the image serves kBlock samples.
    constexpr int kBlock = 16;
    const std::int64_t blocks = (M + kBlock - 1) / kBlock;
    std::atomic<std::int64_t> done{0};
    std::atomic<bool> stop{false};
#pragma omp parallel
    {
        std::vector<T> exr(std::size_t(kBlock) * nx), exi(std::size_t(kBlock) * nx);
        std::vector<std::complex<double>> eyz(std::size_t(kBlock) * ny * nz);
#pragma omp for schedule(dynamic, 4)
        for (std::int64_t b = 0; b < blocks; ++b) {
            if (stop.load(std::memory_order_relaxed)) continue;
            const std::int64_t m0 = b * kBlock;
            const int count = int(std::min<std::int64_t>(kBlock, M - m0));
            for (int s = 0; s < count; ++s) {
                const std::size_t m = std::size_t(m0 + s);
                axisPhases(t.kx(m), g, 0, 0, nx, -1.0, &exr[std::size_t(s) * nx], &exi[std::size_t(s) * nx]);
                for (int z = 0; z < nz; ++z)
                    for (int y = 0; y < ny; ++y) {
                        double ph = -2 * kPi * (t.ky(m) * (y - ny / 2) * g.spacing[1] + t.kz(m) * (z - nz / 2) * g.spacing[2]);
                        eyz[(std::size_t(s) * nz + z) * ny + y] = std::polar(1.0, ph);
                    }
            }
            double accr[kBlock] = {}, acci[kBlock] = {};
            for (int z = 0; z < nz; ++z)
                for (int y = 0; y < ny; ++y) {
                    const std::complex<T>* row = f + (std::size_t(z) * ny + y) * nx;
                    for (int s = 0; s < count; ++s) {
                        const T* er = &exr[std::size_t(s) * nx];
                        const T* ei = &exi[std::size_t(s) * nx];
                        T rr = 0, ri = 0;
                        for (int x = 0; x < nx; ++x) {
                            rr += row[x].real() * er[x] - row[x].imag() * ei[x];
                            ri += row[x].real() * ei[x] + row[x].imag() * er[x];
                        }
                        const auto e = eyz[(std::size_t(s) * nz + z) * ny + y];
                        accr[s] += rr * e.real() - ri * e.imag();
                        acci[s] += rr * e.imag() + ri * e.real();
                    }
                }
            for (int s = 0; s < count; ++s) out[m0 + s] = std::complex<T>(T(accr[s]), T(acci[s]));
            std::int64_t d = ++done;
            if (omp_get_thread_num() == 0) {
                try {
                    progress.update(double(d) / blocks);
                } catch (const Cancelled&) {
                    stop = true;
                }
            } else if (progress.cancelled()) {
                stop = true;
            }
        }
    }
    progress.check();
}

template void directAdjointSum<float>(const Trajectory&, const cfloat*, const SampleGrid&, cfloat*, const Progress&);
template void directAdjointSum<double>(const Trajectory&, const cdouble*, const SampleGrid&, cdouble*, const Progress&);
template void directForwardSum<float>(const Trajectory&, const cfloat*, const SampleGrid&, cfloat*, const Progress&);
template void directForwardSum<double>(const Trajectory&, const cdouble*, const SampleGrid&, cdouble*, const Progress&);

}  // namespace recon
