#include "recon/solvers/admm.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "recon/core/errors.hpp"
#include "recon/solvers/data_term.hpp"

namespace recon {

struct Admm::Impl {
    VectorSpace* space = nullptr;
    std::size_t n = 0;
    Vector fhd;
    std::optional<DataTerm> data;  // ||F x - d||^2 (the CG's own rhs moves with z and u)
    std::vector<SparseTerm> terms;
    AdmmOptions opts;
    double tau = 0;         // the shrinkage per z-step
    double rho_scale = 1;   // residual balancing's factor on every rho
    std::vector<double> rho;
    std::unique_ptr<NormalEquationsCg> cg;
    std::vector<Vector> z, u;
    mutable std::vector<Vector> wx;  // W_k x scratch (records too)
    mutable bool wx_current = false; // wx holds W_k x of the current x (a record's, reused by the next outer step)
    Vector rhs, image_scratch;
    Vector wz, wu, wz_old;  // sum_k rho_k W_k^H z_k, sum_k rho_k W_k^H u_k, the former's last value
    bool have_wz_old = false;
    int inner = 0;       // CG iterations since the last outer update
    int total = 0;       // CG iterations since the start
    int outer = 0;
    int since_start = 0; // outer updates since the start or the last weight change (rho adapts early)
    bool outer_due = false;
    double primal_residual = 1;

    std::vector<double> rho_preconditioned;  // the rho the preconditioner was made for
    // Spectral rho: this outer step's W x and intermediate dual rho (u + W x - z_old), and, from the
    // last estimate's step, the same with its z and dual rho u.
    std::vector<Vector> wx_now, dual_hat, wx_then, dual_hat_then, z_then, dual_then;
    bool have_then = false;
    int since_then = 0;
    bool spectral() const { return opts.adaptive_rho && opts.spectral_rho; }

    double rhoFor(double weight) const { return rho_scale * weight / (2 * tau); }

    // A new preconditioner when a rho has moved far from the one the current one was made for.
    void refreshPreconditioner() {
        if (!opts.preconditioner) return;
        bool stale = rho_preconditioned.size() != rho.size();
        for (std::size_t k = 0; !stale && k < rho.size(); ++k) {
            const double a = rho[k], b = rho_preconditioned[k];
            stale = (a > 0) != (b > 0) || (a > 0 && std::max(a / b, b / a) > opts.rebuild_ratio);
        }
        if (!stale) return;
        cg->setPreconditioner(opts.preconditioner(rho));
        rho_preconditioned = rho;
    }

    // z- and u-updates from the current x, rho balanced, then the x-update's new right-hand side.
    void outerUpdate() {
        const Vector& x = cg->solution();
        const double alpha = opts.relaxation;
        double primal2 = 0, wx2 = 0, z2 = 0;
        space->zero(wz);
        space->zero(wu);
        for (std::size_t k = 0; k < terms.size(); ++k) {
            if (rho[k] == 0) continue;
            const SparseTerm& t = terms[k];
            if (!wx_current) t.transform->forward(x, wx[k]);
            if (spectral()) {
                space->copy(wx[k], wx_now[k]);
                space->copy(u[k], dual_hat[k]);
                space->axpy(1.0, wx[k], dual_hat[k]);
                space->axpy(-1.0, z[k], dual_hat[k]);
                space->scale(rho[k], dual_hat[k]);
            }
            space->axpy(alpha, wx[k], u[k]);                                  // v = alpha W x + (1 - alpha) z + u
            if (alpha != 1) space->axpy(1 - alpha, z[k], u[k]);
            space->groupSoftThreshold(u[k], t.group, t.weight / (2 * rho[k]), z[k]);  // z = prox(v)
            space->axpy(-1.0, z[k], u[k]);                                    // u = v - z
            // ||W x||^2, ||z||^2 and ||W x - z||^2 from one pass (sums of float products in float64).
            const std::vector<cdouble> d = space->dotPairs({{&wx[k], &wx[k]}, {&z[k], &z[k]}, {&z[k], &wx[k]}});
            wx2 += d[0].real();
            z2 += d[1].real();
            primal2 += std::max(0.0, d[0].real() + d[1].real() - 2 * d[2].real());
            t.transform->adjoint(z[k], image_scratch);
            space->axpy(rho[k], image_scratch, wz);
            t.transform->adjoint(u[k], image_scratch);
            space->axpy(rho[k], image_scratch, wu);
        }
        primal_residual = wx2 > 0 ? std::sqrt(primal2 / wx2) : 0.0;
        const bool estimated = spectral() && since_start < opts.adapt_outer && spectralRho();
        if (!estimated && opts.adaptive_rho && have_wz_old && since_start < opts.adapt_outer) balance(primal2, std::max(wx2, z2));
        space->copy(wz, wz_old);
        have_wz_old = true;
        space->copy(fhd, rhs);                                                // rhs = F^H d + sum rho W^H (z - u)
        space->axpy(1.0, wz, rhs);
        space->axpy(-1.0, wu, rhs);
        cg->setRightHandSide(rhs);
        inner = 0;
        ++outer;
        ++since_start;
        outer_due = false;
    }

