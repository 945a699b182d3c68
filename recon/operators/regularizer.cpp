#include "recon/operators/regularizer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "recon/core/errors.hpp"

namespace recon {

std::string toString(RegularizerKind k) {
    switch (k) {
        case RegularizerKind::Tikhonov: return "tikhonov";
        case RegularizerKind::FiniteDifference: return "fd";
        case RegularizerKind::AnatomicalFiniteDifference: return "anatomical";
        case RegularizerKind::TotalVariation: return "tv";
        case RegularizerKind::Wavelet: return "wavelet";
        case RegularizerKind::AnatomicalTotalVariation: return "anatomical-tv";
    }
    return "?";
}

RegularizerKind parseRegularizer(const std::string& s) {
    if (s == "tikhonov" || s == "identity" || s == "l2") return RegularizerKind::Tikhonov;
    if (s == "fd" || s == "finite-differences" || s == "tv2" || s == "gradient") return RegularizerKind::FiniteDifference;
    if (s == "anatomical" || s == "anatomical-fd" || s == "weighted-fd") return RegularizerKind::AnatomicalFiniteDifference;
    if (s == "tv" || s == "total-variation") return RegularizerKind::TotalVariation;
    if (s == "wavelet" || s == "wavelets" || s == "l1-wavelet") return RegularizerKind::Wavelet;
    if (s == "anatomical-tv" || s == "weighted-tv") return RegularizerKind::AnatomicalTotalVariation;
    throw InputError("unknown regulariser '" + s + "' (expected tikhonov, fd, anatomical, tv, wavelet or anatomical-tv)");
}

bool isSparse(RegularizerKind k) {
    return k == RegularizerKind::TotalVariation || k == RegularizerKind::Wavelet ||
           k == RegularizerKind::AnatomicalTotalVariation;
}

std::string Regularizer::describe() const {
    switch (kind) {
        case RegularizerKind::Tikhonov: return "Tikhonov (W = I)";
        case RegularizerKind::FiniteDifference: return "finite differences";
        case RegularizerKind::AnatomicalFiniteDifference: return "anatomically weighted finite differences";
        case RegularizerKind::TotalVariation: return "total variation";
        case RegularizerKind::Wavelet: return "l1 of wavelet coefficients";
        case RegularizerKind::AnatomicalTotalVariation: return "anatomically weighted total variation";
    }
    return "?";
}

CsrMatrix CsrMatrix::transposed() const {
    CsrMatrix t;
    t.rows = cols;
    t.cols = rows;
    t.row_ptr.assign(std::size_t(cols) + 1, 0);
    for (auto c : col) t.row_ptr[std::size_t(c) + 1]++;
    for (std::int64_t i = 0; i < cols; ++i) t.row_ptr[i + 1] += t.row_ptr[i];
    t.col.resize(nnz());
    t.val.resize(nnz());
    std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t j = row_ptr[r]; j < row_ptr[r + 1]; ++j) {
            auto dst = next[std::size_t(col[j])]++;
            t.col[dst] = std::int32_t(r);
            t.val[dst] = val[j];
        }
    }
    return t;
}

CsrMatrix CsrMatrix::gram(const CsrMatrix& t) const {
    if (t.rows != cols || t.cols != rows) throw Error("CsrMatrix::gram: the transpose has the wrong shape");
    // Row i of A^T A = sum over r in row i of A^T of t(i, r) * (row r of A). Rows are short
    // (a few neighbours), so each is gathered, sorted and merged; twice: count, then fill.
    CsrMatrix g;
    g.rows = cols;
    g.cols = cols;
    g.row_ptr.assign(std::size_t(cols) + 1, 0);
    auto row = [&](std::int64_t i, std::vector<std::pair<std::int32_t, double>>& acc) {
        acc.clear();
        for (std::int64_t e = t.row_ptr[i]; e < t.row_ptr[i + 1]; ++e) {
            const std::int64_t r = t.col[e];
            for (std::int64_t f = row_ptr[r]; f < row_ptr[r + 1]; ++f) acc.emplace_back(col[f], t.val[e] * val[f]);
        }
        std::stable_sort(acc.begin(), acc.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        std::size_t out = 0;
        for (std::size_t k = 0; k < acc.size(); ++k) {
            if (out > 0 && acc[out - 1].first == acc[k].first) acc[out - 1].second += acc[k].second;
            else acc[out++] = acc[k];
        }
        acc.resize(out);
        acc.erase(std::remove_if(acc.begin(), acc.end(), [](const auto& a) { return a.second == 0.0; }), acc.end());
    };
#pragma omp parallel
    {
        std::vector<std::pair<std::int32_t, double>> acc;
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < cols; ++i) {
            row(i, acc);
            g.row_ptr[std::size_t(i) + 1] = std::int64_t(acc.size());
        }
    }
    for (std::int64_t i = 0; i < cols; ++i) g.row_ptr[i + 1] += g.row_ptr[i];
    g.col.resize(std::size_t(g.row_ptr.back()));
    g.val.resize(std::size_t(g.row_ptr.back()));
#pragma omp parallel
    {
        std::vector<std::pair<std::int32_t, double>> acc;
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < cols; ++i) {
            row(i, acc);
            std::int64_t k = g.row_ptr[i];
            for (const auto& [c, v] : acc) {
                g.col[k] = c;
                g.val[k++] = v;
            }
        }
    }
    return g;
}

