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

namespace recon {

double midBandDensity(const Dataset& d) {
    // Samples in the shell 0.4..0.6 k_max per unit of k-space area (2D) or volume (3D), against the
    // mean density M / N^d. Both F^H F's eigenvalue there (N^d times the density) and s (M) count
    // the same samples, so the ratio needs no basis function.
    const std::size_t m = d.samples();
    std::vector<double> radius(m);
    double kmax = 0;
    for (std::size_t i = 0; i < m; ++i) {
        radius[i] = std::sqrt(d.trajectory.kx(i) * d.trajectory.kx(i) + d.trajectory.ky(i) * d.trajectory.ky(i) +
                              d.trajectory.kz(i) * d.trajectory.kz(i));
        kmax = std::max(kmax, radius[i]);
    }
    const double r0 = 0.4 * kmax, r1 = 0.6 * kmax;
    std::size_t inside = 0;
    for (double r : radius) inside += r >= r0 && r < r1;
    const double pi = std::acos(-1.0);
    const double shell = d.grid.dims == 3 ? 4.0 / 3.0 * pi * (r1 * r1 * r1 - r0 * r0 * r0) : pi * (r1 * r1 - r0 * r0);
    if (m == 0 || inside == 0 || !(shell > 0)) return 1.0;  // nothing there to measure: the plain rule
    return (double(inside) / shell) / (double(m) / double(d.grid.voxels()));
}

namespace {

// The sparse priors' rule, lambda = kappa m r: m the image's magnitude, r = midBandDensity, kappa per
// prior. lambda s is a threshold on F^H F's scale, but the prior acts at the mid and high frequencies,
// where F^H F's eigenvalue is r s, not s; without r a kooshball (r = 2.5) got half the image-domain
// threshold of 2D spokes (r = 4/pi) and 3D came out 1-2 dB below the sweep's best (docs/SPARSE.md).
// kappa was fitted once to 7-value sweeps on the 2D demo cases (200 iterations), not per data set:
// the fit without r (TV 0.1, wavelets 0.2, anatomical TV 1) divided by 2D spokes' r = 4/pi, so 2D
// radial data get the lambda they had. The noise does not enter: at 30 dB it moved no 2D case's best
// lambda, and the outer k-space cannot tell it from the phantoms' own high frequencies there
// (estimateNoise: 9.5 noisy vs 7.4 noiseless on radial-2d, true 6.4).
double sparseKappa(RegularizerKind k, int dims) {
    switch (k) {
        case RegularizerKind::TotalVariation: return 0.08;
        // On an orthonormal wavelet's finest level an edge of contrast c gives coefficients of
        // c 2^(d/2 - 1) (a 2^d block split in half), noise the same in 2D and 3D: the threshold
        // follows the edges' coefficients.
        case RegularizerKind::Wavelet: return 0.16 * std::pow(2.0, dims / 2.0 - 1.0);
        // Differences across the reference's edges weigh 0.05: the prior tolerates a larger lambda
        // (the default of defaultSparseLambda, not swept here).
        case RegularizerKind::AnatomicalTotalVariation: return 0.8;
        default: throw InputError("'" + toString(k) + "' is not a sparse prior");
    }
}

}  // namespace

LambdaChoice ReconstructionSession::suggestLambda(const SolveOptions& opts, Monitor& monitor) {
    const Dataset& d = dataset();
    const RegularizerKind kind = opts.priors.empty() ? opts.regularizer : opts.priors.front().kind;
    LambdaChoice c;
    c.noise = estimateNoise(d);
    const double s = lambdaScale();
    if (!(s > 0)) throw InputError("lambda auto: s = Q(0) is zero (no samples)");
    const FourierMethod method = resolve(opts.method);
    std::ostringstream why;
    why.precision(3);

    if (isSparse(kind)) {
        // m: the largest |x| after 10 CG iterations on F^H F x = F^H d (no prior), coil 0. Ten
        // iterations resolve the image's magnitude but not yet its noise or the undersampling's streaks.
        LinearOperatorPtr fourier = fourierOperator(method, monitor.progress(Phase::ToeplitzKernel));
        std::shared_ptr<const Vector> fhd = adjointData(0, method, monitor.progress(Phase::AdjointData));
        double dn = 0;
        for (std::size_t i = 0; i < d.samples(); ++i) dn += std::norm(d.coil(0)[i]);
        NormalEquationsCg cg({{"data", 1.0, fourier}}, *fhd, dn);
        for (int it = 0; it < 10 && cg.step(); ++it)
            if (monitor.cancelRequested()) throw Cancelled();
        ComplexArray x;
        cg.image(x);
        for (const cdouble& v : x) c.image_scale = std::max(c.image_scale, std::abs(v));
        if (!(c.image_scale > 0)) throw InputError("lambda auto: the image is zero (no signal in the data)");
        const double kappa = sparseKappa(kind, d.grid.dims);
        c.band_density = midBandDensity(d);
        c.lambda = kappa * c.image_scale * c.band_density;
        why << toString(kind) << ": lambda = " << kappa << " x m x r, m = " << c.image_scale
            << " (the largest |x| after 10 CG iterations without a prior), r = " << c.band_density
            << " (the sampling density at k_max/2 over the mean)";
        c.rule = why.str();
        return c;
    }

    // The discrepancy principle (Morozov): the largest lambda whose residual ||F x - d||^2 reaches
    // the noise's M sigma^2. Along a path of lambdas, each 4x below the last, warm-started from the
    // previous solution; the crossing is interpolated on log lambda vs log residual.
    if (!(c.noise.sigma > 0))
        throw InputError("lambda auto for the " + toString(kind) + " prior needs the data's noise level, and there is no estimate: " +
                         c.noise.source);
    c.target = double(d.samples()) * c.noise.sigma * c.noise.sigma;
    SolveOptions path = opts;
    path.priors.clear();
    path.regularizer = kind;
    path.snapshot_every = 0;
    path.tolerance = 0;
    CallbackMonitor quiet({}, monitor.cancelFlag());
    const int steps = 12;
    double lambda = 1000;
    for (int j = 0; j < steps; ++j, lambda /= 4) {
        path.lambda = lambda;
        path.warm_start = j > 0;
        path.iterations = j == 0 ? 20 : 10;
        const SolveResult r = solve(path, quiet);
        if (r.cancelled) throw Cancelled();
        const double residual = r.history.empty() ? 0.0 : r.history.back().data_term;
        c.curve.emplace_back(lambda, residual);
        monitor.phase(Phase::Iterating, double(j + 1) / steps);
        if (residual <= c.target) {
            if (j == 0) {
                c.lambda = lambda;
            } else {
                const auto [l0, r0] = c.curve[c.curve.size() - 2];
                const double t = (std::log(c.target) - std::log(r0)) / (std::log(residual) - std::log(r0));
                c.lambda = std::exp(std::log(l0) + t * (std::log(lambda) - std::log(l0)));
            }
            break;
        }
        c.lambda = lambda;  // not reached yet: the smallest so far
    }
    why << toString(kind) << ": the discrepancy principle, ||F x - d||^2 = M sigma^2 = " << c.target << " (M = " << d.samples()
        << ", sigma = " << c.noise.sigma << " from " << c.noise.source << ")";
    if (c.curve.back().second > c.target) why << "; not reached down to lambda " << c.curve.back().first << ", which it takes";
    c.rule = why.str();
    return c;
}

}  // namespace recon