    // Residual balancing on the relative residuals: primal ||W x - z|| / max(||W x||, ||z||), dual
    // ||rho W^H (z - z_old)|| / ||rho W^H u|| (the scaled dual times rho is the dual).
    void balance(double primal2, double primal_scale2) {
        space->axpy(-1.0, wz, wz_old);  // wz_old = -(dual residual)
        const std::vector<cdouble> d = space->dotPairs({{&wz_old, &wz_old}, {&wu, &wu}});
        const double dual2 = d[0].real(), dual_scale2 = d[1].real();
        if (!(primal_scale2 > 0) || !(dual_scale2 > 0)) return;
        const double primal = std::sqrt(primal2 / primal_scale2), dual = std::sqrt(dual2 / dual_scale2);
        double f = 1;
        if (primal > opts.rho_balance * dual) f = opts.rho_factor;
        else if (dual > opts.rho_balance * primal) f = 1 / opts.rho_factor;
        applyRhoFactor(f);
    }

    // Spectral estimate (Xu et al. 2017) from the changes since the last one: for the x-side,
    // dH = -W dx against d(dual_hat); for the z-side, dz against d(dual). Each side's step size is the
    // hybrid of its steepest-descent and minimum-gradient estimates. Returns true if it set rho.
    bool spectralRho() {
        auto keep = [&] {
            for (std::size_t k = 0; k < terms.size(); ++k) {
                if (rho[k] == 0) continue;
                space->copy(wx_now[k], wx_then[k]);
                space->copy(dual_hat[k], dual_hat_then[k]);
                space->copy(z[k], z_then[k]);
                space->copy(u[k], dual_then[k]);
                space->scale(rho[k], dual_then[k]);
            }
            have_then = true;
            since_then = 0;
        };
        if (!have_then) {
            keep();
            return false;
        }
        if (++since_then < opts.spectral_every) return false;
        double hh = 0, hl = 0, ll = 0, gg = 0, gy = 0, yy = 0;
        for (std::size_t k = 0; k < terms.size(); ++k) {
            if (rho[k] == 0) continue;
            space->axpy(-1.0, wx_now[k], wx_then[k]);  // dH = W x_then - W x
            space->scale(-1.0, dual_hat_then[k]);
            space->axpy(1.0, dual_hat[k], dual_hat_then[k]);
            space->scale(-1.0, z_then[k]);
            space->axpy(1.0, z[k], z_then[k]);
            space->scale(-1.0, dual_then[k]);
            space->axpy(rho[k], u[k], dual_then[k]);
            hh += space->norm2(wx_then[k]);
            hl += space->dot(wx_then[k], dual_hat_then[k]).real();
            ll += space->norm2(dual_hat_then[k]);
            gg += space->norm2(z_then[k]);
            gy += space->dot(z_then[k], dual_then[k]).real();
            yy += space->norm2(dual_then[k]);
        }
        keep();
        auto hybrid = [](double sd, double mg) { return 2 * mg > sd ? mg : sd - mg / 2; };
        const double c = opts.spectral_correlation;
        const bool a_ok = hl > 0 && hh > 0 && ll > 0 && hl / std::sqrt(hh * ll) > c;
        const bool b_ok = gy > 0 && gg > 0 && yy > 0 && gy / std::sqrt(gg * yy) > c;
        if (!a_ok && !b_ok) return false;
        const double a = a_ok ? hybrid(ll / hl, hl / hh) : 0, b = b_ok ? hybrid(yy / gy, gy / gg) : 0;
        const double target = a_ok && b_ok ? std::sqrt(a * b) : a_ok ? a : b;
        double current = 0;
        for (double r : rho) current = std::max(current, r);
        if (!(current > 0) || !(target > 0) || !std::isfinite(target)) return false;
        applyRhoFactor(std::clamp(target / current, 0.1, 10.0));
        return true;
    }

