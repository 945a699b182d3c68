// Conjugate gradient for A x = b with A Hermitian positive (semi)definite and
// A = sum_i w_i A_i, a weighted sum of terms, optionally preconditioned by an
// M^{-1} (Hermitian positive definite; setPreconditioner). The solver steps one
// iteration at a time; the caller owns the loop (progress, cancel, a weight change
// between steps). It knows nothing of MRI: vectors live in a `Space` (host or device),
// which provides
//   using Vector; Vector make(size_t n); void copy(const Vector& from, Vector& to);
//   void zero(Vector&); std::complex<double> dot(const Vector& a, const Vector& b); // a^H b
//   void axpy(double a, const Vector& x, Vector& y);        // y += a x
//   void xpby(const Vector& x, double b, Vector& y);        // y = x + b y
//   void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y); // y = sum w_i x_i
// (and, for setInitialScaled only, void scale(std::complex<double> a, Vector& y); // y *= a)
// and may provide a fused form, used when present (on a GPU each reduction is a
// round trip to the host, so one pass for several scalars matters):
//   std::vector<std::complex<double>> dotPairs(const std::vector<std::pair<const Vector*, const Vector*>>&);
//                                                           // a_k^H b_k: one step's scalars in one pass
//   void axpys(const std::vector<std::complex<double>>& a, const std::vector<const Vector*>& xs, Vector& y);
//                                                           // y += sum_k a_k x_k (complex a_k), one pass
// Header-only and C++17 so the CUDA backend instantiates it with device vectors.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace recon {

namespace cg_detail {
template <class S, class = void>
struct HasDotPairs : std::false_type {};
template <class S>
struct HasDotPairs<S, std::void_t<decltype(std::declval<S&>().dotPairs(
                          std::declval<const std::vector<std::pair<const typename S::Vector*, const typename S::Vector*>>&>()))>>
    : std::true_type {};
template <class S, class = void>
struct HasAxpys : std::false_type {};
template <class S>
struct HasAxpys<S, std::void_t<decltype(std::declval<S&>().axpys(std::declval<const std::vector<std::complex<double>>&>(),
                                                                std::declval<const std::vector<const typename S::Vector*>&>(),
                                                                std::declval<typename S::Vector&>()))>> : std::true_type {};

// Solves G y = g for a small Hermitian positive semidefinite G (m x m, row-major) by Cholesky,
// leaving out (y_j = 0) each column whose pivot falls below `drop` times its diagonal: a direction
// that is (nearly) a combination of earlier ones in G's inner product adds nothing but rounding.
inline std::vector<std::complex<double>> solveGram(std::vector<std::complex<double>> G, std::vector<std::complex<double>> g,
                                                   std::size_t m, double drop = 1e-6) {
    std::vector<bool> kept(m, false);
    for (std::size_t j = 0; j < m; ++j) {  // in place: G's lower triangle becomes L (kept columns only)
        const double diag = G[j * m + j].real();
        double d = diag;
        for (std::size_t k = 0; k < j; ++k)
            if (kept[k]) d -= std::norm(G[j * m + k]);
        if (!(diag > 0) || !(d > drop * diag) || !std::isfinite(d)) continue;
        kept[j] = true;
        const double l = std::sqrt(d);
        G[j * m + j] = l;
        for (std::size_t i = j + 1; i < m; ++i) {
            std::complex<double> v = G[i * m + j];
            for (std::size_t k = 0; k < j; ++k)
                if (kept[k]) v -= G[i * m + k] * std::conj(G[j * m + k]);
            G[i * m + j] = v / l;
        }
    }
    for (std::size_t i = 0; i < m; ++i) {  // L z = g
        if (!kept[i]) continue;
        for (std::size_t k = 0; k < i; ++k)
            if (kept[k]) g[i] -= G[i * m + k] * g[k];
        g[i] /= G[i * m + i].real();
    }
    for (std::size_t i = m; i-- > 0;) {  // L^H y = z
        if (!kept[i]) {
            g[i] = 0;
            continue;
        }
        for (std::size_t k = i + 1; k < m; ++k)
            if (kept[k]) g[i] -= std::conj(G[k * m + i]) * g[k];
        g[i] /= G[i * m + i].real();
    }
    return g;
}
}  // namespace cg_detail

