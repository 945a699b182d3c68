#include "recon/ct/fdk.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "recon/nufft/fft.hpp"

namespace recon::ct {
namespace {

constexpr double kPi = std::numbers::pi;

double angularSpan(const ConeBeamGeometry& beam) {
    return beam.angles_rad.back() - beam.angles_rad.front();
}

// One angular step of a full scan (the views' mean spacing, the last step closing the turn).
double fullScanStep(const ConeBeamGeometry& beam) { return 2 * kPi / double(beam.views()); }

// The row filter: the spatial band-limited ramp h (Kak & Slaney eq. 3.61) at spacing tau
// (the pixel pitch at the isocentre), zero-padded to `size`, transformed, times tau and
// the window. Real and even, so its transform is real.
std::vector<double> rampFilter(int columns, int size, double tau, RampWindow window) {
    std::vector<std::complex<double>> h(size, 0.0);
    h[0] = 1.0 / (4 * tau * tau);
    for (int n = 1; n < columns; ++n) {
        const double value = n % 2 ? -1.0 / (n * n * kPi * kPi * tau * tau) : 0.0;
        h[n] = value;
        h[size - n] = value;
    }
    FftPlan<double>({size, 1, 1}, 1, FftDirection::Forward).execute(h.data());
    std::vector<double> filter(size);
    for (int k = 0; k < size; ++k) {
        const double r = 2.0 * std::min(k, size - k) / size;
        filter[k] = h[k].real() * tau * rampWindow(window, r);
    }
    return filter;
}

}  // namespace

std::string toString(RampWindow w) {
    switch (w) {
        case RampWindow::RamLak: return "ram-lak";
        case RampWindow::SheppLogan: return "shepp-logan";
        case RampWindow::Cosine: return "cosine";
        case RampWindow::Hamming: return "hamming";
        case RampWindow::Hann: return "hann";
    }
    return "?";
}

RampWindow parseRampWindow(const std::string& s) {
    for (RampWindow w : {RampWindow::RamLak, RampWindow::SheppLogan, RampWindow::Cosine, RampWindow::Hamming, RampWindow::Hann})
        if (s == toString(w)) return w;
    throw InputError("unknown ramp filter window '" + s + "' (ram-lak, shepp-logan, cosine, hamming, hann)");
}

double rampWindow(RampWindow w, double r) {
    switch (w) {
        case RampWindow::RamLak: return 1.0;
        case RampWindow::SheppLogan: return r == 0 ? 1.0 : std::sin(kPi * r / 2) / (kPi * r / 2);
        case RampWindow::Cosine: return std::cos(kPi * r / 2);
        case RampWindow::Hamming: return 0.54 + 0.46 * std::cos(kPi * r);
        case RampWindow::Hann: return 0.5 + 0.5 * std::cos(kPi * r);
    }
    return 1.0;
}

bool fullScan(const ConeBeamGeometry& beam) {
    // Equally spaced views over a turn span 2π (1 − 1/N); allow a little slack for rounding.
    return beam.views() > 1 && angularSpan(beam) + fullScanStep(beam) >= 2 * kPi * (1 - 1e-6);
}

double parkerWeight(const ConeBeamGeometry& beam, std::size_t view, double u) {
    const double delta = 0.5 * (angularSpan(beam) - kPi);
    const double beta = beam.angles_rad[view] - beam.angles_rad.front();
    // Our u runs along the source's motion, so a ray's conjugate is at β + π − 2·atan(u/D_sd):
    // Parker's fan angle (conjugate at β + π + 2γ) is γ = −atan(u/D_sd).
    const double gamma = -std::atan(u / beam.source_to_detector_mm);
    auto s2 = [](double x) { return std::sin(x) * std::sin(x); };
    if (beta < 0) return 0.0;
    if (beta <= 2 * (delta - gamma)) return s2(kPi / 4 * beta / (delta - gamma));
    if (beta <= kPi - 2 * gamma) return 1.0;
    if (beta <= kPi + 2 * delta) return s2(kPi / 4 * (kPi + 2 * delta - beta) / (delta + gamma));
    return 0.0;
}

std::vector<double> fdk(const CtGeometry& geometry, const std::vector<double>& projections, const FdkOptions& options,
                        const Progress& progress) {
    validate(geometry);
    const ConeBeamGeometry& beam = geometry.beam;
    const VolumeGeometry& vol = geometry.volume;
    if (projections.size() != beam.samples())
        throw InputError("FDK: " + std::to_string(projections.size()) + " projection values for a geometry of " +
                         std::to_string(beam.samples()) + " samples");
    if (beam.views() < 2) throw InputError("FDK: needs at least 2 views");
    for (std::size_t v = 1; v < beam.views(); ++v)
        if (!(beam.angles_rad[v] > beam.angles_rad[v - 1]))
            throw InputError("FDK: the view angles must increase (view " + std::to_string(v) + ")");
    const bool full = fullScan(beam);
    if (!full && angularSpan(beam) < kPi + 2 * fanHalfAngle(beam) - 1e-9)
        throw InputError("FDK: the views span " + formatNumber(angularSpan(beam)) +
                         " rad, less than a short scan's π + 2γ = " + formatNumber(kPi + 2 * fanHalfAngle(beam)) + " rad");
    if (options.threads < 0) throw InputError("FDK: threads must be >= 0 (0 = all cores)");

    const double dso = beam.source_to_isocentre_mm, dsd = beam.source_to_detector_mm;
    const int nu = beam.detector_columns, nv = beam.detector_rows;
    const bool planar = beam.fanBeam() && vol.size[2] == 1;
    int size = 1;
    while (size < 2 * nu) size *= 2;
    const std::vector<double> filter = rampFilter(nu, size, beam.pixel_u_mm * dso / dsd, options.window);
    const FftPlan<double> forward({size, 1, 1}, 1, FftDirection::Forward);
    const FftPlan<double> backward({size, 1, 1}, 1, FftDirection::Backward);
    const double step = full ? 0.5 * fullScanStep(beam) : angularSpan(beam) / double(beam.views() - 1);

    // Views go in blocks: the block's views are filtered with threads over views (each its own
    // buffer; FFTW's execute is thread-safe and, inside the parallel region, single-threaded: a
    // row is far too short to split), then backprojected with threads over voxel rows and the
    // block's views inside, so the threads meet twice per block. A single-threaded filter between
    // the parallel backprojections had the idle thread spin through it (OpenMP's active wait):
    // with 2 threads on a loaded machine ten times the CPU time of one thread (docs/CT_PEERS.md).
    // Progress per view filtered; cancel between views (thrown after the parallel loop).
    constexpr std::size_t kBlock = 32;
    const std::size_t per_view = std::size_t(nu) * nv;
    std::vector<double> volume(vol.voxels(), 0.0), filtered(kBlock * per_view);
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    std::vector<std::vector<std::complex<double>>> buffers(static_cast<std::size_t>(threads),
                                                           std::vector<std::complex<double>>(static_cast<std::size_t>(size)));
    const int nx = vol.size[0], ny = vol.size[1], nz = vol.size[2];
    const double u_first = beam.pixelU(0), v_first = beam.pixelV(0);
    std::size_t views_filtered = 0;
    for (std::size_t block = 0; block < beam.views(); block += kBlock) {
        const std::size_t count = std::min(kBlock, beam.views() - block);
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (std::size_t b = 0; b < count; ++b) {
            if (progress.cancelled()) continue;  // cancel takes effect between views
            std::vector<std::complex<double>>& buffer = buffers[std::size_t(omp_get_thread_num())];
            const std::size_t view = block + b;
            const double* p = projections.data() + view * per_view;
            double* q = filtered.data() + b * per_view;
            // Weighted rows, two at a time (one as the real part, one as the imaginary): the
            // filter is real and even, so the two filtered rows come back apart.
            auto weighted = [&](int iv, int iu) {
                const double u = beam.pixelU(iu), v = planar ? 0.0 : beam.pixelV(iv);
                double w = dsd / std::sqrt(dsd * dsd + u * u + v * v);
                if (!full) w *= parkerWeight(beam, view, u);
                return w * p[std::size_t(iv) * nu + iu];
            };
            for (int iv = 0; iv < nv; iv += 2) {
                const bool pair = iv + 1 < nv;
                std::fill(buffer.begin(), buffer.end(), 0.0);
                for (int iu = 0; iu < nu; ++iu) buffer[iu] = {weighted(iv, iu), pair ? weighted(iv + 1, iu) : 0.0};
                forward.execute(buffer.data());
                for (int k = 0; k < size; ++k) buffer[k] *= filter[k] / size;
                backward.execute(buffer.data());
                for (int iu = 0; iu < nu; ++iu) {
                    q[std::size_t(iv) * nu + iu] = buffer[iu].real();
                    if (pair) q[std::size_t(iv + 1) * nu + iu] = buffer[iu].imag();
                }
            }
#pragma omp critical(fdk_progress)
            if (progress.report && !progress.cancelled()) progress.report(double(++views_filtered) / beam.views());
        }
        progress.check();
        // Voxel-driven backprojection of the block.
#pragma omp parallel for schedule(static) collapse(2) num_threads(threads)
        for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j) {
                const double y = vol.centre(1, j), z = vol.centre(2, k);
                double* row = volume.data() + (std::size_t(k) * ny + j) * nx;
                for (std::size_t b = 0; b < count; ++b) {
                    const double c = std::cos(beam.angles_rad[block + b]), s = std::sin(beam.angles_rad[block + b]);
                    const double* q0_view = filtered.data() + b * per_view;
                    for (int i = 0; i < nx; ++i) {
                        const double x = vol.centre(0, i);
                        const double distance = dso - (x * c + y * s);  // L, along the central ray
                        const double magnification = dsd / distance;
                        const double fu = ((-x * s + y * c) * magnification - u_first) / beam.pixel_u_mm;
                        if (fu < 0 || fu > nu - 1) continue;
                        const int iu = std::min(int(fu), std::max(0, nu - 2));
                        const double au = fu - iu;
                        double value;
                        if (planar || nv == 1) {
                            // One row: a slice's voxels see it only within the row's height.
                            if (!planar && std::abs(z * magnification - v_first) > 0.5 * beam.pixel_v_mm) continue;
                            value = nu == 1 ? q0_view[0] : (1 - au) * q0_view[iu] + au * q0_view[iu + 1];
                        } else {
                            const double fv = (z * magnification - v_first) / beam.pixel_v_mm;
                            if (fv < 0 || fv > nv - 1) continue;
                            const int iv = std::min(int(fv), nv - 2);
                            const double av = fv - iv;
                            const double* q0 = q0_view + std::size_t(iv) * nu;
                            const double* q1 = q0 + nu;
                            value = (1 - av) * ((1 - au) * q0[iu] + au * q0[iu + 1]) +
                                    av * ((1 - au) * q1[iu] + au * q1[iu + 1]);
                        }
                        const double w = dso / distance;
                        row[i] += step * w * w * value;
                    }
                }
            }
        progress.update(double(block + count) / beam.views());
    }
    return volume;
}

}  // namespace recon::ct
