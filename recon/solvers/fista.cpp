#include "recon/solvers/fista.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>

#include "recon/core/metrics.hpp"
#include "recon/solvers/data_term.hpp"

namespace recon {
namespace {

// A fixed pseudo-random complex vector, uniform in [-1/2, 1/2)^2 (a 64-bit LCG): the orthogonality
// probe and the power iteration's start. Normal draws took about 0.1 s per 128^3 vector on the host,
// more than the rest of a GPU solve's setup.
ComplexArray pseudoRandom(std::size_t n, std::uint64_t seed) {
    ComplexArray v(n);
    auto next = [&seed] {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return double(seed >> 11) * 0x1p-53 - 0.5;
    };
    for (auto& x : v) {
        const double re = next();
        x = cdouble(re, next());
    }
    return v;
}

}  // namespace

struct Fista::Impl {
    VectorSpace* space = nullptr;
    LinearOperatorPtr fourier;
    SparseTerm term;
    const ShrinkableTransform* shrinker = nullptr;  // the term's own prox, where it has one (wavelets)
    FistaOptions opts;
    std::size_t n = 0;
    double fhd_norm = 0;
    std::optional<DataTerm> data;  // the records' ||F x - d||^2
    std::mt19937_64 rng;
    // x and F^H F x for this iterate and, FISTA, the last; FISTA's new iterate y before it becomes x;
    // POGM's gradient steps u_k, u_{k-1} and its z_k; the prox's input v (then the residual's
    // vector); W's scratch where the term has no prox of its own.
    Vector fhd, x, x_prev, ax, ax_prev, y, u, u_prev, z, v, shifted, coeffs;
    std::vector<Vector> spins;              // the Averaged rule's proxes, one per shift
    std::vector<std::size_t> penalty_shifts;  // the penalty's: {0}, or the Averaged rule's offsets
    double momentum = 1;  // t_k
    double zeta = 0;      // POGM's last prox step
    // The cost of x (the restart's test, expanded), from x^H F^H F x and Re x^H F^H d.
    double data_term = 0, penalty_term = 0, residual = 1, form = 0, real_xb = 0;
    int total = 0, restarts = 0;
    bool has_truth = false;
    Vector truth;
    TruthStats truth_stats;
    double error_norm2 = 0;

    // The step's prox of t ||W P_s .||_1 under the shift rule (random s, none, or the average over
    // the Averaged rule's shifts) into out; true where `coeffs` then holds W out (unshifted, no fused prox).
    bool prox(const Vector& from, double threshold, Vector& out) {
        if (opts.shifts == WaveletShifts::Averaged) {
            std::vector<const Vector*> parts;
            for (std::size_t k = 0; k < spins.size(); ++k) {
                proxAt(from, opts.averaged_offsets[k], threshold, spins[k]);
                parts.push_back(&spins[k]);
            }
            space->combine(std::vector<double>(spins.size(), 1.0 / double(spins.size())), parts, out);
            return false;
        }
        const std::size_t offset = opts.shifts == WaveletShifts::Random ? std::size_t(rng() % n) : 0;
        return proxAt(from, offset, threshold, out);
    }

    // out = prox_{t ||W P_s .||_1}(in) = P_s^H W^H soft(W P_s in, t) for the shift s = offset.
    bool proxAt(const Vector& from, std::size_t offset, double threshold, Vector& out) {
        if (shrinker) {
            shrinker->shrink(from, offset, threshold, out);
            return false;
        }
        const Vector* in = &from;
        if (offset != 0) {
            cyclicShift(*space, from, offset, shifted);
            in = &shifted;
        }
        term.transform->forward(*in, coeffs);
        space->softThreshold(coeffs, threshold, coeffs);
        if (offset == 0) {
            term.transform->adjoint(coeffs, out);
        } else {
            term.transform->adjoint(coeffs, shifted);
            cyclicShift(*space, shifted, n - offset, out);
        }
        return offset == 0;
    }

