// A preconditioned primal-dual method (Condat 2013 / Vu 2013, PDHG with the data term linearised and
// a primal metric) for the problem ADMM solves (recon/solvers/admm.hpp):
//   min_x ||F x - d||^2 + sum_k w_k sum_g ||(W_k x)_g||_2,
// with the duals y_k of the terms, per step:
//   x+  = x - P^{-1} (2 (F^H F x - F^H d) + sum_k W_k^H y_k)
//   y_k = proj_{||.||_g <= w_k}(y_k + sigma_k W_k (2 x+ - x))      (Moreau: v - groupSoft(v, w_k))
// It converges when P > F^H F + sum_k sigma_k W_k^H W_k (Condat's condition, the quadratic's
// Hessian half of grad f's). P = c P0 with P0 an approximate (e.g. circulant) form of that
// operator, so P0^{-1} is cheap (an N-grid FFT pair), and c = margin x the largest eigenvalue of
// P0^{-1} (F^H F + sum_k sigma_k W_k^H W_k), by power iteration once per sigma (PdhgOptions).
// One step() is one F^H F product (the Toeplitz one), plus one P0^{-1}, one W_k and one W_k^H:
// the unit of progress an ADMM step is. The records' cost and truth error come from F^H F x,
// which the step computes for the next gradient (no extra Fourier work). `residual`: the relative
// primal change ||x+ - x|| / ||x+||.
// Measured against ADMM on 3D radial TV: docs/SPARSE.md ("Spectral rho, and what else was tried").
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "recon/linop/linear_operator.hpp"
#include "recon/priors/priors.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct PdhgOptions {
    // The dual steps sigma_k (> 0, one per term; empty: every sigma_k = `sigma`).
    std::vector<double> sigmas;
    double sigma = 1;
    // P0^{-1} for the given sigma_k, P0 ~ F^H F + sum_k sigma_k W_k^H W_k, Hermitian positive definite
    // (its forward applied; empty: P0 = I, i.e. plain PDHG with tau = 1 / c).
    std::function<LinearOperatorPtr(const std::vector<double>& sigma)> metric_inverse;
    int power_iterations = 30;  // for c
    double margin = 1.1;        // c = margin x the power iteration's estimate (which is from below)
};

class Pdhg final : public IterativeAlgorithm {
public:
    // `fourier` F (its normal the fast one), `rhs` = F^H d on F's backend, `data_norm2` = ||d||^2.
    Pdhg(LinearOperatorPtr fourier, const Vector& rhs, double data_norm2, std::vector<SparseTerm> terms, PdhgOptions opts = {},
         const Progress& progress = {});
    ~Pdhg() override;

    bool step() override;
    IterationRecord record() const override;
    void image(ComplexArray& out) const override;

    const Vector& solution() const;
    // A term's weight (lambda s); x, and the duals scaled by the weight's ratio (their ball scales
    // with it), continue warm. The metric does not depend on the weights: nothing is rebuilt.
    void setWeight(std::size_t term, double weight);
    double weight(std::size_t term) const;
    void setInitial(const ComplexArray& x0);  // a starting image; duals 0
    void setTruth(const ComplexArray& truth);
    double metricScale() const;               // c

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
