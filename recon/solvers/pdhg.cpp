#include "recon/solvers/pdhg.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/solvers/fista.hpp"

namespace recon {

struct Pdhg::Impl {
    VectorSpace* space = nullptr;
    LinearOperatorPtr fourier;
    std::vector<SparseTerm> terms;
    std::vector<double> sigma;  // per term
    double tau = 0;
    std::size_t n = 0, m = 0;
    // The data dual's elementwise update u <- keep .* u + gain .* (F xbar - d).
    Vector keep, gain;
    // d, u, F x and F x_prev (F xbar = 2 F x - F x_prev), a sample-sized scratch.
    Vector data, u, fx, fx_prev, sample_scratch;
    // x, F^H u + sum_k W_k^H v_k, an image scratch; per term v_k, W_k x, W_k x_prev and a scratch.
    Vector x, gradient, image_scratch;
    std::vector<Vector> v, wx, wx_prev, scratch;
    double data_term = 0, penalty_term = 0, residual = 1, error_norm2 = 0;
    int total = 0;
    bool has_truth = false;
    Vector truth;
    TruthStats truth_stats;

    // The cost terms (and truth error) of x from F x and W_k x.
    void evaluate() {
        VectorSpace& s = *space;
        s.combine({1.0, -1.0}, {&fx, &data}, sample_scratch);
        data_term = s.norm2(sample_scratch);
        penalty_term = 0;
        for (std::size_t k = 0; k < terms.size(); ++k)
            if (terms[k].weight > 0) penalty_term += terms[k].weight * s.groupNorm1(wx[k], terms[k].group);
        if (has_truth) {
            const std::vector<cdouble> d = s.dots(x, {&x, &truth});
            error_norm2 = std::max(0.0, d[0].real() - 2 * d[1].real() + truth_stats.norm2);
        }
    }