// Scalars the solver reports after each iteration.
struct CgStats {
    int iteration = 0;            // iterations done since the last (re)start
    double residual = 0;          // ||b - A x|| / ||b||, with or without a preconditioner (comparable)
    std::vector<double> forms;    // x^H A_i x per term (unweighted)
    double real_xb = 0;           // Re <x, b>
    bool has_reference = false;
    double error_norm2 = 0;       // ||x - ref||^2 when a reference is set
    std::vector<double> watched;  // Re x^H v for each watched v (watch())
    bool nonfinite = false;       // the last step() stopped because a scalar was NaN or infinite
};

template <class Space>
class ConjugateGradient {
public:
    using Vector = typename Space::Vector;
    using Apply = std::function<void(const Vector& in, Vector& out)>;

    struct Term {
        std::string name;
        double weight;
        Apply apply;
    };

    ConjugateGradient(Space& space, std::vector<Term> terms, const Vector& b, std::size_t n)
        : space_(space), terms_(std::move(terms)), n_(n), b_(space.make(n)), x_(space.make(n)),
          r_(space.make(n)), p_(space.make(n)), ap_(space.make(n)) {
        space_.copy(b, b_);
        bnorm2_ = space_.dot(b_, b_).real();
        for (std::size_t i = 0; i < terms_.size(); ++i) {
            ax_.push_back(space_.make(n));
            tp_.push_back(space_.make(n));
        }
        space_.zero(x_);
        // x = 0, so every A_i x is 0: a cold start applies no term (on a GPU at 128^3 that saved a
        // Toeplitz product, 0.4 ms of the solver's setup).
        for (Vector& v : ax_) space_.zero(v);
        space_.zero(ap_);
        restartFromProducts();
    }

    // An optional reference (e.g. the true image) for the error readout.
    void setReference(const Vector& ref) {
        ref_ = space_.make(n_);
        space_.copy(ref, ref_);
        ref_norm2_ = space_.dot(ref_, ref_).real();
        has_ref_ = true;
        forms_pending_ = true;
    }

    // Report Re x^H v with the statistics (CgStats::watched, in watch order), from the pass that
    // forms them: a caller's scalar (e.g. ADMM's x^H F^H d) without its own round trip. `v` must
    // outlive the solver and keep its size n.
    void watch(const Vector& v) {
        watched_.push_back(&v);
        forms_pending_ = true;
    }

    // Start again from `x0` (a warm start) with the current weights.
    void setInitial(const Vector& x0) {
        space_.copy(x0, x_);
        restart();
    }

    // Start from a x0, a = x0^H b / x0^H A x0: the scalar that minimises the quadratic's cost
    // x^H A x - 2 Re x^H b along x0, so an image in other units (a gridded one) starts CG where
    // it helps most. It costs the one application of A that any start costs. Returns a (0 when
    // x0^H A x0 is not positive: the start is then zero).
    std::complex<double> setInitialScaled(const Vector& x0) {
        space_.copy(x0, x_);
        applyTerms(x_, ax_, ap_);
        const double xax = space_.dot(x_, ap_).real();
        const std::complex<double> xb = space_.dot(x_, b_);
        const std::complex<double> a = xax > 0 && std::isfinite(xax) && std::isfinite(std::abs(xb)) ? xb / xax : 0.0;
        // A is linear: scaling x and its products costs no second application.
        space_.scale(a, x_);
        for (Vector& v : ax_) space_.scale(a, v);
        space_.scale(a, ap_);
        restartFromProducts();
        return a;
    }

