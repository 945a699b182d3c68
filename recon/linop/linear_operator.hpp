// Linear operators as values, resident on a backend (BART's linop, SigPy's
// Linop): forward A x, adjoint A^H y and normal A^H A x, the last overridable
// where a fast form exists (the Toeplitz embedding for the Fourier operator, a
// precomputed W^T W for a sparse regulariser). Operators built from other
// operators — composition, sums, scaling, vertical stacks, diagonals — are
// written once here, against the VectorSpace, and so run on every backend.
//
// Shapes are checked when an operator is built (InputError naming both
// operators) and when it is applied. An operator keeps scratch vectors between
// calls: one operator serves one solve at a time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/linop/vector_space.hpp"

namespace recon {

class LinearOperator {
public:
    LinearOperator(VectorSpace& space, std::size_t in_size, std::size_t out_size, std::string name);
    virtual ~LinearOperator() = default;
    LinearOperator(const LinearOperator&) = delete;
    LinearOperator& operator=(const LinearOperator&) = delete;

    std::size_t inSize() const { return in_; }
    std::size_t outSize() const { return out_; }
    const std::string& name() const { return name_; }
    VectorSpace& space() const { return space_; }

    void forward(const Vector& x, Vector& y) const;  // y = A x
    void adjoint(const Vector& y, Vector& x) const;  // x = A^H y
    void normal(const Vector& x, Vector& y) const;   // y = A^H A x

protected:
    virtual void applyForward(const Vector& x, Vector& y) const = 0;
    virtual void applyAdjoint(const Vector& y, Vector& x) const = 0;
    // Default: adjoint of forward through a scratch vector of outSize().
    virtual void applyNormal(const Vector& x, Vector& y) const;
    // A zeroed-on-first-use scratch vector of n values, kept between calls.
    Vector& scratch(std::size_t slot, std::size_t n) const;

private:
    VectorSpace& space_;
    std::size_t in_, out_;
    std::string name_;
    mutable std::map<std::size_t, Vector> scratch_;  // a map: references stay valid as slots are added
    mutable Vector normal_scratch_;  // the default normal's, apart from the subclasses' slots
};

using LinearOperatorPtr = std::shared_ptr<const LinearOperator>;

// A ∘ B (B first); B's output must be A's input. normal = B^H (A^H A) B uses A's fast normal.
LinearOperatorPtr compose(LinearOperatorPtr a, LinearOperatorPtr b);
// A + B (same shapes).
LinearOperatorPtr sum(LinearOperatorPtr a, LinearOperatorPtr b);
// a A, a complex; normal |a|^2 A^H A.
LinearOperatorPtr scaled(cdouble a, LinearOperatorPtr op);
// [A_1; A_2; ...]: one input, outputs concatenated; normal = sum_i A_i^H A_i (each its fast form).
LinearOperatorPtr vstack(std::vector<LinearOperatorPtr> ops);
// diag(d): y = d .* x; adjoint conj(d) .* y.
LinearOperatorPtr diagonal(VectorSpace& space, const ComplexArray& d, std::string name = "diagonal");
// The same from d already on `space` (kept; nothing crosses to the host).
LinearOperatorPtr diagonal(VectorSpace& space, Vector d, std::string name = "diagonal");
LinearOperatorPtr identity(VectorSpace& space, std::size_t n);
// y[(i + offset) mod n] = x[i], n = x.size(): a cyclic shift of the whole vector, two copyRange
// calls on any backend. A permutation, so it keeps an orthogonal transform applied after it
// orthogonal (the random wavelet shifts of recon/solvers/fista.hpp). y must not be x.
void cyclicShift(VectorSpace& space, const Vector& x, std::size_t offset, Vector& y);
// The same as an operator (adjoint = inverse = the shift by n - offset).
LinearOperatorPtr cyclicShift(VectorSpace& space, std::size_t n, std::size_t offset);
// A real CSR matrix W (rows = outputs); `gram`, when given, is W^T W, applied as the normal
// in one sparse product (reading W and W^T costs three times the memory traffic).
// W and W^T reach the backend on first use: a solve that only applies the normal never uploads them.
struct CsrMatrix;
LinearOperatorPtr sparseMatrix(VectorSpace& space, std::shared_ptr<const CsrMatrix> w,
                               std::shared_ptr<const CsrMatrix> gram = nullptr, std::string name = "sparse matrix");
LinearOperatorPtr sparseMatrix(VectorSpace& space, const CsrMatrix& w, const CsrMatrix* gram = nullptr,
                               std::string name = "sparse matrix");
// `op` with its normal computed by `normal` instead (e.g. the Fourier sums with the Toeplitz embedding).
LinearOperatorPtr withNormal(LinearOperatorPtr op, LinearOperatorPtr normal);

// The stride of groups of `group` values in a vector of n values (groupSoftThreshold's layout);
// InputError (naming `what`) when n is not a multiple of group or group is 0.
std::size_t groupStride(std::size_t n, std::size_t group, const char* what);

// Host arrays in and out, for tests and the few host-side callers.
ComplexArray applyForward(const LinearOperator& op, const ComplexArray& x);
ComplexArray applyAdjoint(const LinearOperator& op, const ComplexArray& y);
ComplexArray applyNormal(const LinearOperator& op, const ComplexArray& x);

}  // namespace recon
