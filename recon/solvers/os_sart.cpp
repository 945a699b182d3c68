#include "recon/solvers/os_sart.hpp"

#include <cmath>

#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"

namespace recon {

namespace {
// 1/v where v > 0, else 0 (rays that miss the volume, voxels a subset does not see).
ComplexArray reciprocal(const ComplexArray& v) {
    ComplexArray r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = v[i].real() > 0 ? 1.0 / v[i].real() : 0.0;
    return r;
}
}  // namespace

struct OsSart::Impl {
    struct Subset {
        LinearOperatorPtr op;
        Vector data, weights;   // weights empty: W = I
        Vector row_scale;       // W / R
        Vector column_scale;    // 1 / C
        Vector residual, weighted;
    };
    VectorSpace* space = nullptr;
    std::size_t n = 0;
    OsSartOptions options;
    std::vector<Subset> subsets;
    Vector x, update;
    mutable Vector error_scratch;  // x − truth, for the records
    int passes = 0;
    double data_norm2 = 0;  // ||p||²_W
    double data_term = 0;   // of the last pass, summed as the subsets were visited
    bool has_truth = false;
    Vector truth;
    TruthStats truth_stats;
};

OsSart::OsSart(std::vector<SartSubset> subsets, const OsSartOptions& options) : impl_(std::make_unique<Impl>()) {
    if (subsets.empty()) throw InputError("OS-SART: no subsets");
    if (!(options.relaxation > 0 && options.relaxation < 2))
        throw InputError("OS-SART: the relaxation must lie in (0, 2), got " + formatNumber(options.relaxation));
    Impl& m = *impl_;
    m.options = options;
    m.space = &subsets.front().op->space();
    m.n = subsets.front().op->inSize();
    VectorSpace& space = *m.space;
    for (std::size_t k = 0; k < subsets.size(); ++k) {
        SartSubset& s = subsets[k];
        const std::string name = "OS-SART subset " + std::to_string(k);
        if (!s.op) throw InputError(name + ": no operator");
        if (&s.op->space() != m.space) throw InputError(name + ": its operator lives on another backend");
        if (s.op->inSize() != m.n)
            throw InputError(name + ": its operator takes " + std::to_string(s.op->inSize()) + " values, the first " +
                             std::to_string(m.n));
        const std::size_t rows = s.op->outSize();
        if (s.data.size() != rows)
            throw InputError(name + ": " + std::to_string(s.data.size()) + " data values for " + std::to_string(rows) +
                             " rows");
        if (!s.weights.empty() && s.weights.size() != rows)
            throw InputError(name + ": " + std::to_string(s.weights.size()) + " weights for " + std::to_string(rows) +
                             " rows");
        for (double w : s.weights)
            if (!(w >= 0) || !std::isfinite(w)) throw InputError(name + ": a weight is negative or not finite");

        Impl::Subset sub;
        sub.op = s.op;
        sub.data = space.fromHost(s.data);
        const ComplexArray w(s.weights.begin(), s.weights.end());
        if (!w.empty()) sub.weights = space.fromHost(w);
        // R = A 1; C = A^T W 1.
        const ComplexArray row_sums = applyForward(*s.op, ComplexArray(m.n, 1.0));
        ComplexArray row_scale = reciprocal(row_sums);
        if (!w.empty())
            for (std::size_t i = 0; i < rows; ++i) row_scale[i] *= w[i];
        sub.row_scale = space.fromHost(row_scale);
        sub.column_scale = space.fromHost(reciprocal(applyAdjoint(*s.op, w.empty() ? ComplexArray(rows, 1.0) : w)));
        sub.residual = space.make(rows);
        sub.weighted = space.make(rows);
        for (std::size_t i = 0; i < rows; ++i)
            m.data_norm2 += std::norm(s.data[i]) * (w.empty() ? 1.0 : w[i].real());
        m.subsets.push_back(std::move(sub));
    }
    m.data_term = m.data_norm2;
    m.x = space.make(m.n);
    m.update = space.make(m.n);
}

OsSart::~OsSart() = default;

bool OsSart::step() {
    Impl& m = *impl_;
    VectorSpace& space = *m.space;
    double data_term = 0;
    for (Impl::Subset& s : m.subsets) {
        s.op->forward(m.x, s.residual);
        space.xpby(s.data, -1.0, s.residual);  // r = p − A x
        if (s.weights.empty()) {
            data_term += space.norm2(s.residual);
        } else {
            space.multiply(s.weights, s.residual, s.weighted);
            data_term += space.dot(s.residual, s.weighted).real();
        }
        space.multiply(s.row_scale, s.residual, s.weighted);  // W R^{-1} r
        s.op->adjoint(s.weighted, m.update);
        space.multiply(s.column_scale, m.update, m.update);
        space.axpy(m.options.relaxation, m.update, m.x);
        if (m.options.nonnegative) space.clampNonNegative(m.x);
    }
    m.data_term = data_term;
    ++m.passes;
    return true;
}

IterationRecord OsSart::record() const {
    const Impl& m = *impl_;
    IterationRecord r;
    r.iteration = m.passes;
    r.data_term = m.data_term;
    r.residual = m.data_norm2 > 0 ? std::sqrt(m.data_term / m.data_norm2) : 0.0;
    if (m.has_truth) {
        VectorSpace& space = *m.space;
        space.copy(m.x, m.error_scratch);
        const double e2 = space.axpyNorm2(-1.0, m.truth, m.error_scratch);
        const Quality q = qualityFromErrorNorm(e2, m.truth_stats.norm2, m.truth_stats.max_abs, m.n);
        r.has_truth = true;
        r.error_percent = q.error_percent;
        r.psnr_db = q.psnr_db;
    }
    return r;
}

void OsSart::image(ComplexArray& out) const { impl_->space->download(impl_->x, out); }
const Vector& OsSart::solution() const { return impl_->x; }
std::size_t OsSart::subsets() const { return impl_->subsets.size(); }
const OsSartOptions& OsSart::options() const { return impl_->options; }

void OsSart::setInitial(const ComplexArray& x0) {
    Impl& m = *impl_;
    if (x0.size() != m.n)
        throw InputError("OS-SART: the starting image has " + std::to_string(x0.size()) + " values, not " +
                         std::to_string(m.n));
    m.space->upload(x0, m.x);
    m.passes = 0;
}

void OsSart::setTruth(const ComplexArray& truth) {
    Impl& m = *impl_;
    if (truth.size() != m.n) throw InputError("OS-SART: the truth image does not match the image size");
    m.truth = m.space->fromHost(truth);
    m.error_scratch = m.space->make(m.n);
    m.truth_stats = truthStats(truth);
    m.has_truth = true;
}

}  // namespace recon
