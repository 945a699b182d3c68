#include "recon/solvers/normal_cg.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "recon/solvers/cg.hpp"
#include "recon/solvers/data_term.hpp"

namespace recon {
namespace {

// The generic CG's Space over a backend's VectorSpace (virtual calls per vector
// operation, not per element).
struct OperatorSpace {
    using Vector = recon::Vector;
    VectorSpace* s;
    Vector make(std::size_t n) { return s->make(n); }
    void copy(const Vector& a, Vector& b) { s->copy(a, b); }
    void zero(Vector& a) { s->zero(a); }
    cdouble dot(const Vector& a, const Vector& b) { return s->dot(a, b); }
    std::vector<cdouble> dotPairs(const std::vector<VectorSpace::VectorPair>& pairs) { return s->dotPairs(pairs); }
    void axpy(double a, const Vector& x, Vector& y) { s->axpy(a, x, y); }
    void axpys(const std::vector<cdouble>& a, const std::vector<const Vector*>& xs, Vector& y) { s->axpys(a, xs, y); }
    void scale(cdouble a, Vector& y) { s->scale(a, y); }
    void xpby(const Vector& x, double b, Vector& y) { s->xpby(x, b, y); }
    void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) { s->combine(w, xs, y); }
};

}  // namespace

struct NormalEquationsCg::Impl {
    OperatorSpace space;
    std::vector<NormalTerm> terms;
    LinearOperatorPtr preconditioner;
    std::unique_ptr<ConjugateGradient<OperatorSpace>> cg;
    std::optional<DataTerm> data;  // term 0's ||A_0 x - d||^2
    bool has_truth = false;
    TruthStats truth;
};

NormalEquationsCg::NormalEquationsCg(std::vector<NormalTerm> terms, const Vector& rhs, double data_norm2)
    : space_(terms.empty() || !terms.front().op ? throw InputError("CG: no data term") : terms.front().op->space()),
      n_(terms.front().op->inSize()), impl_(std::make_unique<Impl>()) {
    if (rhs.size() != n_)
        throw InputError("CG: the right-hand side has " + std::to_string(rhs.size()) + " values, " + terms.front().op->name() +
                         " takes " + std::to_string(n_));
    if (!std::isfinite(data_norm2) || data_norm2 < 0) throw InputError("CG: ||d||^2 is not a finite number >= 0");
    using Cg = ConjugateGradient<OperatorSpace>;
    std::vector<Cg::Term> cg_terms;
    for (const NormalTerm& t : terms) {
        if (!t.op) throw InputError("CG: term '" + t.name + "' has no operator");
        if (t.op->inSize() != n_)
            throw InputError("CG: term '" + t.name + "' (" + t.op->name() + ") takes " + std::to_string(t.op->inSize()) +
                             " values, the data term " + std::to_string(n_));
        if (&t.op->space() != &space_) throw InputError("CG: term '" + t.name + "' lives on another backend");
        if (!std::isfinite(t.weight) || t.weight < 0) throw InputError("CG: the weight of '" + t.name + "' is not a finite number >= 0");
        LinearOperatorPtr op = t.op;
        cg_terms.push_back({t.name, t.weight, [op](const Vector& in, Vector& out) { op->normal(in, out); }});
    }
    impl_->space.s = &space_;
    impl_->terms = std::move(terms);
    impl_->data.emplace(impl_->terms.front().op, data_norm2);
    impl_->cg = std::make_unique<Cg>(impl_->space, std::move(cg_terms), rhs, n_);
}

NormalEquationsCg::~NormalEquationsCg() = default;

bool NormalEquationsCg::step() {
    if (impl_->cg->step()) return true;
    if (impl_->cg->stats().nonfinite)
        throw NumericalError("CG stopped at iteration " + std::to_string(impl_->cg->stats().iteration + 1) +
                             ": a step length is not a finite number (overflow or NaN in the working precision)");
    return false;
}

IterationRecord NormalEquationsCg::record() const { return makeRecord(false); }
IterationRecord NormalEquationsCg::exactRecord() const { return makeRecord(true); }

IterationRecord NormalEquationsCg::makeRecord(bool exact) const {
    const CgStats& s = impl_->cg->stats();
    IterationRecord r;
    r.iteration = s.iteration;
    r.residual = s.residual;
    // ||A_0 x - d||^2 = x^H A_0^H A_0 x - 2 Re x^H A_0^H d + ||d||^2, or directly where that cancels
    r.data_term = s.forms.empty() ? 0.0 : impl_->data->value(impl_->cg->solution(), s.forms[0], s.real_xb, exact);
    for (std::size_t i = 1; i < s.forms.size(); ++i) r.penalty_term += impl_->cg->weight(i) * s.forms[i];
    if (impl_->has_truth && s.has_reference) {
        const Quality q = qualityFromErrorNorm(s.error_norm2, impl_->truth.norm2, impl_->truth.max_abs, n_);
        r.has_truth = true;
        r.error_percent = q.error_percent;
        r.psnr_db = q.psnr_db;
    }
    return r;
}

IterationRecord NormalEquationsCg::progressRecord() const {
    IterationRecord r;
    r.iteration = impl_->cg->iteration();
    r.residual = impl_->cg->residual();
    return r;
}

void NormalEquationsCg::image(ComplexArray& out) const { space_.download(impl_->cg->solution(), out); }
const Vector& NormalEquationsCg::solution() const { return impl_->cg->solution(); }