template <class T>
void CsrMatrix::multiply(const std::complex<T>* x, std::complex<T>* y) const {
#pragma omp parallel for schedule(static) if (rows > (1 << 16))
    for (std::int64_t r = 0; r < rows; ++r) {
        std::complex<T> acc = 0;
        for (std::int64_t j = row_ptr[r]; j < row_ptr[r + 1]; ++j) acc += T(val[j]) * x[col[j]];
        y[r] = acc;
    }
}
template void CsrMatrix::multiply<float>(const cfloat*, cfloat*) const;
template void CsrMatrix::multiply<double>(const cdouble*, cdouble*) const;

Regularizer makeRegularizer(RegularizerKind kind, const Grid& g, const ComplexArray* reference,
                            const AnatomicalOptions& opts) {
    if (isSparse(kind))
        throw InputError("the " + toString(kind) + " prior is an l1 prior, not a matrix for the quadratic solve (recon/priors)");
    const std::int64_t nvox = std::int64_t(g.voxels());
    if (nvox > std::int64_t(INT32_MAX)) throw InputError("grid " + g.describe() + " is too large for a sparse regulariser");
    Regularizer reg;
    reg.kind = kind;
    CsrMatrix& w = reg.w;
    w.cols = nvox;
    w.row_ptr.push_back(0);
    if (kind == RegularizerKind::Tikhonov) {
        for (std::int64_t i = 0; i < nvox; ++i) {
            w.col.push_back(std::int32_t(i));
            w.val.push_back(1.0);
            w.row_ptr.push_back(std::int64_t(w.col.size()));
        }
    } else {
        double refmax = 0;
        if (kind == RegularizerKind::AnatomicalFiniteDifference) {
            if (!reference || reference->size() != std::size_t(nvox))
                throw InputError("the anatomically weighted regulariser needs a reference image of " +
                                 g.describe() + " voxels");
            for (auto v : *reference) refmax = std::max(refmax, std::abs(v));
            if (!(refmax > 0)) throw InputError("the reference image for the anatomical prior is all zero");
        }
        // One row per neighbour pair along each axis (no wrap-around): w (x_b - x_a).
        const std::array<std::int64_t, 3> stride{1, g.n[0], std::int64_t(g.n[0]) * g.n[1]};
        for (int axis = 0; axis < g.dims; ++axis) {
            for (int z = 0; z < g.n[2]; ++z)
                for (int y = 0; y < g.n[1]; ++y)
                    for (int x = 0; x < g.n[0]; ++x) {
                        std::array<int, 3> p{x, y, z};
                        if (p[axis] + 1 >= g.n[axis]) continue;
                        std::int64_t a = std::int64_t(g.index(x, y, z));
                        std::int64_t b = a + stride[axis];
                        double weight = 1.0;
                        if (kind == RegularizerKind::AnatomicalFiniteDifference) {
                            double jump = std::abs(std::abs((*reference)[b]) - std::abs((*reference)[a])) / refmax;
                            if (jump > opts.edge_threshold) weight = opts.edge_weight;
                        }
                        w.col.push_back(std::int32_t(a));
                        w.val.push_back(-weight);
                        w.col.push_back(std::int32_t(b));
                        w.val.push_back(weight);
                        w.row_ptr.push_back(std::int64_t(w.col.size()));
                    }
        }
    }
    w.rows = std::int64_t(w.row_ptr.size()) - 1;
    reg.normal = w.gram(w.transposed());
    return reg;
}

}  // namespace recon