    // The cost terms (and the error against the truth) of x, from F^H F x, and ||r||^2 of the
    // residual's vector r where one is given: one pass of dots (one round trip on a GPU) and the
    // penalty (||W x||_1, the Averaged rule's mean over its shifts: the term's fused norm, else
    // one wavelet transform unless `coeffs` already holds W x after an unshifted prox); no Fourier
    // work. Returns ||r||^2.
    double evaluate(bool coeffs_hold_wx = false, const Vector* r = nullptr) {
        std::vector<VectorSpace::VectorPair> pairs{{&x, &ax}, {&x, &fhd}, {&x, &x}};
        if (has_truth) pairs.emplace_back(&x, &truth);
        if (r) pairs.emplace_back(r, r);
        const std::vector<cdouble> d = space->dotPairs(pairs);
        form = d[0].real();
        real_xb = d[1].real();
        data_term = std::max(0.0, data->expanded(form, real_xb));
        penalty_term = 0;
        if (term.weight > 0) {
            if (shrinker) {
                penalty_term = term.weight * shrinker->norm1(x, penalty_shifts);
            } else if (opts.shifts == WaveletShifts::Averaged) {
                double sum = 0;
                for (std::size_t offset : penalty_shifts) {
                    cyclicShift(*space, x, offset, shifted);
                    term.transform->forward(shifted, coeffs);
                    sum += space->norm1(coeffs);
                }
                penalty_term = term.weight * sum / double(penalty_shifts.size());
            } else {
                if (!coeffs_hold_wx) term.transform->forward(x, coeffs);
                penalty_term = term.weight * space->norm1(coeffs);
            }
        }
        if (has_truth) error_norm2 = std::max(0.0, d[2].real() - 2 * d[3].real() + truth_stats.norm2);
        return r ? d.back().real() : 0.0;
    }

    // Momentum off: the next step is a plain proximal gradient step from x (POGM: its first
    // step from x, where u_{k-1} and z_{k-1} enter with weight 0).
    void resetMomentum() {
        if (opts.momentum == Momentum::Fista) {
            space->copy(x, x_prev);
            space->copy(ax, ax_prev);
        }
        momentum = 1;
    }

    // One FISTA step up to the prox: x_prev, ax_prev = the old x, ax; v = the new x minus the
    // extrapolated point (the residual's vector, times 1/L); returns prox()'s.
    bool stepFista() {
        VectorSpace& s = *space;
        const double lip = opts.lipschitz;
        // The extrapolated point e = x + beta (x - x_prev), F^H F e from the two products already
        // known, and v = e - grad/(2L), grad = 2 (F^H F e - F^H d), in one pass.
        const double next = (1 + std::sqrt(1 + 4 * momentum * momentum)) / 2;
        const double beta = (momentum - 1) / next;
        momentum = next;
        s.combine({1 + beta, -beta, -(1 + beta) / lip, beta / lip, 1 / lip}, {&x, &x_prev, &ax, &ax_prev, &fhd}, v);
        const bool holds_wx = prox(v, term.weight / (2 * lip), y);
        s.combine({1.0, -(1 + beta), beta}, {&y, &x, &x_prev}, v);  // the new x - e
        // x_prev, x = x, y; the new x's F^H F product goes to ax after the swap.
        std::swap(x_prev, x);
        std::swap(x, y);
        std::swap(ax, ax_prev);
        return holds_wx;
    }

