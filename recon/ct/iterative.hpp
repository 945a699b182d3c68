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
    // λ from the data's noise level instead (autoLambda, once s is known); `lambda` is then ignored.
    bool auto_lambda = false;
    double mean_count = 0;  // the scan's mean detected count per pixel (0: noiseless)
};

// Where λ starts when none is given: measured best of sweeps on the demo cases (docs/CONVENTIONS.md).
double defaultLambda(RegularizerKind prior);
// λ for the scan's noise. TV: its λ is a threshold in 1/mm, best near the noise of the image
// a weighted least-squares fit gives, about 1 / sqrt(s n̄) (n̄ the mean count: the normalised
// weights' noise variance is 1/n̄ per ray, AᵀW̃A's mean eigenvalue s); plus a floor for noiseless
// data, whose error is the model's (the voxel grid, few views). Both constants are calibrated
// on the demo cases (docs/CONVENTIONS.md). Other priors: defaultLambda.
double autoLambda(RegularizerKind prior, double scale, double mean_count);

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
    // Start from x0 (e.g. the FDK image) instead of zero; the iteration count restarts.
    void setInitial(const std::vector<double>& x0);
    std::string describe() const;  // "weighted least squares + fd, λ 0.01 × s (s = 12.3)"

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    double scale_ = 0, lambda_ = 0;
    bool auto_lambda_ = false;
};

}  // namespace recon::ct
