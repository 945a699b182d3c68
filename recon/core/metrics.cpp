#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace recon {

cdouble optimalScale(const ComplexArray& image, const ComplexArray& truth) {
    if (image.size() != truth.size()) throw InputError("optimalScale: image and truth differ in size");
    cdouble num = 0;
    double den = 0;
    for (std::size_t i = 0; i < image.size(); ++i) {
        num += std::conj(image[i]) * truth[i];
        den += std::norm(image[i]);
    }
    return den > 0 ? num / den : cdouble(1.0);
}

TruthStats truthStats(const ComplexArray& truth) {
    TruthStats s;
    for (const auto& v : truth) {
        s.norm2 += std::norm(v);
        s.max_abs = std::max(s.max_abs, std::abs(v));
    }
    return s;
}

IterationRecord scalarRecord(int iteration, double residual, double data_term, double penalty_term, const TruthStats* truth,
                             double error_norm2, std::size_t voxels) {
    IterationRecord r;
    r.iteration = iteration;
    r.residual = iteration == 0 ? 1.0 : residual;
    r.data_term = data_term;
    r.penalty_term = penalty_term;
    if (truth) {
        const Quality q = qualityFromErrorNorm(error_norm2, truth->norm2, truth->max_abs, voxels);
        r.has_truth = true;
        r.error_percent = q.error_percent;
        r.psnr_db = q.psnr_db;
    }
    return r;
}

Quality qualityFromErrorNorm(double e2, double truth_norm2, double truth_max, std::size_t voxels) {
    Quality q;
    q.mse = e2 / double(voxels);
    q.error_percent = truth_norm2 > 0 ? 100.0 * std::sqrt(e2 / truth_norm2) : 0.0;
    q.psnr_db = q.mse > 0 ? 20.0 * std::log10(truth_max / std::sqrt(q.mse)) : std::numeric_limits<double>::infinity();
    return q;
}

Quality measureQuality(const ComplexArray& image, const ComplexArray& truth, bool rescale) {
    if (image.size() != truth.size()) throw InputError("measureQuality: image and truth differ in size");
    const cdouble a = rescale ? optimalScale(image, truth) : cdouble(1.0);
    double e2 = 0;
    for (std::size_t i = 0; i < image.size(); ++i) e2 += std::norm(a * image[i] - truth[i]);
    const TruthStats s = truthStats(truth);
    return qualityFromErrorNorm(e2, s.norm2, s.max_abs, image.size());
}

}  // namespace recon
