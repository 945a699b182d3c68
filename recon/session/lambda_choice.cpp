// lambda chosen for the user (ReconstructionSession::suggestLambda) and the noise estimate it
// rests on. The rules and their calibration: docs/CONVENTIONS.md, "lambda chosen for the user".
#include <algorithm>
#include <cmath>
#include <sstream>

#include "recon/core/errors.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon {

NoiseEstimate estimateNoise(const Dataset& d) {
    NoiseEstimate e;
    if (!d.noise.empty()) {
        // A noise scan: coil 0's samples, the mean of |n|^2.
        const std::size_t per_coil = d.noise.size() / std::size_t(std::max(1, d.coils));
        double sum = 0;
        for (std::size_t i = 0; i < per_coil; ++i) sum += std::norm(d.noise[i]);
        e.sigma = per_coil > 0 ? std::sqrt(sum / double(per_coil)) : 0.0;
        e.source = "the noise scan";
        e.samples = per_coil;
        return e;
    }
    // The outer k-space: beyond 0.8 of the largest |k| the signal of a compact object has decayed,
    // and what remains is mostly noise. |n|^2 of complex Gaussian noise is exponential with mean
    // sigma^2 and median sigma^2 ln 2; the median ignores the few samples where signal remains.
    const std::size_t m = d.samples();
    double kmax = 0;
    std::vector<double> radius(m);
    for (std::size_t i = 0; i < m; ++i) {
        radius[i] = std::sqrt(d.trajectory.kx(i) * d.trajectory.kx(i) + d.trajectory.ky(i) * d.trajectory.ky(i) +
                              d.trajectory.kz(i) * d.trajectory.kz(i));
        kmax = std::max(kmax, radius[i]);
    }
    std::vector<double> power;
    for (std::size_t i = 0; i < m; ++i)
        if (radius[i] >= 0.8 * kmax) power.push_back(std::norm(d.coil(0)[i]));
    if (power.size() < 16) {
        e.source = "nothing (fewer than 16 samples in the outer k-space)";
        return e;
    }
    const auto mid = power.begin() + std::ptrdiff_t(power.size() / 2);
    std::nth_element(power.begin(), mid, power.end());
    e.sigma = std::sqrt(*mid / std::log(2.0));
    e.source = "the outer k-space (|k| >= 0.8 k_max)";
    e.samples = power.size();
    return e;
}

}  // namespace recon