    // A new right-hand side; CG restarts from the current x. The residual b - A x is
    // updated by the change in b, so no operator is applied (ADMM's outer steps).
    void setRightHandSide(const Vector& b) {
        space_.axpy(-1.0, b_, r_);
        space_.copy(b, b_);
        space_.axpy(1.0, b_, r_);
        bnorm2_ = space_.dot(b_, b_).real();
        rr_ = space_.dot(r_, r_).real();
        resetDirection();
        stats_ = CgStats{};
        updateStats();
    }
    // Change a term's weight; CG restarts from the current x (warm start).
    void setWeight(std::size_t term, double w) {
        terms_[term].weight = w;
        restart();
    }
    // Change a term's weight without applying any term: the residual b - sum_i w_i A_i x is
    // recombined from the products A_i x that CG keeps; the direction restarts (ADMM's rho steps,
    // where a restart's operator applications would cost a step each).
    void reweight(std::size_t term, double w) {
        terms_[term].weight = w;
        recombineResidual();
        resetDirection();
        stats_ = CgStats{};
        updateStats();
    }
    // The same with a new preconditioner for the new weights (one restart, not two).
    void setWeight(std::size_t term, double w, Apply preconditioner) {
        terms_[term].weight = w;
        precondition_ = std::move(preconditioner);
        restart();
    }
    // M^{-1} (empty: none). CG restarts its search direction from the current x and
    // residual: no term is applied, the iteration count goes on.
    void setPreconditioner(Apply preconditioner) {
        precondition_ = std::move(preconditioner);
        resetDirection();
    }
    bool preconditioned() const { return bool(precondition_); }
    double weight(std::size_t term) const { return terms_[term].weight; }

    // Recycle for weight changes: keep the last k search directions p with their products A_i p
    // (which every step computes anyway): (1 + terms) vectors each, one copy per step; and, from the
    // first recycled change on, x_c with its products. A weight change by setWeightRecycling then
    // starts from the best iterate in their span. k = 0: x and x_c only; the same k again keeps
    // what is held.
    void keepDirections(std::size_t k) {
        recycling_ = true;
        if (k == kept_.size()) return;  // the same ring: what it holds stays
        kept_.clear();
        kept_.resize(k);
        kept_count_ = kept_next_ = 0;
    }
    // No recycling: setWeightRecycling is reweight() with a preconditioner; nothing is kept.
    void stopRecycling() {
        recycling_ = false;
        kept_.clear();
        kept_count_ = kept_next_ = 0;
        xc_ = Vector{};
        axc_.clear();
    }
    std::size_t keptDirections() const { return kept_count_; }

    // A weight change (lambda) that applies no operator: the residual b - sum_i w_i A_i x is
    // recombined from the products A_i x that CG keeps, and (with keepDirections(k > 0)) x moves to
    // the Galerkin solution at the new weights in the span of the kept directions P, x itself and
    // x_c, the iterate where the previous such change began (galerkinCorrection: a few (k+2)^2
    // inner products, no operator). The directions of the solves before (the last lambda change's
    // above all) span much of the change a new lambda asks for, and x_c holds an earlier lambda's
    // image for a change back. CG then restarts its direction from there with `preconditioner`.
    void setWeightRecycling(std::size_t term, double w, Apply preconditioner) {
        terms_[term].weight = w;
        precondition_ = std::move(preconditioner);
        recombineResidual();
        if (recycling_) galerkinCorrection();
        resetDirection();
        stats_ = CgStats{};
        updateStats();
    }

