#include "recon/solvers/pdhg.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <cstdio>
#include <cstdlib>

#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/solvers/fista.hpp"

namespace recon {

struct Pdhg::Impl {
    VectorSpace* space = nullptr;
    LinearOperatorPtr fourier, metric;  // F; P0^{-1} (null: identity)
    std::vector<SparseTerm> terms;
    std::vector<double> sigma;
    PdhgOptions opts;
    std::size_t n = 0;
    double data_norm2 = 0, c = 1;
    // x, F^H F x, F^H d; the gradient and its preconditioned form; per term y_k, W_k x and a scratch.
    Vector x, ax, fhd, grad, step, image_scratch;
    std::vector<Vector> y, wx, scratch;
    double data_term = 0, penalty_term = 0, residual = 1, error_norm2 = 0;
    int total = 0;
    bool has_truth = false;
    Vector truth;
    TruthStats truth_stats;

    void applyMetric(const Vector& in, Vector& out) const {
        if (metric) metric->forward(in, out);
        else space->copy(in, out);
    }

    // c = margin x the largest eigenvalue of P0^{-1} A, A = F^H F + sum_k sigma_k W_k^H W_k, by power
    // iteration on P0^{-1} A; P0^{-1} A is self-adjoint in A's inner product, so its Rayleigh quotient
    // there, (A v)^H P0^{-1} (A v) / v^H A v, approaches the eigenvalue from below.
    void estimateMetricScale(const Progress& progress) {
        VectorSpace& s = *space;
        Vector v = s.fromHost(pseudoRandom(n, 13)), av = s.make(n), pav = s.make(n);
        double estimate = 0;
        for (int i = 0; i < opts.power_iterations; ++i) {
            fourier->normal(v, av);
            for (std::size_t k = 0; k < terms.size(); ++k) {
                terms[k].transform->normal(v, image_scratch);
                s.axpy(sigma[k], image_scratch, av);
            }
            applyMetric(av, pav);
            const std::vector<cdouble> d = s.dots(av, {&v, &pav});
            const double vav = d[0].real(), avpav = d[1].real();
            if (!(vav > 0) || !std::isfinite(avpav)) throw NumericalError("PDHG: the metric's power iteration broke down (A v = 0 or not finite)");
            estimate = avpav / vav;
            const double norm = std::sqrt(s.norm2(pav));
            if (!(norm > 0) || !std::isfinite(norm)) throw NumericalError("PDHG: P0^{-1} A v is zero or not finite");
            std::swap(v, pav);
            s.scale(1 / norm, v);
            progress.update(double(i + 1) / opts.power_iterations);
        }
        c = opts.margin * estimate;
        if (getenv("PDHG_DEBUG")) fprintf(stderr, "pdhg c=%g sigma=%g\n", c, sigma.empty() ? 0.0 : sigma[0]);
    }

    // The cost terms (and truth error) of x from F^H F x and W_k x: one pass of dots, one group norm per term.
    void evaluate() {
        std::vector<const Vector*> with{&ax, &fhd, &x};
        if (has_truth) with.push_back(&truth);
        const std::vector<cdouble> d = space->dots(x, with);
        data_term = std::max(0.0, d[0].real() - 2 * d[1].real() + data_norm2);
        penalty_term = 0;
        for (std::size_t k = 0; k < terms.size(); ++k)
            if (terms[k].weight > 0) penalty_term += terms[k].weight * space->groupNorm1(wx[k], terms[k].group);
        if (has_truth) error_norm2 = std::max(0.0, d[2].real() - 2 * d[3].real() + truth_stats.norm2);
    }

