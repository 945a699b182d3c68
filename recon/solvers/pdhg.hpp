// PDHG (Chambolle-Pock) with the data term dualised and a diagonal k-space preconditioner on its
// dual (Ong, Uecker and Lustig, IEEE TMI 2020), for the problem ADMM solves (recon/solvers/admm.hpp):
//   min_x ||F x - d||^2 + sum_k w_k sum_g ||(W_k x)_g||_2,
// over K = [F; W_1; ...] with F the non-Cartesian forward operator itself (a NUFFT pair per step,
// not the Toeplitz normal), the dual u of the data term and v_k of each prior:
//   u   <- (u + p .* (F xbar - d)) ./ (1 + p / 2)     (prox of (||. - d||^2)^* in the metric diag(p))
//   v_k <- proj_{||.||_g <= w_k}(v_k + sigma_k W_k xbar)   (Moreau: v - groupSoft(v, w_k); l1 for group 1)
//   x+  <- x - tau (F^H u + sum_k W_k^H v_k),  xbar <- 2 x+ - x.
// Its fixed point has u = 2 (F x - d) and 2 F^H (F x - d) + sum_k W_k^H v_k = 0 with v_k in w_k's
// subdifferential: the minimiser ADMM reaches, whatever p, sigma_k and tau are. p ~ the inverse
// sampling density (PdhgOptions::k_space_weights); the steps satisfy Pock and Chambolle's
// condition tau ||Sigma^{1/2} K||^2 < 1, Sigma = diag(p, sigma_k): p is normalised so that
// ||diag(p)^{1/2} F|| = 1, sigma_k = 1 / ||W_k||^2, both scaled by `dual_scale`, and tau = 1 /
// (dual_scale x margin x ||[diag(p)^{1/2} F; sigma_k^{1/2} W_k]||^2), the norms by power iteration.
// One step(): one F, one F^H, one W_k and one W_k^H per term. Records: the full cost of x+ (from the
// F x+ the next step reuses), its truth error; `residual` ||x+ - x|| / ||x+||.
// Measured against ADMM in docs/SPARSE.md ("PDHG with a k-space preconditioner").
#pragma once

#include <memory>
#include <vector>

#include "recon/linop/linear_operator.hpp"
#include "recon/priors/priors.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct PdhgOptions {
    // p before normalisation, one value >= 0 per sample (e.g. density-compensation weights); empty:
    // p = 1 (plain PDHG, no preconditioner).
    std::vector<double> k_space_weights;
    // The balance of dual against primal steps (Sigma x gamma, tau / gamma): speed only.
    double dual_scale = 1;
    int power_iterations = 20;  // per norm
    double margin = 1.05;       // on the power iteration's estimate (which is from below)
};

class Pdhg final : public IterativeAlgorithm {
public:
    // `fourier` F, `data` d on F's backend (F's output size).
    Pdhg(LinearOperatorPtr fourier, const Vector& data, std::vector<SparseTerm> terms, PdhgOptions opts = {},
         const Progress& progress = {});
    ~Pdhg() override;

    bool step() override;
    IterationRecord record() const override;
    void image(ComplexArray& out) const override;

    const Vector& solution() const;
    // A term's weight (lambda s): x and u continue, v_k is scaled by the weight's ratio (its ball
    // scales with it); the steps do not depend on the weights.
    void setWeight(std::size_t term, double weight);
    double weight(std::size_t term) const;
    void setInitial(const ComplexArray& x0);  // a starting image; duals 0
    void setTruth(const ComplexArray& truth);
    double primalStep() const;                // tau
    double dualStep(std::size_t term) const;  // sigma_k

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