    // One iteration. Returns false (and does nothing) once the residual is zero.
    bool step() {
        if (!std::isfinite(rr_) || !std::isfinite(bnorm2_)) {
            stats_.nonfinite = true;
            return false;
        }
        if (rr_ <= 0 || bnorm2_ <= 0) return false;
        if (!std::isfinite(rz_)) {
            stats_.nonfinite = true;
            return false;
        }
        if (!(rz_ > 0)) return false;  // M^{-1} not positive on r: stop rather than diverge
        applyTerms(p_, tp_, ap_);
        double pap = space_.dot(p_, ap_).real();
        if (!std::isfinite(pap)) {
            stats_.nonfinite = true;
            return false;
        }
        if (!(pap > 0)) return false;  // A not positive on p: stop rather than diverge
        double alpha = rz_ / pap;
        space_.axpy(alpha, p_, x_);
        for (std::size_t i = 0; i < terms_.size(); ++i) space_.axpy(alpha, tp_[i], ax_[i]);
        space_.axpy(-alpha, ap_, r_);
        keepDirection();
        if (precondition_) precondition_(r_, z_);
        ++stats_.iteration;
        // ||r||^2 and r^H M^{-1} r in one pass (one round trip on a GPU).
        const double rz_new = updateResidual();
        space_.xpby(precondition_ ? z_ : r_, rz_new / rz_, p_);
        rz_ = rz_new;
        return true;
    }

    // The current iterate's scalars. Its inner products with x (the cost's terms, the error, the
    // watched vectors) are formed when first asked for, not in every step: on a GPU a pass over
    // several vectors that iterations nobody records (a benchmark's, ADMM's inner ones) do not pay.
    const CgStats& stats() const {
        if (forms_pending_) formStats();
        return stats_;
    }
    // The step count and relative residual alone: no inner products formed.
    int iteration() const { return stats_.iteration; }
    double residual() const { return stats_.residual; }
    const Vector& solution() const { return x_; }
    Space& space() { return space_; }

private:
    // r = b - sum_i w_i A_i x from the kept products; rr = ||r||^2.
    void recombineResidual() {
        std::vector<double> ws{1.0};
        std::vector<const Vector*> xs{&b_};
        for (std::size_t i = 0; i < terms_.size(); ++i) {
            ws.push_back(-terms_[i].weight);
            xs.push_back(&ax_[i]);
        }
        space_.combine(ws, xs, r_);
        rr_ = space_.dot(r_, r_).real();
    }

    struct KeptDirection {
        Vector p;
        std::vector<Vector> products;  // A_i p per term
    };
    // After a step: p and its products A_i p (tp_) into the ring; the products are swapped in, not
    // copied (tp_ is overwritten by the next step anyway).
    void keepDirection() {
        if (kept_.empty()) return;
        KeptDirection& slot = kept_[kept_next_];
        if (slot.p.size() != n_) {
            slot.p = space_.make(n_);
            slot.products.clear();
            for (std::size_t i = 0; i < terms_.size(); ++i) slot.products.push_back(space_.make(n_));
        }
        space_.copy(p_, slot.p);
        for (std::size_t i = 0; i < terms_.size(); ++i) std::swap(slot.products[i], tp_[i]);
        kept_next_ = (kept_next_ + 1) % kept_.size();
        kept_count_ = std::min(kept_count_ + 1, kept_.size());
    }