    // x's products after x changed other than by a step: F^H F x and W_k x.
    void refreshProducts() {
        fourier->normal(x, ax);
        for (std::size_t k = 0; k < terms.size(); ++k) terms[k].transform->forward(x, wx[k]);
    }
};

Pdhg::Pdhg(LinearOperatorPtr fourier, const Vector& rhs, double data_norm2, std::vector<SparseTerm> terms, PdhgOptions opts,
           const Progress& progress)
    : impl_(std::make_unique<Impl>()) {
    if (!fourier) throw InputError("PDHG: no data operator");
    if (!(data_norm2 >= 0) || !std::isfinite(data_norm2)) throw InputError("PDHG: ||d||^2 is not a finite number >= 0");
    if (opts.power_iterations < 1) throw InputError("PDHG: the metric's power iteration needs at least one iteration");
    if (!(opts.margin > 1) || !std::isfinite(opts.margin)) throw InputError("PDHG: the metric's margin must be a finite number > 1");
    if (!opts.sigmas.empty() && opts.sigmas.size() != terms.size())
        throw InputError("PDHG: " + std::to_string(opts.sigmas.size()) + " dual steps for " + std::to_string(terms.size()) + " terms");
    Impl& m = *impl_;
    m.space = &fourier->space();
    m.n = fourier->inSize();
    if (rhs.size() != m.n) throw InputError("PDHG: F^H d has " + std::to_string(rhs.size()) + " values, the image " + std::to_string(m.n));
    VectorSpace& s = *m.space;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const SparseTerm& t = terms[k];
        if (!t.transform) throw InputError("PDHG: the term '" + t.name + "' has no transform");
        if (t.transform->inSize() != m.n)
            throw InputError("PDHG: the term '" + t.name + "' (" + t.transform->name() + ") takes " +
                             std::to_string(t.transform->inSize()) + " values, the image has " + std::to_string(m.n));
        if (&t.transform->space() != m.space) throw InputError("PDHG: the term '" + t.name + "' lives on another backend");
        if (!(t.weight >= 0) || !std::isfinite(t.weight)) throw InputError("PDHG: the weight of '" + t.name + "' is not a finite number >= 0");
        groupStride(t.transform->outSize(), t.group, "PDHG");
        const double sg = opts.sigmas.empty() ? opts.sigma : opts.sigmas[k];
        if (!(sg > 0) || !std::isfinite(sg)) throw InputError("PDHG: the dual step of '" + t.name + "' must be a finite number > 0");
        m.sigma.push_back(sg);
        m.y.push_back(s.make(t.transform->outSize()));
        m.wx.push_back(s.make(t.transform->outSize()));
        m.scratch.push_back(s.make(t.transform->outSize()));
    }
    m.fourier = std::move(fourier);
    m.terms = std::move(terms);
    m.opts = std::move(opts);
    m.data_norm2 = data_norm2;
    for (Vector* v : {&m.x, &m.ax, &m.fhd, &m.grad, &m.step, &m.image_scratch}) *v = s.make(m.n);
    s.copy(rhs, m.fhd);
    if (m.opts.metric_inverse) {
        m.metric = m.opts.metric_inverse(m.sigma);
        if (!m.metric || m.metric->inSize() != m.n || m.metric->outSize() != m.n || &m.metric->space() != m.space)
            throw InputError("PDHG: the metric does not map the image onto itself on F's backend");
    }
    m.estimateMetricScale(progress);
    m.evaluate();  // x = 0: its products are 0
}

Pdhg::~Pdhg() = default;

bool Pdhg::step() {
    Impl& m = *impl_;
    VectorSpace& s = *m.space;
    // grad = 2 (F^H F x - F^H d) + sum_k W_k^H y_k; x+ = x - P0^{-1} grad / c.
    s.combine({2.0, -2.0}, {&m.ax, &m.fhd}, m.grad);
    for (std::size_t k = 0; k < m.terms.size(); ++k) {
        m.terms[k].transform->adjoint(m.y[k], m.image_scratch);
        s.axpy(1.0, m.image_scratch, m.grad);
    }
    m.applyMetric(m.grad, m.step);
    const double change2 = s.norm2(m.step) / (m.c * m.c);
    const double x2 = s.axpyNorm2(-1 / m.c, m.step, m.x);
    m.residual = x2 > 0 ? std::sqrt(change2 / x2) : 0.0;
    // y_k = proj(v), v = y_k + sigma_k W_k (2 x+ - x) = y_k + sigma_k (2 W_k x+ - W_k x); proj(v) = v - soft(v, w_k).
    for (std::size_t k = 0; k < m.terms.size(); ++k) {
        const SparseTerm& t = m.terms[k];
        t.transform->forward(m.x, m.scratch[k]);
        s.combine({1.0, 2 * m.sigma[k], -m.sigma[k]}, {&m.y[k], &m.scratch[k], &m.wx[k]}, m.y[k]);
        std::swap(m.wx[k], m.scratch[k]);  // W_k x+ kept for the next step and the records
        s.groupSoftThreshold(m.y[k], t.group, t.weight, m.scratch[k]);
        s.axpy(-1.0, m.scratch[k], m.y[k]);
    }
    m.fourier->normal(m.x, m.ax);
    m.evaluate();
    ++m.total;
    return true;
}

IterationRecord Pdhg::record() const {
    const Impl& m = *impl_;
    IterationRecord r;
    r.iteration = m.total;
    r.residual = m.total == 0 ? 1.0 : m.residual;
    r.data_term = m.data_term;
    r.penalty_term = m.penalty_term;
    if (m.has_truth) {
        const Quality q = qualityFromErrorNorm(m.error_norm2, m.truth_stats.norm2, m.truth_stats.max_abs, m.n);
        r.has_truth = true;
        r.error_percent = q.error_percent;
        r.psnr_db = q.psnr_db;
    }
    return r;
}

void Pdhg::image(ComplexArray& out) const { impl_->space->download(impl_->x, out); }
const Vector& Pdhg::solution() const { return impl_->x; }
double Pdhg::metricScale() const { return impl_->c; }

double Pdhg::weight(std::size_t term) const {
    if (term >= impl_->terms.size()) throw InputError("PDHG: no term " + std::to_string(term));
    return impl_->terms[term].weight;
}

void Pdhg::setWeight(std::size_t term, double weight) {
    Impl& m = *impl_;
    if (term >= m.terms.size()) throw InputError("PDHG: no term " + std::to_string(term));
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("PDHG: a weight must be a finite number >= 0");
    const double old = m.terms[term].weight;
    if (old > 0) m.space->scale(weight / old, m.y[term]);
    else m.space->zero(m.y[term]);
    m.terms[term].weight = weight;
    m.evaluate();
}

void Pdhg::setInitial(const ComplexArray& x0) {
    Impl& m = *impl_;
    if (x0.size() != m.n)
        throw InputError("PDHG: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(m.n));
    m.space->upload(x0, m.x);
    for (Vector& y : m.y) m.space->zero(y);
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