    // After x changed other than by a step: F x, W_k x, and xbar = x (the previous products equal).
    void refreshProducts() {
        fourier->forward(x, fx);
        space->copy(fx, fx_prev);
        for (std::size_t k = 0; k < terms.size(); ++k) {
            terms[k].transform->forward(x, wx[k]);
            space->copy(wx[k], wx_prev[k]);
        }
    }
};

Pdhg::Pdhg(LinearOperatorPtr fourier, const Vector& data, std::vector<SparseTerm> terms, PdhgOptions opts, const Progress& progress)
    : impl_(std::make_unique<Impl>()) {
    if (!fourier) throw InputError("PDHG: no data operator");
    if (opts.power_iterations < 1) throw InputError("PDHG: the step sizes' power iterations need at least one iteration");
    if (!(opts.margin >= 1) || !std::isfinite(opts.margin)) throw InputError("PDHG: the steps' margin must be a finite number >= 1");
    if (!(opts.dual_scale > 0) || !std::isfinite(opts.dual_scale)) throw InputError("PDHG: the dual scale must be a finite number > 0");
    Impl& im = *impl_;
    im.space = &fourier->space();
    VectorSpace& s = *im.space;
    im.n = fourier->inSize();
    im.m = fourier->outSize();
    if (data.size() != im.m)
        throw InputError("PDHG: d has " + std::to_string(data.size()) + " values, F gives " + std::to_string(im.m));
    if (!opts.k_space_weights.empty() && opts.k_space_weights.size() != im.m)
        throw InputError("PDHG: " + std::to_string(opts.k_space_weights.size()) + " k-space weights for " + std::to_string(im.m) + " samples");
    for (double p : opts.k_space_weights)
        if (!(p >= 0) || !std::isfinite(p)) throw InputError("PDHG: a k-space weight is not a finite number >= 0");
    for (const SparseTerm& t : terms) checkSparseTerm(t, *im.space, im.n, "PDHG");

    // The steps: p normalised to ||diag(p)^{1/2} F|| = 1, sigma_k = 1 / ||W_k||^2, then tau from the
    // stacked operator's norm (at most 1 + the number of terms; the power iteration finds it).
    ComplexArray root(im.m, cdouble(1, 0));
    for (std::size_t i = 0; i < opts.k_space_weights.size(); ++i) root[i] = std::sqrt(opts.k_space_weights[i]);
    LinearOperatorPtr weighted = compose(diagonal(s, root, "p^(1/2)"), fourier);
    const double data_norm2 = estimateNormalNorm(*weighted, opts.power_iterations, 1.0, progress);
    if (!(data_norm2 > 0) || !std::isfinite(data_norm2)) throw NumericalError("PDHG: ||diag(p)^(1/2) F|| is zero or not finite");
    const double p_scale = 1 / data_norm2;
    std::vector<LinearOperatorPtr> stacked{scaled(std::sqrt(p_scale), weighted)};
    for (const SparseTerm& t : terms) {
        const double w_norm2 = estimateNormalNorm(*t.transform, opts.power_iterations, 1.0, progress);
        if (!(w_norm2 > 0) || !std::isfinite(w_norm2)) throw NumericalError("PDHG: ||W|| of '" + t.name + "' is zero or not finite");
        im.sigma.push_back(opts.dual_scale / w_norm2);
        stacked.push_back(scaled(1 / std::sqrt(w_norm2), t.transform));
    }
    const double stacked_norm2 = terms.empty() ? 1.0 : estimateNormalNorm(*vstack(stacked), opts.power_iterations, 1.0, progress);
    im.tau = 1 / (opts.dual_scale * opts.margin * stacked_norm2);

    ComplexArray keep(im.m), gain(im.m);
    for (std::size_t i = 0; i < im.m; ++i) {
        const double p = opts.dual_scale * p_scale * (opts.k_space_weights.empty() ? 1.0 : opts.k_space_weights[i]);
        keep[i] = 1 / (1 + p / 2);
        gain[i] = p / (1 + p / 2);
    }
    im.keep = s.fromHost(keep);
    im.gain = s.fromHost(gain);
    im.data = s.make(im.m);
    s.copy(data, im.data);
    for (Vector* vec : {&im.u, &im.fx, &im.fx_prev, &im.sample_scratch}) *vec = s.make(im.m);
    for (Vector* vec : {&im.x, &im.gradient, &im.image_scratch}) *vec = s.make(im.n);
    for (const SparseTerm& t : terms)
        for (auto* list : {&im.v, &im.wx, &im.wx_prev, &im.scratch}) list->push_back(s.make(t.transform->outSize()));
    im.fourier = std::move(fourier);
    im.terms = std::move(terms);
    im.evaluate();  // x = 0: its products are 0
}

Pdhg::~Pdhg() = default;

bool Pdhg::step() {
    Impl& m = *impl_;
    VectorSpace& s = *m.space;
    // u <- keep .* u + gain .* (2 F x - F x_prev - d).
    s.combine({2.0, -1.0, -1.0}, {&m.fx, &m.fx_prev, &m.data}, m.sample_scratch);
    s.multiply(m.gain, m.sample_scratch, m.sample_scratch);
    s.multiply(m.keep, m.u, m.u);
    s.axpy(1.0, m.sample_scratch, m.u);
    m.fourier->adjoint(m.u, m.gradient);
    // v_k <- proj(v_k + sigma_k (2 W_k x - W_k x_prev)), proj(a) = a - groupSoft(a, w_k).
    for (std::size_t k = 0; k < m.terms.size(); ++k) {
        const SparseTerm& t = m.terms[k];
        s.combine({2 * m.sigma[k], -m.sigma[k]}, {&m.wx[k], &m.wx_prev[k]}, m.scratch[k]);  // combine's y must not be an x
        s.axpy(1.0, m.scratch[k], m.v[k]);
        s.groupSoftThreshold(m.v[k], t.group, t.weight, m.scratch[k]);
        s.axpy(-1.0, m.scratch[k], m.v[k]);
        t.transform->adjoint(m.v[k], m.image_scratch);
        s.axpy(1.0, m.image_scratch, m.gradient);
    }
    const double change2 = m.tau * m.tau * s.norm2(m.gradient);
    const double x2 = s.axpyNorm2(-m.tau, m.gradient, m.x);
    m.residual = x2 > 0 ? std::sqrt(change2 / x2) : 0.0;
    // The products of x+; the old ones become x_prev's (xbar's next time).
    std::swap(m.fx, m.fx_prev);
    m.fourier->forward(m.x, m.fx);
    for (std::size_t k = 0; k < m.terms.size(); ++k) {
        std::swap(m.wx[k], m.wx_prev[k]);
        m.terms[k].transform->forward(m.x, m.wx[k]);
    }
    m.evaluate();
    ++m.total;
    return true;
}

IterationRecord Pdhg::record() const {
    const Impl& m = *impl_;
    return scalarRecord(m.total, m.residual, m.data_term, m.penalty_term, m.has_truth ? &m.truth_stats : nullptr, m.error_norm2, m.n);
}

void Pdhg::image(ComplexArray& out) const { impl_->space->download(impl_->x, out); }
const Vector& Pdhg::solution() const { return impl_->x; }
double Pdhg::primalStep() const { return impl_->tau; }

double Pdhg::dualStep(std::size_t term) const {
    if (term >= impl_->terms.size()) throw InputError("PDHG: no term " + std::to_string(term));
    return impl_->sigma[term];
}

double Pdhg::weight(std::size_t term) const {
    if (term >= impl_->terms.size()) throw InputError("PDHG: no term " + std::to_string(term));
    return impl_->terms[term].weight;
}

void Pdhg::setWeight(std::size_t term, double weight) {
    Impl& m = *impl_;
    if (term >= m.terms.size()) throw InputError("PDHG: no term " + std::to_string(term));
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("PDHG: a weight must be a finite number >= 0");
    const double old = m.terms[term].weight;
    if (old > 0) m.space->scale(weight / old, m.v[term]);
    else m.space->zero(m.v[term]);
    m.terms[term].weight = weight;
    m.evaluate();
}

void Pdhg::setInitial(const ComplexArray& x0) {
    Impl& m = *impl_;
    if (x0.size() != m.n)
        throw InputError("PDHG: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(m.n));
    m.space->upload(x0, m.x);
    m.space->zero(m.u);
    for (Vector& v : m.v) m.space->zero(v);
    m.refreshProducts();
    m.evaluate();
}

void Pdhg::setTruth(const ComplexArray& truth) {
    Impl& m = *impl_;
    if (truth.size() != m.n) throw InputError("PDHG: the truth image does not match the grid");
    m.truth = m.space->fromHost(truth);
    m.truth_stats = truthStats(truth);
    m.has_truth = true;
    m.evaluate();
}

}  // namespace recon