    // x += P y + c x with (B^H A B) [y; c] = B^H r, B = [P, x, x_c] (x_c: the iterate where the last
    // recycled change began, so going back towards an earlier lambda finds its image again), A at
    // the current weights; A_i x and r follow from the kept products. The Gram matrix's entries per
    // term and B^H r in fused passes.
    void galerkinCorrection() {
        const std::size_t t = terms_.size();
        struct Column {
            const Vector* v;
            const std::vector<Vector>* products;
        };
        std::vector<Column> basis;
        for (std::size_t j = 0; j < kept_count_; ++j) basis.push_back({&kept_[j].p, &kept_[j].products});
        basis.push_back({&x_, &ax_});
        if (xc_.size() == n_) basis.push_back({&xc_, &axc_});
        const std::size_t m = basis.size(), self = kept_count_;  // basis[self] is x itself
        std::vector<std::pair<const Vector*, const Vector*>> pairs;
        for (std::size_t j = 0; j < m; ++j) {
            pairs.push_back({basis[j].v, &r_});
            for (std::size_t l = j; l < m; ++l)
                for (std::size_t i = 0; i < t; ++i) pairs.push_back({basis[j].v, &(*basis[l].products)[i]});
        }
        const std::vector<std::complex<double>> d = dotPairs(pairs);
        std::vector<std::complex<double>> G(m * m), g(m);
        std::size_t k = 0;
        for (std::size_t j = 0; j < m; ++j) {
            g[j] = d[k++];
            for (std::size_t l = j; l < m; ++l) {
                std::complex<double> v = 0;
                for (std::size_t i = 0; i < t; ++i) v += terms_[i].weight * d[k++];
                G[j * m + l] = v;
                G[l * m + j] = std::conj(v);
            }
        }
        for (std::size_t j = 0; j < m; ++j) G[j * m + j] = G[j * m + j].real();  // Hermitian: a real diagonal
        std::vector<std::complex<double>> y = cg_detail::solveGram(G, g, m);
        for (const auto& v : y)
            if (!std::isfinite(std::abs(v))) return;  // overflow in G: keep x, restart plainly
        // The moved x is made in x_c's storage, which then swaps with x: x_c becomes this change's
        // starting iterate (the next change's x_c) with no temporary vectors. Likewise each product.
        const bool has_xc = m > self + 1;
        if (!has_xc) {
            xc_ = space_.make(n_);  // zeroed
            axc_.clear();
            for (std::size_t i = 0; i < t; ++i) axc_.push_back(space_.make(n_));
        }
        const std::complex<double> xc_scale = has_xc ? y[self + 1] : 0.0;
        std::vector<std::complex<double>> a{1.0 + y[self]};  // x's coefficient, then the directions'
        std::vector<const Vector*> vs{&x_};
        std::vector<std::vector<const Vector*>> ps(t);
        for (std::size_t i = 0; i < t; ++i) ps[i].push_back(&ax_[i]);
        for (std::size_t j = 0; j < self; ++j) {
            a.push_back(y[j]);
            vs.push_back(basis[j].v);
            for (std::size_t i = 0; i < t; ++i) ps[i].push_back(&(*basis[j].products)[i]);
        }
        space_.scale(xc_scale, xc_);
        axpys(a, vs, xc_);
        std::swap(x_, xc_);
        for (std::size_t i = 0; i < t; ++i) {
            space_.scale(xc_scale, axc_[i]);
            axpys(a, ps[i], axc_[i]);
            std::swap(ax_[i], axc_[i]);
        }
        recombineResidual();
        forms_pending_ = true;
    }

    // y += sum_k a_k x_k: the space's one pass, or two real combinations and i times the second.
    void axpys(const std::vector<std::complex<double>>& a, const std::vector<const Vector*>& xs, Vector& y) {
        if constexpr (cg_detail::HasAxpys<Space>::value) {
            space_.axpys(a, xs, y);
        } else {
            std::vector<double> re, im;
            for (const auto& v : a) {
                re.push_back(v.real());
                im.push_back(v.imag());
            }
            Vector tmp = space_.make(n_);
            space_.combine(re, xs, tmp);
            space_.axpy(1.0, tmp, y);
            space_.combine(im, xs, tmp);
            space_.scale(std::complex<double>(0, 1), tmp);
            space_.axpy(1.0, tmp, y);
        }
    }

    void applyTerms(const Vector& in, std::vector<Vector>& parts, Vector& sum) {
        std::vector<double> w;
        std::vector<const Vector*> xs;
        for (std::size_t i = 0; i < terms_.size(); ++i) {
            terms_[i].apply(in, parts[i]);
            w.push_back(terms_[i].weight);
            xs.push_back(&parts[i]);
        }
        space_.combine(w, xs, sum);
    }

    void restart() {
        // ax_i = A_i x kept up to date so the cost terms cost no extra operator applications.
        applyTerms(x_, ax_, ap_);
        restartFromProducts();
    }

    // r = b - A x from ap_ = A x (and ax_ = A_i x), a fresh direction, fresh statistics.
    void restartFromProducts() {
        space_.copy(b_, r_);
        space_.axpy(-1.0, ap_, r_);
        rr_ = space_.dot(r_, r_).real();
        resetDirection();
        stats_ = CgStats{};
        updateStats();
    }

