// Iterative CT: penalised weighted least squares,
//   min_x ||A x − p||²_W + λ·s·R(x),
// A the projector (any backend's), p the projections, W a diagonal of detector
// weights (the measured counts for low-dose data, normalised to mean 1: the
// inverse variance of −log(counts/I0) up to a constant; or the identity), and
// s = trace(AᵀWA) / voxels, the mean eigenvalue of AᵀWA (as MR's s = Q(0)), so
// that λ means the same trade-off whatever the number of views, the detector
// or the weights. R: a quadratic prior of recon/operators (Tikhonov ||x||², or
// first-order finite differences ||Dx||²), solved by CG on the normal
// equations (NormalEquationsCg); or isotropic total variation ||Dx||_{2,1},
// solved by ADMM (recon/solvers/admm.hpp), where λ is a threshold in image
// units (1/mm). Both run under the one runner (runIterations): progress per CG
// iteration, cancel, snapshots; setLambda continues warm from the current
// iterate with nothing rebuilt.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recon/ct/geometry.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/solvers/runner.hpp"

namespace recon::ct {

struct IterativeOptions {
    // Tikhonov, FiniteDifference or TotalVariation; lambda 0 = plain (weighted) least squares.
    RegularizerKind prior = RegularizerKind::FiniteDifference;
    double lambda = 0;
};

// Where λ starts when none is given: measured best of sweeps on the demo cases (docs/CONVENTIONS.md).
double defaultLambda(RegularizerKind prior);

// The image grid of a CT volume (the regularisers' indexing: x fastest, 2D when n_z = 1).
Grid gridOf(const VolumeGeometry& volume);

class IterativeSolve {
public:
    // `projector` A on `space` (volume.voxels() -> projections.size()); `weights` empty for W = I,
    // else one per projection value (made mean 1 here); `weighted_trace` = trace(AᵀWA) for the
    // weights as given (DdProjector::weightedTrace), which sets s.
    IterativeSolve(VectorSpace& space, LinearOperatorPtr projector, const VolumeGeometry& volume,
                   const std::vector<double>& projections, const std::vector<double>& weights, double weighted_trace,
                   const IterativeOptions& options);
    ~IterativeSolve();

    IterativeAlgorithm& algorithm();
    double scale() const { return scale_; }  // s
    double lambda() const { return lambda_; }
    // A new λ: the penalty's weight changes on the resident solver, which continues from its iterate.
    void setLambda(double lambda);
    void setTruth(const std::vector<double>& truth);
    std::string describe() const;  // "weighted least squares + fd, λ 0.01 × s (s = 12.3)"

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    double scale_ = 0, lambda_ = 0;
};

}  // namespace recon::ct
