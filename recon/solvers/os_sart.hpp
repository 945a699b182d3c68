// OS-SART: the simultaneous algebraic reconstruction technique (Andersen & Kak 1984) over
// ordered subsets of the data (Wang & Jiang 2004), for any operator with non-negative
// entries (a projector). With A_k the operator of subset k, p_k its data, W_k optional
// statistical weights, R_k = A_k 1 its row sums and C_k = A_k^T W_k 1 its weighted column
// sums, one subset's update is
//
//     x ← x + ω C_k^{-1} A_k^T W_k R_k^{-1} (p_k − A_k x),   then x ← max(x, 0) if asked.
//
// Because A^T W R^{-1} A 1 = A^T W 1 = C, diag(C) majorises A^T W R^{-1} A: with one subset
// and 0 < ω < 2 this is a convergent preconditioned gradient step on ||A x − p||²_{W R^{-1}},
// so SART's fixed point is that weighted least-squares solution (what the tests check);
// with several subsets it reaches its neighbourhood S times faster per pass and then cycles.
// W = I gives the textbook SART. Pixels no ray of the volume crosses (R = 0) and voxels no
// ray of the subset sees (C = 0) are left alone.
//
// One step() is one pass over all subsets (one forward and one back projection of all the
// data, the cost of one CG iteration on the normal equations), so the runner's progress,
// cancel and records are per pass. The record's data term ||p − A x||²_W is summed over the
// subsets as each is visited (the image changes within a pass; no extra projection); before
// the first pass it is ||p||²_W, the cost of x = 0.
#pragma once

#include <memory>
#include <vector>

#include "recon/linop/linear_operator.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct SartSubset {
    LinearOperatorPtr op;         // A_k, entries >= 0
    ComplexArray data;            // p_k (op->outSize() values)
    std::vector<double> weights;  // W_k (op->outSize() values, >= 0), or empty for W_k = I
};

struct OsSartOptions {
    double relaxation = 1;    // ω, in (0, 2)
    bool nonnegative = true;  // project onto x >= 0 (real part; the imaginary part is dropped) after each subset
};

class OsSart final : public IterativeAlgorithm {
public:
    // Subsets are visited in the order given; all share one input size and one backend.
    OsSart(std::vector<SartSubset> subsets, const OsSartOptions& options = {});
    ~OsSart() override;

    bool step() override;
    IterationRecord record() const override;
    void image(ComplexArray& out) const override;

    const Vector& solution() const;
    std::size_t subsets() const;
    const OsSartOptions& options() const;
    void setInitial(const ComplexArray& x0);  // the pass count restarts
    void setTruth(const ComplexArray& truth);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
