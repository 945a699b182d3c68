// lambda chosen for the user (ReconstructionSession::suggestLambda) and the noise estimate it
// rests on. The rules and their calibration: docs/CONVENTIONS.md, "lambda chosen for the user".
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon {

namespace {

// |k| of every sample, and the largest of them in `kmax` (the rules below work in fractions of it).
std::vector<double> sampleRadii(const Dataset& d, double& kmax) {
    std::vector<double> radius(d.samples());
    kmax = 0;
    for (std::size_t i = 0; i < radius.size(); ++i) {
        radius[i] = std::sqrt(d.trajectory.kx(i) * d.trajectory.kx(i) + d.trajectory.ky(i) * d.trajectory.ky(i) +
                              d.trajectory.kz(i) * d.trajectory.kz(i));
        kmax = std::max(kmax, radius[i]);
    }
    return radius;
}

}  // namespace

NoiseEstimate estimateNoise(const Dataset& d) {
    NoiseEstimate e;
    if (d.whitened_by_noise_samples > 0) {
        // Whitened by its noise scan (L^{-1} with L L^H the scan's covariance): unit noise in every coil.
        e.sigma = 1;
        e.source = "prewhitening by the noise scan (unit noise)";
        e.samples = d.whitened_by_noise_samples;
        return e;
    }
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
    const std::vector<double> radius = sampleRadii(d, kmax);
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

double midBandDensity(const Dataset& d, const std::vector<double>* weights) {
    // Samples (weighted: their weights) in the shell 0.4..0.6 k_max per unit of k-space area (2D) or
    // volume (3D), against the mean density M / N^d (sum w / N^d). Both F^H F's eigenvalue there
    // (N^d times the density) and s (M) count the same samples, so the ratio needs no basis function.
    const std::size_t m = d.samples();
    if (weights && weights->size() != m) throw InputError("midBandDensity: one weight per sample expected");
    double kmax = 0;
    const std::vector<double> radius = sampleRadii(d, kmax);
    const double r0 = 0.4 * kmax, r1 = 0.6 * kmax;
    double inside = 0, total = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double w = weights ? (*weights)[i] : 1.0;
        inside += radius[i] >= r0 && radius[i] < r1 ? w : 0.0;
        total += w;
    }
    const double pi = std::acos(-1.0);
    const double shell = d.grid.dims == 3 ? 4.0 / 3.0 * pi * (r1 * r1 * r1 - r0 * r0 * r0) : pi * (r1 * r1 - r0 * r0);
    if (m == 0 || !(inside > 0) || !(total > 0) || !(shell > 0)) return 1.0;  // nothing there to measure: the plain rule
    return (inside / shell) / (total / double(d.grid.voxels()));
}

double densityWeightedSparseLambda(double lambda, const Dataset& d, const std::vector<double>& weights) {
    return lambda * midBandDensity(d, &weights) / midBandDensity(d);
}

namespace {

// The sparse priors' rule, lambda = kappa m r: m the image's magnitude, r = midBandDensity, kappa per
// prior. lambda s is a threshold on F^H F's scale, but the prior acts at the mid and high frequencies,
// where F^H F's eigenvalue is r s, not s; without r a kooshball (r = 2.5) got half the image-domain
// threshold of 2D spokes (r = 4/pi) and 3D came out 1-2 dB below the sweep's best (docs/SPARSE.md).
// kappa was fitted once to 7-value sweeps on the 2D demo cases (200 iterations), not per data set:
// the fit without r (TV 0.1, wavelets 0.2, anatomical TV 1) divided by 2D spokes' r = 4/pi, so 2D
// radial data get the lambda they had. This is the signal's rule; the noise sets a floor under it
// (sparseNoiseFactor, whiteNoise).
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

// The noise's sigma for the sparse rule: a noise scan's, else the white part of the outer k-space's
// power. The outer k-space alone (estimateNoise) counts the phantoms' own edges as noise (an upper
// bound: 6 on noiseless small-2d), which would raise lambda on noiseless data. An object's edges give a
// mean power that decays as |k|^-(d+1) (2D: |k|^-3, 3D: |k|^-4) and white noise a constant one, so the
// mean |d|^2 of 8 shells between 0.5 and 1 k_max is fitted by a |k|^-(d+1) + sigma^2 (least squares).
NoiseEstimate whiteNoise(const Dataset& d, const NoiseEstimate& scan_or_outer) {
    if (!d.noise.empty() || d.whitened_by_noise_samples > 0) return scan_or_outer;
    NoiseEstimate e;
    const std::size_t m = d.samples();
    double kmax = 0;
    const std::vector<double> radius = sampleRadii(d, kmax);
    if (!(kmax > 0)) {
        e.source = "nothing (every sample at k = 0)";
        return e;
    }
    constexpr int shells = 8;
    std::vector<double> power(shells, 0.0), at(shells, 0.0);
    std::vector<std::size_t> count(shells, 0);
    for (std::size_t i = 0; i < m; ++i) {
        const int b = int((radius[i] / kmax - 0.5) * 2 * shells);
        if (radius[i] < 0.5 * kmax || b < 0) continue;
        const int j = std::min(b, shells - 1);
        power[j] += std::norm(d.coil(0)[i]);
        at[j] += radius[i];
        ++count[j];
    }
    // Least squares for (a, sigma^2) on u = |k|^-(d+1) (normalised by k_max), y = the shell's mean power.
    double su = 0, sy = 0, suu = 0, suy = 0;
    int n = 0;
    for (int j = 0; j < shells; ++j) {
        if (count[j] < 8) continue;
        const double u = std::pow(at[j] / double(count[j]) / kmax, -double(d.grid.dims + 1));
        const double y = power[j] / double(count[j]);
        su += u, sy += y, suu += u * u, suy += u * y, ++n;
    }
    const double det = n * suu - su * su;
    if (n < 3 || !(det > 0)) {
        e.source = "nothing (fewer than 3 shells of 8 samples between 0.5 and 1 k_max)";
        return e;
    }
    const double noise_power = (suu * sy - su * suy) / det;
    e.sigma = std::sqrt(std::max(0.0, noise_power));
    e.source = "the outer k-space's white part (mean |d|^2 of 8 shells, 0.5..1 k_max, fitted by a |k|^-" +
               std::to_string(d.grid.dims + 1) + " + sigma^2)";
    e.samples = std::size_t(n);
    return e;
}

// The noise floor: lambda >= c sigma_img, c per prior. lambda s / 2 is the prox's threshold on the
// scale s of F^H F, and sigma_img the least-squares image's noise where the prior acts, so c = 2 sets
// that threshold at one sigma_img for TV; wavelets get twice TV's, as their kappa is twice TV's (2D).
// Fitted once on BART's noisy 128^2 and 256^2 radial data and spiral-2d-noisy (docs/SPARSE.md).
double sparseNoiseFactor(RegularizerKind k) { return k == RegularizerKind::Wavelet ? 4.0 : 2.0; }

}  // namespace

LambdaChoice ReconstructionSession::suggestLambda(const SolveOptions& opts, Monitor& monitor) {
    const Dataset& d = dataset();
    const RegularizerKind kind = opts.priors.empty() ? opts.regularizer : opts.priors.front().kind;
    LambdaChoice c;
    c.noise = estimateNoise(d);
    // SENSE with a sparse prior: its own s (the maps' energy in it) and its own least-squares image.
    const bool sense = isSparse(kind) && d.coils > 1 && opts.coil_combination == CoilCombination::Sense;
    const double s = sense ? senseLambdaScale(coilMaps(opts.coil_maps, monitor.progress(Phase::AdjointData))) : lambdaScale();
    if (!(s > 0)) throw InputError("lambda auto: s = Q(0) is zero (no samples)");
    const FourierMethod method = resolve(opts.method);
    std::ostringstream why;
    why.precision(3);

    if (isSparse(kind)) {
        // m: the largest |x| after 10 CG iterations on F^H F x = F^H d (no prior), coil 0 (SENSE:
        // E^H E x = E^H d). Ten iterations resolve the image's magnitude but not yet its noise or the
        // undersampling's streaks.
        // The uniform data term's m (the weighted lambda follows from it below, as for one coil).
        SolveOptions uniform = opts;
        uniform.weighting = DataWeighting::Uniform;
        std::optional<SenseSystem> system;
        if (sense) system = senseSystem(uniform, monitor);
        LinearOperatorPtr fourier = sense ? system->encoding : fourierOperator(method, monitor.progress(Phase::ToeplitzKernel));
        std::shared_ptr<const Vector> fhd = sense ? nullptr : adjointData(0, method, monitor.progress(Phase::AdjointData));
        double dn = sense ? system->data_norm2 : 0.0;
        if (!sense)
            for (std::size_t i = 0; i < d.samples(); ++i) dn += std::norm(d.coil(0)[i]);
        NormalEquationsCg cg({{"data", 1.0, fourier}}, sense ? system->rhs : *fhd, dn);
        for (int it = 0; it < 10 && cg.step(); ++it)
            if (monitor.cancelRequested()) throw Cancelled();
        ComplexArray x;
        cg.image(x);
        for (const cdouble& v : x) c.image_scale = std::max(c.image_scale, std::abs(v));
        if (!(c.image_scale > 0)) throw InputError("lambda auto: the image is zero (no signal in the data)");
        const double kappa = sparseKappa(kind, d.grid.dims);
        c.band_density = midBandDensity(d);
        c.signal_lambda = kappa * c.image_scale * c.band_density;
        // The noise: sigma_img = sigma / sqrt(r s), the least-squares image's noise at the mid band
        // (F^H F's eigenvalue there is r s). Trusted only where the white part is most of the outer
        // k-space's power (sigma_white >= 0.75 sigma_outer): below that the outer k-space is the
        // object's and the fit's constant can be its unresolved detail (noiseless small-2d: 0.66;
        // noisy cases 0.81-0.99, docs/SPARSE.md); then sigma_img = 0 and the signal's rule stands.
        const NoiseEstimate outer = c.noise;
        c.noise = whiteNoise(d, outer);
        const bool measurable = !d.noise.empty() || d.whitened_by_noise_samples > 0 || c.noise.sigma >= 0.75 * outer.sigma;
        c.image_noise = measurable ? c.noise.sigma / std::sqrt(c.band_density * s) : 0.0;
        c.noise_lambda = sparseNoiseFactor(kind) * c.image_noise;
        c.lambda = std::max(c.signal_lambda, c.noise_lambda);
        why << toString(kind) << ": lambda = max(" << kappa << " x m x r, " << sparseNoiseFactor(kind)
            << " x sigma_img) = max(" << c.signal_lambda << ", " << c.noise_lambda << ")";
        if (opts.weighting == DataWeighting::Density) {
            // The weighted data term: the same threshold where the prior acts (densityWeightedSparseLambda).
            const std::vector<double>& w = densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights));
            const double r_weighted = midBandDensity(d, &w);
            c.lambda = densityWeightedSparseLambda(c.lambda, d, w);
            why << " x r_D / r = " << c.lambda << " for the density-weighted data term (r_D = " << r_weighted
                << ", F^H D F's eigenvalue at k_max/2 over s_D)";
        }
        why << ", m = " << c.image_scale
            << " (the largest |x| after 10 CG iterations without a prior), r = " << c.band_density
            << " (the sampling density at k_max/2 over the mean), sigma_img = sigma / sqrt(r s) = " << c.image_noise
            << " (sigma = " << c.noise.sigma << " from " << c.noise.source << ", s = " << s;
        if (!measurable)
            why << "; not noise: below 0.75 x the outer k-space's " << outer.sigma << ", the object's own";
        why << ")";
        c.rule = why.str();
        return c;
    }

    // The discrepancy principle (Morozov): the largest lambda whose residual ||F x - d||^2 reaches
    // the noise's M sigma^2 (weighted data term: ||D^{1/2} (F x - d)||^2 and its sigma^2 sum w).
    // Along a path of lambdas, each 4x below the last, warm-started from the previous solution;
    // the crossing is interpolated on log lambda vs log residual.
    if (!(c.noise.sigma > 0))
        throw InputError("lambda auto for the " + toString(kind) + " prior needs the data's noise level, and there is no estimate: " +
                         c.noise.source);
    const bool weighted = opts.weighting == DataWeighting::Density;
    double noise_count = double(d.samples());  // E ||D^{1/2} n||^2 / sigma^2
    if (weighted) {
        noise_count = 0;
        for (double w : densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights))) noise_count += w;
    }
    c.target = noise_count * c.noise.sigma * c.noise.sigma;
    SolveOptions path = opts;
    path.priors.clear();
    path.regularizer = kind;
    path.snapshot_every = 0;
    path.tolerance = 0;
    path.lambda_change_to_cold_accuracy = false;  // each lambda its 10 steps: the path's residuals comparable
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
    if (weighted)
        why << toString(kind) << ": the discrepancy principle, ||D^{1/2} (F x - d)||^2 = sigma^2 sum w = " << c.target
            << " (sum w = " << noise_count << ", sigma = " << c.noise.sigma << " from " << c.noise.source << ")";
    else
        why << toString(kind) << ": the discrepancy principle, ||F x - d||^2 = M sigma^2 = " << c.target << " (M = " << d.samples()
            << ", sigma = " << c.noise.sigma << " from " << c.noise.source << ")";
    if (c.curve.back().second > c.target) why << "; not reached down to lambda " << c.curve.back().first << ", which it takes";
    c.rule = why.str();
    return c;
}

}  // namespace recon
