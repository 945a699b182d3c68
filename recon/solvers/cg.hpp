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
        std::vector<double> ws{1.0};
        std::vector<const Vector*> xs{&b_};
        for (std::size_t i = 0; i < terms_.size(); ++i) {
            ws.push_back(-terms_[i].weight);
            xs.push_back(&ax_[i]);
        }
        space_.combine(ws, xs, r_);
        rr_ = space_.dot(r_, r_).real();
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
    const Vector& solution() const { return x_; }
    Space& space() { return space_; }

private:
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
    bool has_ref_ = false;
    double ref_norm2_ = 0;
    double bnorm2_ = 0, rr_ = 0, rz_ = 0;  // ||b||^2, ||r||^2, r^H M^{-1} r (= rr_ without M)
    mutable CgStats stats_;
    mutable bool forms_pending_ = false;  // stats_'s inner products not yet formed for this iterate
};

}  // namespace recon