    // A new x from outside: z = W x and u = 0 at the next outer update, rho adapts again.
    void restartFromX() {
        wx_current = false;
        for (auto& v : u) space->zero(v);
        outer_due = true;
        since_start = 0;
        have_wz_old = false;
        have_then = false;
    }

    // rho -> f rho with the dual rho u kept: u -> u / f; sum rho W^H z scales by f.
    void applyRhoFactor(double f) {
        if (f == 1) return;
        rho_scale *= f;
        for (std::size_t k = 0; k < terms.size(); ++k) {
            if (rho[k] == 0) continue;
            rho[k] *= f;
            space->scale(1 / f, u[k]);
            cg->reweight(k + 1, rho[k]);
        }
        space->scale(f, wz);
        refreshPreconditioner();
    }
};

Admm::Admm(LinearOperatorPtr fourier, const Vector& rhs, double data_norm2, std::vector<SparseTerm> terms, AdmmOptions opts)
    : impl_(std::make_unique<Impl>()) {
    if (!fourier) throw InputError("ADMM: no data operator");
    if (opts.inner_iterations < 1) throw InputError("ADMM: the inner CG iterations must be at least 1");
    if (!(opts.relaxation > 0 && opts.relaxation < 2)) throw InputError("ADMM: the over-relaxation must be in (0, 2)");
    if (!(opts.rho_balance > 1) || !std::isfinite(opts.rho_balance) || !(opts.rho_factor > 1) || !std::isfinite(opts.rho_factor) ||
        opts.adapt_outer < 0 || !(opts.rebuild_ratio >= 1) || opts.spectral_every < 1 ||
        !(opts.spectral_correlation >= 0 && opts.spectral_correlation < 1))
        throw InputError("ADMM: residual balancing needs a ratio > 1, a factor > 1 and a number of outer steps >= 0, "
                         "the preconditioner's rebuild ratio must be >= 1, and the spectral rho an interval >= 1 and "
                         "a correlation in [0, 1)");
    if (!(opts.threshold_scale > 0) || !std::isfinite(opts.threshold_scale) || !(opts.image_scale > 0) ||
        !std::isfinite(opts.image_scale))
        throw InputError("ADMM: the threshold scale and the image scale must be finite numbers > 0");
    Impl& m = *impl_;
    m.space = &fourier->space();
    m.n = fourier->inSize();
    m.opts = opts;
    m.tau = opts.threshold_scale * opts.image_scale;
    std::vector<NormalTerm> normal{{"data", 1.0, fourier}};
    for (const SparseTerm& t : terms) {
        checkSparseTerm(t, *m.space, m.n, "ADMM");
        m.rho.push_back(m.rhoFor(t.weight));
        normal.push_back({t.name, m.rho.back(), t.transform});
        m.z.push_back(m.space->make(t.transform->outSize()));
        m.u.push_back(m.space->make(t.transform->outSize()));
        m.wx.push_back(m.space->make(t.transform->outSize()));
        if (m.spectral())
            for (auto* v : {&m.wx_now, &m.dual_hat, &m.wx_then, &m.dual_hat_then, &m.z_then, &m.dual_then})
                v->push_back(m.space->make(t.transform->outSize()));
    }
    m.terms = std::move(terms);
    // x = 0, z = 0, u = 0: the first right-hand side is F^H d itself, no outer update needed.
    m.cg = std::make_unique<NormalEquationsCg>(std::move(normal), rhs, data_norm2);
    m.fhd = m.space->make(m.n);
    m.space->copy(rhs, m.fhd);
    m.cg->watch(m.fhd);  // x^H F^H d for the records' data term, with CG's own statistics
    m.data.emplace(fourier, data_norm2);
    m.rhs = m.space->make(m.n);
    m.image_scratch = m.space->make(m.n);
    m.wz = m.space->make(m.n);
    m.wu = m.space->make(m.n);
    m.wz_old = m.space->make(m.n);
    m.refreshPreconditioner();
}

Admm::~Admm() = default;

bool Admm::step() {
    Impl& m = *impl_;
    if (m.outer_due || m.inner >= m.opts.inner_iterations) m.outerUpdate();
    if (!m.cg->step()) {
        // This x-update is solved exactly: move on to the next outer step; stop if that one is too.
        if (m.inner == 0) return false;
        m.outerUpdate();
        if (!m.cg->step()) return false;
    }
    m.wx_current = false;
    ++m.inner;
    ++m.total;
    return true;
}

IterationRecord Admm::record() const { return makeRecord(false); }
IterationRecord Admm::exactRecord() const { return makeRecord(true); }

IterationRecord Admm::makeRecord(bool exact) const {
    const Impl& m = *impl_;
    const Vector& x = m.cg->solution();
    IterationRecord r = m.cg->record();  // for the truth readout; the rest is ADMM's
    r.iteration = m.total;
    r.outer_iteration = m.outer + 1;  // outer updates done so far, plus the x-update under way
    r.residual = m.primal_residual;
    r.data_term = m.data->value(x, m.cg->quadraticForm(0), m.cg->watched(0), exact);
    r.penalty_term = 0;
    bool all = true;
    for (std::size_t k = 0; k < m.terms.size(); ++k) {
        const SparseTerm& t = m.terms[k];
        if (t.weight == 0) {
            all = false;
            continue;
        }
        if (!m.wx_current) t.transform->forward(x, m.wx[k]);
        r.penalty_term += t.weight * m.space->groupNorm1(m.wx[k], t.group);
    }
    m.wx_current = all;
    return r;
}

void Admm::setData(std::shared_ptr<const Vector> data) { impl_->data->setData(std::move(data)); }
void Admm::setData(DataSource source) { impl_->data->setData(std::move(source)); }

void Admm::image(ComplexArray& out) const { impl_->cg->image(out); }
const Vector& Admm::solution() const { return impl_->cg->solution(); }
std::size_t Admm::size() const { return impl_->n; }
std::size_t Admm::terms() const { return impl_->terms.size(); }
double Admm::weight(std::size_t term) const {
    if (term >= impl_->terms.size()) throw InputError("ADMM: no term " + std::to_string(term));
    return impl_->terms[term].weight;
}
double Admm::rho(std::size_t term) const {
    if (term >= impl_->terms.size()) throw InputError("ADMM: no term " + std::to_string(term));
    return impl_->rho[term];
}
int Admm::outerIterations() const { return impl_->outer; }
double Admm::rhoScale() const { return impl_->rho_scale; }

void Admm::setWeight(std::size_t term, double weight) {
    Impl& m = *impl_;
    if (term >= m.terms.size()) throw InputError("ADMM: no term " + std::to_string(term));
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("ADMM: a weight must be a finite number >= 0");
    const double old_rho = m.rho[term], new_rho = m.rhoFor(weight);
    // u is the dual divided by rho: keep the dual, so the warm start stays a warm start.
    if (old_rho > 0 && new_rho > 0) m.space->scale(old_rho / new_rho, m.u[term]);
    else m.space->zero(m.u[term]);
    m.terms[term].weight = weight;
    m.rho[term] = new_rho;
    m.cg->reweight(term + 1, new_rho);
    m.refreshPreconditioner();
    m.outer_due = true;
    m.since_start = 0;
    m.have_wz_old = false;
    m.have_then = false;
}

void Admm::setInitial(const ComplexArray& x0) {
    impl_->cg->setInitial(x0);
    impl_->restartFromX();
}

cdouble Admm::setInitialScaled(const Vector& x0) {
    const cdouble a = impl_->cg->setInitialScaled(x0);
    impl_->restartFromX();
    return a;
}

void Admm::setTruth(const ComplexArray& truth) { impl_->cg->setTruth(truth); }

}  // namespace recon
