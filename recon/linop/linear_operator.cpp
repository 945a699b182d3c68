#include "recon/linop/linear_operator.hpp"

#include <cmath>

#include "recon/operators/regularizer.hpp"

namespace recon {
namespace {

void checkSize(const Vector& v, std::size_t expected, const std::string& op, const char* what) {
    if (v.size() != expected)
        throw InputError(op + ": " + what + " has " + std::to_string(v.size()) + " values, the operator expects " +
                         std::to_string(expected));
}

LinearOperatorPtr need(LinearOperatorPtr op, const char* where) {
    if (!op) throw InputError(std::string(where) + ": no operator given");
    return op;
}

class Composition final : public LinearOperator {
public:
    Composition(LinearOperatorPtr a, LinearOperatorPtr b)
        : LinearOperator(b->space(), b->inSize(), a->outSize(), a->name() + " * " + b->name()), a_(a), b_(b) {}

private:
    void applyForward(const Vector& x, Vector& y) const override {
        Vector& t = scratch(0, b_->outSize());
        b_->forward(x, t);
        a_->forward(t, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        Vector& t = scratch(0, b_->outSize());
        a_->adjoint(y, t);
        b_->adjoint(t, x);
    }
    void applyNormal(const Vector& x, Vector& y) const override {
        Vector& t = scratch(0, b_->outSize());
        Vector& u = scratch(1, b_->outSize());
        b_->forward(x, t);
        a_->normal(t, u);
        b_->adjoint(u, y);
    }
    LinearOperatorPtr a_, b_;
};

class Sum final : public LinearOperator {
public:
    Sum(LinearOperatorPtr a, LinearOperatorPtr b)
        : LinearOperator(a->space(), a->inSize(), a->outSize(), a->name() + " + " + b->name()), a_(a), b_(b) {}

private:
    void applyForward(const Vector& x, Vector& y) const override {
        Vector& t = scratch(0, outSize());
        a_->forward(x, y);
        b_->forward(x, t);
        space().axpy(1.0, t, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        Vector& t = scratch(1, inSize());
        a_->adjoint(y, x);
        b_->adjoint(y, t);
        space().axpy(1.0, t, x);
    }
    LinearOperatorPtr a_, b_;
};

class Scaled final : public LinearOperator {
public:
    Scaled(cdouble a, LinearOperatorPtr op)
        : LinearOperator(op->space(), op->inSize(), op->outSize(), "scaled " + op->name()), a_(a), op_(op) {}

private:
    void applyForward(const Vector& x, Vector& y) const override {
        op_->forward(x, y);
        space().scale(a_, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        op_->adjoint(y, x);
        space().scale(std::conj(a_), x);
    }
    void applyNormal(const Vector& x, Vector& y) const override {
        op_->normal(x, y);
        space().scale(std::norm(a_), y);
    }
    cdouble a_;
    LinearOperatorPtr op_;
};

std::size_t stackedSize(const std::vector<LinearOperatorPtr>& ops) {
    std::size_t n = 0;
    for (const auto& op : ops) n += need(op, "vstack")->outSize();
    return n;
}

class VerticalStack final : public LinearOperator {
public:
    explicit VerticalStack(std::vector<LinearOperatorPtr> ops)
        : LinearOperator(ops.front()->space(), ops.front()->inSize(), stackedSize(ops), "stack"), ops_(std::move(ops)) {}

private:
    void applyForward(const Vector& x, Vector& y) const override {
        std::size_t offset = 0;
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            Vector& t = scratch(i, ops_[i]->outSize());
            ops_[i]->forward(x, t);
            space().copyRange(t, 0, y, offset, t.size());
            offset += t.size();
        }
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        Vector& part = scratch(ops_.size(), inSize());
        std::size_t offset = 0;
        space().zero(x);
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            Vector& t = scratch(i, ops_[i]->outSize());
            space().copyRange(y, offset, t, 0, t.size());
            offset += t.size();
            ops_[i]->adjoint(t, part);
            space().axpy(1.0, part, x);
        }
    }
    void applyNormal(const Vector& x, Vector& y) const override {
        Vector& part = scratch(ops_.size(), inSize());
        ops_[0]->normal(x, y);
        for (std::size_t i = 1; i < ops_.size(); ++i) {
            ops_[i]->normal(x, part);
            space().axpy(1.0, part, y);
        }
    }
    std::vector<LinearOperatorPtr> ops_;
};

class Diagonal final : public LinearOperator {
public:
    Diagonal(VectorSpace& space, const ComplexArray& d, std::string name)
        : LinearOperator(space, d.size(), d.size(), std::move(name)), d_(space.fromHost(d)) {
        ComplexArray d2(d.size());
        for (std::size_t i = 0; i < d.size(); ++i) d2[i] = std::norm(d[i]);
        d2_ = space.fromHost(d2);
    }
    Diagonal(VectorSpace& space, Vector d, std::string name)
        : LinearOperator(space, d.size(), d.size(), std::move(name)), d_(std::move(d)), d2_(space.make(d_.size())) {
        space.multiply(d_, d_, d2_, true);  // |d|^2
    }

private:
    void applyForward(const Vector& x, Vector& y) const override { space().multiply(d_, x, y, false); }
    void applyAdjoint(const Vector& y, Vector& x) const override { space().multiply(d_, y, x, true); }
    void applyNormal(const Vector& x, Vector& y) const override { space().multiply(d2_, x, y, false); }
    Vector d_, d2_;
};

class Identity final : public LinearOperator {
public:
    Identity(VectorSpace& space, std::size_t n) : LinearOperator(space, n, n, "identity") {}

private:
    void applyForward(const Vector& x, Vector& y) const override { space().copy(x, y); }
    void applyAdjoint(const Vector& y, Vector& x) const override { space().copy(y, x); }
    void applyNormal(const Vector& x, Vector& y) const override { space().copy(x, y); }
};

class CyclicShift final : public LinearOperator {
public:
    CyclicShift(VectorSpace& space, std::size_t n, std::size_t offset)
        : LinearOperator(space, n, n, "cyclic shift by " + std::to_string(offset)), offset_(n ? offset % n : 0) {}

private:
    void applyForward(const Vector& x, Vector& y) const override { cyclicShift(space(), x, offset_, y); }
    void applyAdjoint(const Vector& y, Vector& x) const override { cyclicShift(space(), y, inSize() - offset_, x); }
    void applyNormal(const Vector& x, Vector& y) const override { space().copy(x, y); }
    std::size_t offset_;
};

class SparseMatrixOperator final : public LinearOperator {
public:
    SparseMatrixOperator(VectorSpace& space, std::shared_ptr<const CsrMatrix> w, std::shared_ptr<const CsrMatrix> gram,
                         std::string name)
        : LinearOperator(space, std::size_t(w->cols), std::size_t(w->rows), std::move(name)), host_w_(std::move(w)) {
        if (gram) {
            if (gram->rows != host_w_->cols || gram->cols != host_w_->cols)
                throw InputError(this->name() + ": W^T W is " + std::to_string(gram->rows) + " x " +
                                 std::to_string(gram->cols) + ", W has " + std::to_string(host_w_->cols) + " columns");
            gram_ = space.uploadSparse(*gram);
        }
    }

private:
    void applyForward(const Vector& x, Vector& y) const override {
        if (!w_) w_ = space().uploadSparse(*host_w_);
        space().sparseMultiply(*w_, x, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        if (!wt_) wt_ = space().uploadSparse(host_w_->transposed());
        space().sparseMultiply(*wt_, y, x);
    }
    void applyNormal(const Vector& x, Vector& y) const override {
        if (gram_)
            space().sparseMultiply(*gram_, x, y);
        else
            LinearOperator::applyNormal(x, y);
    }
    std::shared_ptr<const CsrMatrix> host_w_;
    mutable std::shared_ptr<const SparseStorage> w_, wt_;
    std::shared_ptr<const SparseStorage> gram_;
};

class NormalOverride final : public LinearOperator {
public:
    NormalOverride(LinearOperatorPtr op, LinearOperatorPtr normal)
        : LinearOperator(op->space(), op->inSize(), op->outSize(), op->name()), op_(op), normal_(normal) {}

private:
    void applyForward(const Vector& x, Vector& y) const override { op_->forward(x, y); }
    void applyAdjoint(const Vector& y, Vector& x) const override { op_->adjoint(y, x); }
    void applyNormal(const Vector& x, Vector& y) const override { normal_->forward(x, y); }
    LinearOperatorPtr op_, normal_;
};

}  // namespace

LinearOperator::LinearOperator(VectorSpace& space, std::size_t in_size, std::size_t out_size, std::string name)
    : space_(space), in_(in_size), out_(out_size), name_(std::move(name)) {
    if (in_ == 0 || out_ == 0) throw InputError(name_ + ": an operator needs at least one input and one output value");
}

void LinearOperator::forward(const Vector& x, Vector& y) const {
    checkSize(x, in_, name_ + " (forward)", "the input");
    checkSize(y, out_, name_ + " (forward)", "the output");
    applyForward(x, y);
}

void LinearOperator::adjoint(const Vector& y, Vector& x) const {
    checkSize(y, out_, name_ + " (adjoint)", "the input");
    checkSize(x, in_, name_ + " (adjoint)", "the output");
    applyAdjoint(y, x);
}

void LinearOperator::normal(const Vector& x, Vector& y) const {
    checkSize(x, in_, name_ + " (normal)", "the input");
    checkSize(y, in_, name_ + " (normal)", "the output");
    applyNormal(x, y);
}

void LinearOperator::applyNormal(const Vector& x, Vector& y) const {
    if (normal_scratch_.size() != out_) normal_scratch_ = space_.make(out_);
    applyForward(x, normal_scratch_);
    applyAdjoint(normal_scratch_, y);
}

Vector& LinearOperator::scratch(std::size_t slot, std::size_t n) const {
    Vector& v = scratch_[slot];
    if (v.size() != n) v = space_.make(n);
    return v;
}

LinearOperatorPtr compose(LinearOperatorPtr a, LinearOperatorPtr b) {
    need(a, "compose");
    need(b, "compose");
    if (b->outSize() != a->inSize())
        throw InputError("compose: " + b->name() + " gives " + std::to_string(b->outSize()) + " values, " + a->name() +
                         " takes " + std::to_string(a->inSize()));
    if (&a->space() != &b->space()) throw InputError("compose: " + a->name() + " and " + b->name() + " live on different backends");
    return std::make_shared<Composition>(a, b);
}

LinearOperatorPtr sum(LinearOperatorPtr a, LinearOperatorPtr b) {
    need(a, "sum");
    need(b, "sum");
    if (a->inSize() != b->inSize() || a->outSize() != b->outSize())
        throw InputError("sum: " + a->name() + " (" + std::to_string(a->outSize()) + " x " + std::to_string(a->inSize()) +
                         ") and " + b->name() + " (" + std::to_string(b->outSize()) + " x " + std::to_string(b->inSize()) +
                         ") differ in shape");
    if (&a->space() != &b->space()) throw InputError("sum: " + a->name() + " and " + b->name() + " live on different backends");
    return std::make_shared<Sum>(a, b);
}

LinearOperatorPtr scaled(cdouble a, LinearOperatorPtr op) {
    need(op, "scaled");
    if (!std::isfinite(a.real()) || !std::isfinite(a.imag())) throw InputError("scaled: the factor is not finite");
    return std::make_shared<Scaled>(a, op);
}

LinearOperatorPtr vstack(std::vector<LinearOperatorPtr> ops) {
    if (ops.empty()) throw InputError("vstack: no operators");
    for (const auto& op : ops) {
        need(op, "vstack");
        if (op->inSize() != ops.front()->inSize())
            throw InputError("vstack: " + op->name() + " takes " + std::to_string(op->inSize()) + " values, " +
                             ops.front()->name() + " takes " + std::to_string(ops.front()->inSize()));
        if (&op->space() != &ops.front()->space()) throw InputError("vstack: the operators live on different backends");
    }
    return std::make_shared<VerticalStack>(std::move(ops));
}

LinearOperatorPtr diagonal(VectorSpace& space, const ComplexArray& d, std::string name) {
    return std::make_shared<Diagonal>(space, d, std::move(name));
}

LinearOperatorPtr diagonal(VectorSpace& space, Vector d, std::string name) {
    return std::make_shared<Diagonal>(space, std::move(d), std::move(name));
}

LinearOperatorPtr identity(VectorSpace& space, std::size_t n) { return std::make_shared<Identity>(space, n); }

void cyclicShift(VectorSpace& space, const Vector& x, std::size_t offset, Vector& y) {
    const std::size_t n = x.size();
    if (y.size() != n)
        throw InputError("cyclic shift: " + std::to_string(n) + " values in, room for " + std::to_string(y.size()));
    if (n == 0) return;
    offset %= n;
    if (offset == 0) return space.copy(x, y);
    space.copyRange(x, 0, y, offset, n - offset);  // x[0, n - offset) -> y[offset, n)
    space.copyRange(x, n - offset, y, 0, offset);  // the tail wraps to the front
}

LinearOperatorPtr cyclicShift(VectorSpace& space, std::size_t n, std::size_t offset) {
    return std::make_shared<CyclicShift>(space, n, offset);
}

LinearOperatorPtr sparseMatrix(VectorSpace& space, std::shared_ptr<const CsrMatrix> w, std::shared_ptr<const CsrMatrix> gram,
                               std::string name) {
    if (!w) throw InputError(name + ": no matrix given");
    if (w->row_ptr.size() != std::size_t(w->rows) + 1) throw InputError(name + ": malformed CSR row pointers");
    return std::make_shared<SparseMatrixOperator>(space, std::move(w), std::move(gram), std::move(name));
}

LinearOperatorPtr sparseMatrix(VectorSpace& space, const CsrMatrix& w, const CsrMatrix* gram, std::string name) {
    return sparseMatrix(space, std::make_shared<const CsrMatrix>(w), gram ? std::make_shared<const CsrMatrix>(*gram) : nullptr,
                        std::move(name));
}

LinearOperatorPtr withNormal(LinearOperatorPtr op, LinearOperatorPtr normal) {
    need(op, "withNormal");
    need(normal, "withNormal");
    if (normal->inSize() != op->inSize() || normal->outSize() != op->inSize())
        throw InputError("withNormal: " + normal->name() + " is " + std::to_string(normal->outSize()) + " x " +
                         std::to_string(normal->inSize()) + ", the normal of " + op->name() + " is " +
                         std::to_string(op->inSize()) + " x " + std::to_string(op->inSize()));
    if (&op->space() != &normal->space()) throw InputError("withNormal: the operators live on different backends");
    return std::make_shared<NormalOverride>(op, normal);
}

namespace {
template <class Apply>
ComplexArray onHost(const LinearOperator& op, const ComplexArray& in, std::size_t out_size, Apply apply) {
    VectorSpace& s = op.space();
    Vector x = s.fromHost(in), y = s.make(out_size);
    apply(x, y);
    return s.toHost(y);
}
}  // namespace

ComplexArray applyForward(const LinearOperator& op, const ComplexArray& x) {
    return onHost(op, x, op.outSize(), [&](const Vector& a, Vector& b) { op.forward(a, b); });
}
ComplexArray applyAdjoint(const LinearOperator& op, const ComplexArray& y) {
    return onHost(op, y, op.inSize(), [&](const Vector& a, Vector& b) { op.adjoint(a, b); });
}
ComplexArray applyNormal(const LinearOperator& op, const ComplexArray& x) {
    return onHost(op, x, op.inSize(), [&](const Vector& a, Vector& b) { op.normal(a, b); });
}

std::size_t groupStride(std::size_t n, std::size_t group, const char* what) {
    if (group == 0 || n % group != 0)
        throw InputError(std::string(what) + ": " + std::to_string(n) + " values do not split into groups of " +
                         std::to_string(group));
    return n / group;
}

}  // namespace recon
