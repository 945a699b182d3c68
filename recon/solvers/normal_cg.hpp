// CG on the normal equations of any operators: (sum_i w_i A_i^H A_i) x = b,
// each A_i^H A_i applied by the operator's own normal (the Toeplitz embedding
// for the Fourier operator, one CSR product for a quadratic regulariser). Term
// 0 is the data term, b = A_0^H d, so the records carry the absolute cost
// ||A_0 x - d||^2 + sum_{i>=1} w_i ||A_i x||^2 with no extra operator application
// (the data term by one application of A_0 where its expanded form cancels: setData, DataTerm).
// It works on any backend's VectorSpace; a weight change keeps everything resident.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recon/core/metrics.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/solvers/data_term.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct NormalTerm {
    std::string name;
    double weight = 1;
    LinearOperatorPtr op;  // its normal is applied
};

class NormalEquationsCg final : public IterativeAlgorithm {
public:
    // `rhs` = A_0^H d (on the same backend), `data_norm2` = ||d||^2.
    NormalEquationsCg(std::vector<NormalTerm> terms, const Vector& rhs, double data_norm2);
    ~NormalEquationsCg() override;

    bool step() override;
    IterationRecord record() const override;
    IterationRecord exactRecord() const override;
    IterationRecord progressRecord() const override;
    void image(ComplexArray& out) const override;

    const Vector& solution() const;
    VectorSpace& space() const { return space_; }
    std::size_t size() const { return n_; }
    // Start again from x0 (host or backend vector) with the current weights; the iteration count restarts.
    void setInitial(const ComplexArray& x0);
    void setInitial(const Vector& x0);
    // Start from a x0 with the least-squares optimal scalar a = x0^H b / x0^H A x0 (returned), so a
    // gridded image in any units is a start; one application of A, as any start.
    cdouble setInitialScaled(const Vector& x0);
    // d itself (A_0's output, on its backend): exact records' data term directly where the cheap
    // expanded form falls below its accuracy (recon/solvers/data_term.hpp); without it, clamped at 0.
    void setData(std::shared_ptr<const Vector> data);
    void setData(DataSource source);  // d made when a record first needs it
    // A new right-hand side (same backend and size); CG continues from the current iterate
    // without an operator application. The records' data term assumes b = A_0^H d.
    void setRightHandSide(const Vector& rhs);
    // A term's weight (e.g. lambda s); CG restarts from the current iterate, nothing is rebuilt.
    void setWeight(std::size_t term, double weight);
    // The same without applying any operator (the residual is recombined from the products CG
    // keeps; the iteration count restarts): ADMM's penalty parameter changes.
    void reweight(std::size_t term, double weight);
    // The same with the preconditioner made for the new weights (null: none), in one restart.
    void setWeight(std::size_t term, double weight, LinearOperatorPtr preconditioner);
    // Recycle for setWeightRecycling: keep the last k search directions with their products (1 + terms()
    // vectors each) and the iterate where the last recycled change began (1 + terms() vectors); k = 0:
    // that iterate only. Off by default and after stopRecycling().
    void keepDirections(std::size_t k);
    void stopRecycling();
    std::size_t keptDirections() const;  // how many are held now (<= k)
    // A weight change (lambda) without applying any operator: the residual from the products CG
    // keeps, then (recycling) the Galerkin solution in the kept vectors' span at the new weights (recon/solvers/cg.hpp);
    // the iteration count restarts. The same solution as setWeight, in fewer iterations.
    void setWeightRecycling(std::size_t term, double weight, LinearOperatorPtr preconditioner);
    // M^{-1}, an approximate inverse of sum_i w_i A_i^H A_i (Hermitian positive definite, its
    // forward applied; null: none). CG restarts its direction from the current iterate; the
    // records' residual stays ||b - A x|| / ||b||, comparable with and without one.
    void setPreconditioner(LinearOperatorPtr preconditioner);
    bool preconditioned() const;
    double weight(std::size_t term) const;
    std::size_t terms() const;
    // x^H A_i^H A_i x of the current iterate (unweighted), kept by CG at no extra cost.
    double quadraticForm(std::size_t term) const;
    // Re x^H v of the current iterate for a vector v of the solve's size (on its backend; it must
    // outlive the solver), computed with CG's own statistics after every iteration: no extra round trip.
    void watch(const Vector& v);
    double watched(std::size_t k) const;  // the k-th watch()'s Re x^H v
    // The true image, for error and PSNR in the records.
    void setTruth(const ComplexArray& truth);

private:
    IterationRecord makeRecord(bool exact) const;
    struct Impl;
    VectorSpace& space_;
    std::size_t n_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace recon