    // p = z = M^{-1} r (or r), rz = r^H z: the first direction after a (re)start.
    void resetDirection() {
        if (precondition_) {
            if (z_.size() != n_) z_ = space_.make(n_);
            precondition_(r_, z_);
            space_.copy(z_, p_);
            rz_ = space_.dot(r_, z_).real();
        } else {
            space_.copy(r_, p_);
            rz_ = rr_;
        }
    }

    // rr_ = ||r||^2 and, returned, r^H z (z = M^{-1} r; without a preconditioner ||r||^2) in one
    // pass where the space fuses pairs of vectors; the statistics of the new x become due.
    double updateResidual() {
        std::vector<std::pair<const Vector*, const Vector*>> pairs{{&r_, &r_}};
        if (precondition_) pairs.push_back({&r_, &z_});
        const std::vector<std::complex<double>> d = dotPairs(pairs);
        rr_ = d[0].real();
        updateStats();
        return precondition_ ? d[1].real() : rr_;
    }
    void updateStats() {
        stats_.residual = bnorm2_ > 0 ? std::sqrt(std::max(rr_, 0.0) / bnorm2_) : 0.0;
        forms_pending_ = true;
    }
    // Every statistic of x is an inner product with x: one pass where the space fuses them.
    void formStats() const {
        forms_pending_ = false;
        std::vector<std::pair<const Vector*, const Vector*>> pairs;
        for (const Vector& a : ax_) pairs.push_back({&x_, &a});
        pairs.push_back({&x_, &b_});
        if (has_ref_) {
            pairs.push_back({&x_, &x_});
            pairs.push_back({&x_, &ref_});
        }
        for (const Vector* v : watched_) pairs.push_back({&x_, v});
        const std::vector<std::complex<double>> d = dotPairs(pairs);
        std::size_t k = 0;
        stats_.forms.resize(terms_.size());
        for (std::size_t i = 0; i < terms_.size(); ++i) stats_.forms[i] = d[k++].real();
        stats_.real_xb = d[k++].real();
        if (has_ref_) {
            const double xx = d[k].real(), xr = d[k + 1].real();
            k += 2;
            stats_.has_reference = true;
            stats_.error_norm2 = std::max(xx - 2 * xr + ref_norm2_, 0.0);
        }
        stats_.watched.clear();
        for (std::size_t i = 0; i < watched_.size(); ++i) stats_.watched.push_back(d[k++].real());
    }

    std::vector<std::complex<double>> dotPairs(const std::vector<std::pair<const Vector*, const Vector*>>& pairs) const {
        if constexpr (cg_detail::HasDotPairs<Space>::value) {
            return space_.dotPairs(pairs);
        } else {
            std::vector<std::complex<double>> r;
            for (const auto& [a, b] : pairs) r.push_back(space_.dot(*a, *b));
            return r;
        }
    }
    Space& space_;
    std::vector<Term> terms_;
    std::size_t n_;
    Vector b_, x_, r_, p_, ap_;
    std::vector<Vector> ax_, tp_;
    std::vector<const Vector*> watched_;
    Vector ref_{};
    Apply precondition_;
    Vector z_{};  // M^{-1} r, made with the first preconditioner
    std::vector<KeptDirection> kept_;  // keepDirections' ring
    Vector xc_{};                      // the iterate where the last recycled change began
    std::vector<Vector> axc_;          // and its products A_i x_c
    std::size_t kept_count_ = 0, kept_next_ = 0;
    bool recycling_ = false;
    bool has_ref_ = false;
    double ref_norm2_ = 0;
    double bnorm2_ = 0, rr_ = 0, rz_ = 0;  // ||b||^2, ||r||^2, r^H M^{-1} r (= rr_ without M)
    mutable CgStats stats_;
    mutable bool forms_pending_ = false;  // stats_'s inner products not yet formed for this iterate
};

}  // namespace recon
