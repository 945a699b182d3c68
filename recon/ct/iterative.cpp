#include "recon/ct/iterative.hpp"

#include <cmath>
#include <numeric>

#include "recon/core/errors.hpp"
#include "recon/priors/priors.hpp"
#include "recon/solvers/admm.hpp"
#include "recon/solvers/normal_cg.hpp"

namespace recon::ct {

double defaultLambda(RegularizerKind prior) {
    switch (prior) {
        case RegularizerKind::Tikhonov: return 1e-3;
        case RegularizerKind::FiniteDifference: return 0.1;
        case RegularizerKind::TotalVariation: return 2e-4;  // 1/mm: about 1 % of water's attenuation
        default: break;
    }
    throw InputError("CT: the prior '" + toString(prior) + "' is not available (tikhonov, fd, tv)");
}

namespace {
// autoLambda's constants for TV (docs/CONVENTIONS.md, "Iterative"): λ = kNoiseFactor / sqrt(s n̄) + kFloor.
constexpr double kTvNoiseFactor = 0.25;
constexpr double kTvFloor = 5e-4;  // 1/mm
}  // namespace

double autoLambda(RegularizerKind prior, double scale, double mean_count) {
    if (prior != RegularizerKind::TotalVariation) return defaultLambda(prior);
    if (!(scale > 0) || !std::isfinite(scale))
        throw InputError("CT: automatic λ needs s > 0, got " + formatNumber(scale));
    const double noise = mean_count > 0 && std::isfinite(mean_count) ? 1.0 / std::sqrt(scale * mean_count) : 0.0;
    return kTvNoiseFactor * noise + kTvFloor;
}

Grid gridOf(const VolumeGeometry& volume) {
    Grid g = volume.size[2] > 1 ? Grid::make3D(volume.size[0], volume.size[1], volume.size[2])
                                : Grid::make2D(volume.size[0], volume.size[1]);
    for (int a = 0; a < 3; ++a) g.fov_mm[a] = volume.size[a] * volume.voxel_mm[a];
    return g;
}

struct IterativeSolve::Impl {
    std::shared_ptr<const Vector> rhs;
    std::unique_ptr<NormalEquationsCg> cg;
    std::unique_ptr<Admm> admm;
    RegularizerKind prior;
};

IterativeSolve::IterativeSolve(VectorSpace& space, LinearOperatorPtr projector, const VolumeGeometry& volume,
                               const std::vector<double>& projections, const std::vector<double>& weights,
                               double weighted_trace, const IterativeOptions& options)
    : impl_(new Impl) {
    if (projector->inSize() != volume.voxels() || projector->outSize() != projections.size())
        throw InputError("CT iterative: the projector maps " + std::to_string(projector->inSize()) + " -> " +
                         std::to_string(projector->outSize()) + " values, the data are " +
                         std::to_string(volume.voxels()) + " voxels and " + std::to_string(projections.size()) +
                         " projection values");
    if (!weights.empty() && weights.size() != projections.size())
        throw InputError("CT iterative: " + std::to_string(weights.size()) + " weights for " +
                         std::to_string(projections.size()) + " projection values");
    if (!(options.lambda >= 0) || !std::isfinite(options.lambda))
        throw InputError("CT iterative: lambda must be a finite number >= 0, got " + formatNumber(options.lambda));
    impl_->prior = options.prior;
    if (options.prior != RegularizerKind::Tikhonov && options.prior != RegularizerKind::FiniteDifference &&
        options.prior != RegularizerKind::TotalVariation)
        throw InputError("CT: the prior '" + toString(options.prior) + "' is not available (tikhonov, fd, tv)");

    // W made mean 1: the same minimiser for a given λ (s scales with W), numbers of order one.
    double mean_weight = 1;
    ComplexArray sqrt_w;
    LinearOperatorPtr data = projector;
    if (!weights.empty()) {
        mean_weight = std::accumulate(weights.begin(), weights.end(), 0.0) / weights.size();
        if (!(mean_weight > 0)) throw InputError("CT iterative: the weights must be positive");
        sqrt_w.resize(weights.size());
        for (std::size_t i = 0; i < weights.size(); ++i) {
            if (!(weights[i] >= 0) || !std::isfinite(weights[i]))
                throw InputError("CT iterative: weight " + std::to_string(i) + " is negative or not finite");
            sqrt_w[i] = std::sqrt(weights[i] / mean_weight);
        }
        data = compose(diagonal(space, sqrt_w, "sqrt(W)"), projector);
    }
    scale_ = weighted_trace / mean_weight / double(volume.voxels());
    if (!(scale_ > 0) || !std::isfinite(scale_))
        throw InputError("CT iterative: the projector sees none of the volume (trace(AᵀWA) = " +
                         formatNumber(weighted_trace) + ")");
    lambda_ = options.auto_lambda ? autoLambda(options.prior, scale_, options.mean_count) : options.lambda;
    auto_lambda_ = options.auto_lambda;

    // d = sqrt(W) p: the data term ||sqrt(W)(A x − p)||² with b = (sqrt(W) A)ᵀ d.
    ComplexArray d(projections.begin(), projections.end());
    if (!sqrt_w.empty())
        for (std::size_t i = 0; i < d.size(); ++i) d[i] *= sqrt_w[i];
    double data_norm2 = 0;
    for (const cdouble& v : d) data_norm2 += std::norm(v);
    auto d_vec = std::make_shared<const Vector>(space.fromHost(d));
    auto rhs = std::make_shared<Vector>(space.make(volume.voxels()));
    data->adjoint(*d_vec, *rhs);
    impl_->rhs = rhs;

    const Grid grid = gridOf(volume);
    if (options.prior == RegularizerKind::TotalVariation) {
        AdmmOptions ao;
        // TV's λ is a threshold in image units; ADMM's shrinkage follows the image's magnitude,
        // estimated from water (the phantoms' and patients' bulk).
        ao.image_scale = 0.02;
        // Fixed rho, no over-relaxation: CT's lambda rule (autoLambda) and its few iterations from the
        // FDK start were fitted with them; MR's balanced rho and alpha = 1.6 left the low-dose TV image
        // below FDK's at 2e3 and 1e4 photons (CtIterative.DefaultBeatsFdkAtNormalDose).
        ao.adaptive_rho = false;
        ao.relaxation = 1;
        impl_->admm = std::make_unique<Admm>(data, *rhs, data_norm2,
                                             std::vector<SparseTerm>{totalVariation(space, grid, lambda_ * scale_)}, ao);
        impl_->admm->setData(d_vec);
    } else {
        std::vector<NormalTerm> terms{{"data", 1.0, data}};
        const Regularizer reg = makeRegularizer(options.prior, grid);
        terms.push_back({toString(options.prior), lambda_ * scale_, sparseMatrix(space, reg.w, &reg.normal, toString(options.prior))});
        impl_->cg = std::make_unique<NormalEquationsCg>(std::move(terms), *rhs, data_norm2);
        impl_->cg->setData(d_vec);
    }
}

IterativeSolve::~IterativeSolve() = default;

IterativeAlgorithm& IterativeSolve::algorithm() {
    if (impl_->cg) return *impl_->cg;
    return *impl_->admm;
}

void IterativeSolve::setLambda(double lambda) {
    if (!(lambda >= 0) || !std::isfinite(lambda))
        throw InputError("CT iterative: lambda must be a finite number >= 0, got " + formatNumber(lambda));
    lambda_ = lambda;
    auto_lambda_ = false;
    if (impl_->cg)
        impl_->cg->setWeight(1, lambda * scale_);
    else
        impl_->admm->setWeight(0, lambda * scale_);
}

void IterativeSolve::setTruth(const std::vector<double>& truth) {
    const ComplexArray t(truth.begin(), truth.end());
    if (impl_->cg)
        impl_->cg->setTruth(t);
    else
        impl_->admm->setTruth(t);
}

void IterativeSolve::setInitial(const std::vector<double>& x0) {
    const ComplexArray x(x0.begin(), x0.end());
    if (impl_->cg)
        impl_->cg->setInitial(x);
    else
        impl_->admm->setInitial(x);
}

std::string IterativeSolve::describe() const {
    return std::string(impl_->admm ? "ADMM" : "CG") + ", weighted least squares + " + toString(impl_->prior) +
           ", λ " + (auto_lambda_ ? "auto " : "") + formatNumber(lambda_) + " × s (s = " + formatNumber(scale_) + ")";
}

}  // namespace recon::ct