void NormalEquationsCg::setInitial(const ComplexArray& x0) {
    if (x0.size() != n_) throw InputError("CG: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(n_));
    impl_->cg->setInitial(space_.fromHost(x0));
}
void NormalEquationsCg::setInitial(const Vector& x0) {
    if (x0.size() != n_) throw InputError("CG: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(n_));
    impl_->cg->setInitial(x0);
}
cdouble NormalEquationsCg::setInitialScaled(const Vector& x0) {
    if (x0.size() != n_) throw InputError("CG: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(n_));
    return impl_->cg->setInitialScaled(x0);
}

void NormalEquationsCg::watch(const Vector& v) {
    if (v.size() != n_) throw InputError("CG: a watched vector has " + std::to_string(v.size()) + " values, not " + std::to_string(n_));
    impl_->cg->watch(v);
}
double NormalEquationsCg::watched(std::size_t k) const {
    const CgStats& s = impl_->cg->stats();
    if (k >= s.watched.size()) throw InputError("CG: no watched vector " + std::to_string(k));
    return s.watched[k];
}

double NormalEquationsCg::quadraticForm(std::size_t term) const {
    const CgStats& s = impl_->cg->stats();
    if (term >= s.forms.size()) throw InputError("CG: no term " + std::to_string(term));
    return s.forms[term];
}
void NormalEquationsCg::setData(std::shared_ptr<const Vector> data) { impl_->data->setData(std::move(data)); }
void NormalEquationsCg::setData(DataSource source) { impl_->data->setData(std::move(source)); }

void NormalEquationsCg::setRightHandSide(const Vector& rhs) {
    if (rhs.size() != n_) throw InputError("CG: the right-hand side has " + std::to_string(rhs.size()) + " values, not " + std::to_string(n_));
    impl_->cg->setRightHandSide(rhs);
}
void NormalEquationsCg::setWeight(std::size_t term, double weight) {
    if (term >= impl_->terms.size()) throw InputError("CG: no term " + std::to_string(term));
    if (!std::isfinite(weight) || weight < 0) throw InputError("CG: a weight must be a finite number >= 0");
    impl_->cg->setWeight(term, weight);
}
void NormalEquationsCg::reweight(std::size_t term, double weight) {
    if (term >= impl_->terms.size()) throw InputError("CG: no term " + std::to_string(term));
    if (!std::isfinite(weight) || weight < 0) throw InputError("CG: a weight must be a finite number >= 0");
    impl_->cg->reweight(term, weight);
}
namespace {
ConjugateGradient<OperatorSpace>::Apply preconditionerApply(const LinearOperatorPtr& m, VectorSpace& space, std::size_t n) {
    if (!m) return {};
    if (m->inSize() != n || m->outSize() != n)
        throw InputError("CG: the preconditioner " + m->name() + " maps " + std::to_string(m->inSize()) + " to " +
                         std::to_string(m->outSize()) + " values, the solve has " + std::to_string(n));
    if (&m->space() != &space) throw InputError("CG: the preconditioner " + m->name() + " lives on another backend");
    return [m](const Vector& in, Vector& out) { m->forward(in, out); };
}
}  // namespace

void NormalEquationsCg::setWeight(std::size_t term, double weight, LinearOperatorPtr preconditioner) {
    if (term >= impl_->terms.size()) throw InputError("CG: no term " + std::to_string(term));
    if (!std::isfinite(weight) || weight < 0) throw InputError("CG: a weight must be a finite number >= 0");
    auto apply = preconditionerApply(preconditioner, space_, n_);
    impl_->preconditioner = std::move(preconditioner);
    impl_->cg->setWeight(term, weight, std::move(apply));
}
void NormalEquationsCg::setWeightRecycling(std::size_t term, double weight, LinearOperatorPtr preconditioner) {
    if (term >= impl_->terms.size()) throw InputError("CG: no term " + std::to_string(term));
    if (!std::isfinite(weight) || weight < 0) throw InputError("CG: a weight must be a finite number >= 0");
    auto apply = preconditionerApply(preconditioner, space_, n_);
    impl_->preconditioner = std::move(preconditioner);
    impl_->cg->setWeightRecycling(term, weight, std::move(apply));
}
void NormalEquationsCg::keepDirections(std::size_t k) { impl_->cg->keepDirections(k); }
void NormalEquationsCg::stopRecycling() { impl_->cg->stopRecycling(); }
std::size_t NormalEquationsCg::keptDirections() const { return impl_->cg->keptDirections(); }
void NormalEquationsCg::setPreconditioner(LinearOperatorPtr preconditioner) {
    auto apply = preconditionerApply(preconditioner, space_, n_);
    impl_->preconditioner = std::move(preconditioner);
    impl_->cg->setPreconditioner(std::move(apply));
}
bool NormalEquationsCg::preconditioned() const { return impl_->preconditioner != nullptr; }
double NormalEquationsCg::weight(std::size_t term) const { return impl_->cg->weight(term); }
std::size_t NormalEquationsCg::terms() const { return impl_->terms.size(); }

void NormalEquationsCg::setTruth(const ComplexArray& truth) {
    if (truth.size() != n_) throw InputError("CG: the truth image does not match the grid");
    impl_->has_truth = true;
    impl_->truth = truthStats(truth);
    impl_->cg->setReference(space_.fromHost(truth));
}

}  // namespace recon
