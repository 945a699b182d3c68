// ADMM for min_x ||F x - d||^2 + sum_k w_k sum_g ||(W_k x)_g||_2 (Boyd et al. 2011, scaled
// form, splitting z_k = W_k x):
//   x ← argmin ||F x - d||^2 + sum_k rho_k ||W_k x - z_k + u_k||^2
//       = CG on (F^H F + sum_k rho_k W_k^H W_k) x = F^H d + sum_k rho_k W_k^H (z_k - u_k),
//         a fixed number of iterations, warm-started from the last x;
//   z_k ← prox_{w_k / (2 rho_k) ||.||_{2,1}}(W_k x + u_k)   (groupSoftThreshold);
//   u_k ← u_k + W_k x - z_k.
// One step() is one inner CG iteration, so the runner's progress, cancel and records stay one
// per CG iteration (the F^H F of each is the Toeplitz product). The records carry the full
// cost ||F x - d||^2 + sum_k w_k ||W_k x||_{2,1} of the current iterate and, with a truth, its
// PSNR; `residual` is ADMM's relative primal residual sqrt(sum_k ||W_k x - z_k||^2) / sqrt(sum_k ||W_k x||^2)
// after the last outer step (1 before the first).
//
// rho_k = w_k / (2 tau) to start: the z-step then shrinks by tau, a fixed fraction of the image's
// magnitude (AdmmOptions::threshold_scale), whatever lambda is; then every rho_k is scaled by one common
// factor by residual balancing, or (AdmmOptions::spectral_rho) from spectral estimates where they are
// trusted and by balancing otherwise (AdmmOptions::adaptive_rho). The z- and u-steps are over-relaxed, and the
// x-update's CG may be preconditioned (docs/SPARSE.md, "ADMM in fewer steps", measures all three).
// rho changes the speed, not the solution: measured with TV over 150 CG iterations, 0.005 of the
// image's magnitude beat 0.05 by +6 dB on spiral-2d and +2 dB on radial-2d-noisy, and was level on small-2d.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "recon/linop/linear_operator.hpp"
#include "recon/priors/priors.hpp"
#include "recon/solvers/data_term.hpp"
#include "recon/solvers/normal_cg.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct AdmmDefaults {
    static constexpr double threshold_scale = 0.005;
    static constexpr double relaxation = 1.6;
    static constexpr bool adaptive_rho = true;
    // Not the default: fewer steps in 2D, level in 3D, and on the GPU its larger rho moves made the
    // lambda change 6x slower (docs/SPARSE.md).
    static constexpr bool spectral_rho = false;
};
struct AdmmOptions {
    int inner_iterations = 5;   // CG iterations per x-update
    // tau: the shrinkage per z-step, in units of the image's magnitude (image_scale).
    double threshold_scale = AdmmDefaults::threshold_scale;
    double image_scale = 1;     // a typical image magnitude (e.g. max |F^H d| / s); tau = threshold_scale * image_scale
    // Over-relaxation alpha in (0, 2): the z- and u-steps see alpha W x + (1 - alpha) z_old
    // (Boyd et al. 2011, section 3.4.3; 1: none).
    double relaxation = AdmmDefaults::relaxation;
    // Residual balancing (Boyd section 3.4.1, relative residuals as Wohlberg 2017): after an outer
    // step, rho is multiplied by `rho_factor` when the primal residual exceeds `rho_balance` times
    // the dual one and divided by it in the opposite case, during the first `adapt_outer` outer
    // steps after a start or a weight change (finitely many changes: ADMM's convergence holds).
    // The inner operator F^H F + rho W^H W follows without an operator application.
    bool adaptive_rho = AdmmDefaults::adaptive_rho;
    double rho_balance = 2;
    double rho_factor = 2;
    int adapt_outer = 100;
    // An approximate inverse of the x-update's operator F^H F + sum_k rho_k W_k^H W_k for the
    // given rho_k (e.g. the circulant preconditioner; empty: none). Made at the start and again
    // when a rho has moved by more than `rebuild_ratio` from the one it was made for.
    std::function<LinearOperatorPtr(const std::vector<double>& rho)> preconditioner;
    double rebuild_ratio = 4;
    // With adaptive_rho, spectral penalty selection (Xu, Figueiredo and Goldstein 2017, "adaptive ADMM")
    // every `spectral_every` outer steps: rho = sqrt(a b), a and b the step sizes fitted to how the two
    // dual functions' (sub)gradients moved since the last estimate, each used only where its
    // correlation exceeds `spectral_correlation` (one estimate moves rho by at most 10x); residual
    // balancing takes the other outer steps and those with no trusted estimate. Six more vectors the
    // size of W x per term. On TV the estimates are often untrusted, and without the fall-back rho then
    // froze and the solve stalled (docs/SPARSE.md, "ADMM in fewer steps").
    bool spectral_rho = AdmmDefaults::spectral_rho;
    int spectral_every = 2;
    double spectral_correlation = 0.2;
};

class Admm final : public IterativeAlgorithm {
public:
    // `fourier` F (its normal the fast one), `rhs` = F^H d on F's backend, `data_norm2` = ||d||^2.
    Admm(LinearOperatorPtr fourier, const Vector& rhs, double data_norm2, std::vector<SparseTerm> terms, AdmmOptions opts = {});
    ~Admm() override;

    bool step() override;
    IterationRecord record() const override;
    IterationRecord exactRecord() const override;
    void image(ComplexArray& out) const override;

    const Vector& solution() const;
    std::size_t size() const;
    std::size_t terms() const;
    // A term's weight (lambda s): rho follows the rule and the scaled duals are rescaled, so the
    // iteration continues warm from the current x, z and u (the lambda-tuning path).
    void setWeight(std::size_t term, double weight);
    double weight(std::size_t term) const;
    double rho(std::size_t term) const;
    void setInitial(const ComplexArray& x0);  // a starting image; z = W x, u = 0
    // The same from a backend vector scaled by the least-squares optimal scalar first (CG's
    // setInitialScaled: a gridded image's scale is arbitrary); returns the scalar.
    cdouble setInitialScaled(const Vector& x0);
    void setTruth(const ComplexArray& truth);
    // d itself (F's output): the records' data term directly where its expanded form cancels (DataTerm).
    void setData(std::shared_ptr<const Vector> data);
    void setData(DataSource source);  // d made when a record first needs it
    int outerIterations() const;
    // The factor residual balancing has applied to every rho so far (1 without it).
    double rhoScale() const;

private:
    IterationRecord makeRecord(bool exact) const;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