    // One POGM step up to the prox (fista.hpp has the recursion); ax stays F^H F of the old x.
    bool stepPogm() {
        VectorSpace& s = *space;
        const double lip = opts.lipschitz, alpha = 1 / (2 * lip);
        const double next = (1 + std::sqrt(1 + 4 * momentum * momentum)) / 2;
        const double beta = (momentum - 1) / next, gamma = momentum / next;
        const double c = beta > 0 ? beta * alpha / zeta : 0.0;  // zeta is set whenever beta > 0
        momentum = next;
        std::swap(u, u_prev);
        s.combine({1.0, -1 / lip, 1 / lip}, {&x, &ax, &fhd}, u);  // u = x - alpha 2 (F^H F x - F^H d)
        s.combine({1 + beta + gamma, -beta, -(gamma + c), c}, {&u, &u_prev, &x, &z}, v);
        std::swap(v, z);
        zeta = alpha * (1 + beta + gamma);
        // v = x_{k-1} while the prox writes the new x (x_{k-1} is needed for the residual).
        std::swap(x, v);
        const bool holds_wx = prox(z, zeta * term.weight, x);
        // The residual's vector: (F^H F x_{k-1} - F^H d) - (x_k - z_k) / (2 zeta), v no longer needed.
        s.combine({1.0, -1.0, -1 / (2 * zeta), 1 / (2 * zeta)}, {&ax, &fhd, &x, &z}, v);
        return holds_wx;
    }
};

Fista::Fista(LinearOperatorPtr fourier, const Vector& rhs, double data_norm2, SparseTerm term, FistaOptions opts)
    : impl_(std::make_unique<Impl>()) {
    if (!fourier) throw InputError("FISTA: no data operator");
    if (!(opts.lipschitz > 0) || !std::isfinite(opts.lipschitz))
        throw InputError("FISTA: the bound on ||F^H F|| must be a finite number > 0 (no samples?)");
    if (!(data_norm2 >= 0) || !std::isfinite(data_norm2)) throw InputError("FISTA: ||d||^2 is not a finite number >= 0");
    Impl& m = *impl_;
    m.space = &fourier->space();
    m.n = fourier->inSize();
    if (rhs.size() != m.n)
        throw InputError("FISTA: F^H d has " + std::to_string(rhs.size()) + " values, the image " + std::to_string(m.n));
    if (!term.transform) throw InputError("FISTA: the term '" + term.name + "' has no transform");
    if (&term.transform->space() != m.space) throw InputError("FISTA: the term '" + term.name + "' lives on another backend");
    if (term.transform->inSize() != m.n || term.transform->outSize() != m.n || term.group != 1)
        throw InputError("FISTA: the term '" + term.name + "' (" + term.transform->name() +
                         ") is not a square transform with a plain l1 norm; FISTA needs an orthogonal one (wavelets)");
    if (!(term.weight >= 0) || !std::isfinite(term.weight))
        throw InputError("FISTA: the weight of '" + term.name + "' is not a finite number >= 0");
    m.fourier = std::move(fourier);
    m.term = std::move(term);
    m.opts = opts;
    m.data.emplace(m.fourier, data_norm2);
    m.rng.seed(opts.seed);
    VectorSpace& s = *m.space;
    m.shrinker = dynamic_cast<const ShrinkableTransform*>(m.term.transform.get());
    m.penalty_shifts = {0};
    if (opts.shifts == WaveletShifts::Averaged) {
        // The mean of the proxes is the prox of a function that depends on the step (the proximal
        // average): FISTA's step is fixed, POGM's grows and restarts, and its iterates were
        // measured to cycle (1.5 % apart after 3000 steps on the tests' problem, with or without restarts).
        if (opts.momentum == Momentum::Pogm)
            throw InputError("POGM does not converge under the averaged wavelet shifts (its prox step changes); use FISTA");
        if (opts.averaged_offsets.empty() || opts.averaged_offsets.size() > 16)
            throw InputError("FISTA: the averaged shift rule needs 1..16 offsets, not " + std::to_string(opts.averaged_offsets.size()));
        for (std::size_t o : opts.averaged_offsets) {
            if (o >= m.n) throw InputError("FISTA: a shift offset of " + std::to_string(o) + " in an image of " + std::to_string(m.n));
            m.spins.push_back(s.make(m.n));
        }
        m.penalty_shifts = opts.averaged_offsets;
    }
    for (Vector* vec : {&m.fhd, &m.x, &m.ax, &m.v, &m.shifted, &m.coeffs}) *vec = s.make(m.n);
    if (opts.momentum == Momentum::Fista)
        for (Vector* vec : {&m.x_prev, &m.ax_prev, &m.y}) *vec = s.make(m.n);
    else
        for (Vector* vec : {&m.u, &m.u_prev, &m.z}) *vec = s.make(m.n);
    s.copy(rhs, m.fhd);
    m.fhd_norm = std::sqrt(s.norm2(m.fhd));
    // The prox is exact only for an orthogonal W: check W^H W = I on one vector before trusting it.
    s.upload(pseudoRandom(m.n, 7), m.v);
    m.term.transform->forward(m.v, m.coeffs);
    m.term.transform->adjoint(m.coeffs, m.shifted);
    const double probe2 = s.norm2(m.v), diff2 = s.axpyNorm2(-1.0, m.v, m.shifted);
    if (!(diff2 <= 1e-6 * probe2))
        throw InputError("FISTA: the transform of '" + m.term.name + "' (" + m.term.transform->name() + ") is not orthogonal");
    s.zero(m.v);
    s.zero(m.shifted);
    s.zero(m.coeffs);
    m.evaluate();
}

Fista::~Fista() = default;

bool Fista::step() {
    Impl& m = *impl_;
    if (m.fhd_norm == 0) return false;  // d = 0: x = 0 is the minimiser
    const double cost_before = m.data_term + m.penalty_term;
    const bool pogm = m.opts.momentum == Momentum::Pogm;
    const bool holds_wx = pogm ? m.stepPogm() : m.stepFista();
    m.fourier->normal(m.x, m.ax);
    // v holds the residual's vector (FISTA: times 1/L).
    const double r2 = m.evaluate(holds_wx, &m.v);
    m.residual = (pogm ? 1.0 : m.opts.lipschitz) * std::sqrt(r2) / m.fhd_norm;
    ++m.total;
    if (m.opts.restart && m.data_term + m.penalty_term > cost_before) {
        m.momentum = 1;  // the next step starts afresh from x (FISTA: y = x; POGM: beta = 0)
        ++m.restarts;
    }
    return true;
}

IterationRecord Fista::record() const {
    const Impl& m = *impl_;
    return scalarRecord(m.total, m.residual, m.data_term, m.penalty_term, m.has_truth ? &m.truth_stats : nullptr, m.error_norm2, m.n);
}
IterationRecord Fista::exactRecord() const {
    const Impl& m = *impl_;
    return scalarRecord(m.total, m.residual, m.data->value(m.x, m.form, m.real_xb, true), m.penalty_term,
                        m.has_truth ? &m.truth_stats : nullptr, m.error_norm2, m.n);
}

void Fista::setData(std::shared_ptr<const Vector> data) { impl_->data->setData(std::move(data)); }
void Fista::setData(DataSource source) { impl_->data->setData(std::move(source)); }

void Fista::image(ComplexArray& out) const { impl_->space->download(impl_->x, out); }
const Vector& Fista::solution() const { return impl_->x; }
double Fista::weight() const { return impl_->term.weight; }
double Fista::stepSize() const { return 1 / (2 * impl_->opts.lipschitz); }
int Fista::restarts() const { return impl_->restarts; }

void Fista::setWeight(double weight) {
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("FISTA: a weight must be a finite number >= 0");
    Impl& m = *impl_;
    m.term.weight = weight;
    m.resetMomentum();
    m.evaluate();
}

void Fista::setInitial(const ComplexArray& x0) {
    Impl& m = *impl_;
    if (x0.size() != m.n)
        throw InputError("FISTA: the starting image has " + std::to_string(x0.size()) + " values, not " + std::to_string(m.n));
    m.space->upload(x0, m.x);
    m.fourier->normal(m.x, m.ax);
    m.resetMomentum();
    m.evaluate();
}

void Fista::setTruth(const ComplexArray& truth) {
    Impl& m = *impl_;
    if (truth.size() != m.n) throw InputError("FISTA: the truth image does not match the grid");
    m.truth = m.space->fromHost(truth);
    m.truth_stats = truthStats(truth);
    m.has_truth = true;
    m.evaluate();
}

double estimateNormalNorm(const LinearOperator& a, int iterations, double margin, const Progress& progress) {
    if (iterations < 1) throw InputError("power iteration: at least one iteration");
    if (!(margin >= 1) || !std::isfinite(margin)) throw InputError("power iteration: the margin must be a finite number >= 1");
    VectorSpace& s = a.space();
    const std::size_t n = a.inSize();
    Vector x = s.fromHost(pseudoRandom(n, 11)), ax = s.make(n);
    s.scale(1 / std::sqrt(s.norm2(x)), x);
    double eigenvalue = 0;
    for (int i = 0; i < iterations; ++i) {
        a.normal(x, ax);
        eigenvalue = s.dot(x, ax).real();  // Rayleigh quotient of the unit vector x
        const double norm = std::sqrt(s.norm2(ax));
        if (!(norm > 0)) return 0;  // A = 0
        if (!std::isfinite(norm)) throw NumericalError("power iteration: ||A^H A x|| is not a finite number");
        std::swap(x, ax);
        s.scale(1 / norm, x);
        progress.update(double(i + 1) / iterations);
    }
    return eigenvalue * margin;
}

}  // namespace recon
