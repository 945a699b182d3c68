#include "recon/operators/regularizer.hpp"

#include <algorithm>
#include <array>
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
    CsrMatrix& normal = reg.normal;
    w.cols = nvox;
    normal.rows = normal.cols = nvox;
    if (kind == RegularizerKind::Tikhonov) {
        w.rows = nvox;
        w.row_ptr.resize(std::size_t(nvox) + 1);
        w.col.resize(std::size_t(nvox));
        for (std::int64_t i = 0; i <= nvox; ++i) w.row_ptr[std::size_t(i)] = i;
        for (std::int64_t i = 0; i < nvox; ++i) w.col[std::size_t(i)] = std::int32_t(i);
        w.val.assign(std::size_t(nvox), 1.0);
        normal = w;
        return reg;
    }
    double refmax = 0;
    if (kind == RegularizerKind::AnatomicalFiniteDifference) {
        if (!reference || reference->size() != std::size_t(nvox))
            throw InputError("the anatomically weighted regulariser needs a reference image of " + g.describe() + " voxels");
        for (auto v : *reference) refmax = std::max(refmax, std::abs(v));
        if (!(refmax > 0)) throw InputError("the reference image for the anatomical prior is all zero");
    }
    // One row per neighbour pair along each axis (no wrap-around): w (x_b - x_a), b = a + stride,
    // axis after axis, pairs in z, y, x order. Built slice by slice in parallel (a 128^3 grid has
    // 6 million rows), with the pair's weight kept per axis and voxel a for W^T W below.
    const std::array<std::int64_t, 3> stride{1, g.n[0], std::int64_t(g.n[0]) * g.n[1]};
    std::array<std::vector<double>, 3> edge;  // edge[axis][a]: the weight of pair (a, a + stride); 0: none
    std::int64_t rows = 0;
    std::array<std::int64_t, 3> first_row{};
    for (int axis = 0; axis < g.dims; ++axis) {
        first_row[std::size_t(axis)] = rows;
        rows += nvox / g.n[std::size_t(axis)] * (g.n[std::size_t(axis)] - 1);
    }
    w.rows = rows;
    w.row_ptr.resize(std::size_t(rows) + 1);
    w.col.resize(2 * std::size_t(rows));
    w.val.resize(2 * std::size_t(rows));
    for (int axis = 0; axis < g.dims; ++axis) {
        std::vector<double>& e = edge[std::size_t(axis)];
        e.assign(std::size_t(nvox), 0.0);
        std::array<int, 3> m = g.n;  // the positions that have a neighbour along the axis
        m[std::size_t(axis)] -= 1;
#pragma omp parallel for schedule(static)
        for (int z = 0; z < m[2]; ++z)
            for (int y = 0; y < m[1]; ++y)
                for (int x = 0; x < m[0]; ++x) {
                    const std::int64_t a = std::int64_t(g.index(x, y, z)), b = a + stride[std::size_t(axis)];
                    double weight = 1.0;
                    if (kind == RegularizerKind::AnatomicalFiniteDifference) {
                        const double jump = std::abs(std::abs((*reference)[std::size_t(b)]) - std::abs((*reference)[std::size_t(a)])) / refmax;
                        if (jump > opts.edge_threshold) weight = opts.edge_weight;
                    }
                    const std::int64_t row = first_row[std::size_t(axis)] + (std::int64_t(z) * m[1] + y) * m[0] + x;
                    w.row_ptr[std::size_t(row)] = 2 * row;
                    w.col[std::size_t(2 * row)] = std::int32_t(a);
                    w.val[std::size_t(2 * row)] = -weight;
                    w.col[std::size_t(2 * row + 1)] = std::int32_t(b);
                    w.val[std::size_t(2 * row + 1)] = weight;
                    e[std::size_t(a)] = weight;
                }
    }
    w.row_ptr[std::size_t(rows)] = 2 * rows;
    // W^T W = sum over pairs of w^2 (e_b - e_a)(e_b - e_a)^T: per voxel i, -w^2 towards each
    // neighbour, the sum of those w^2 on the diagonal; columns ascending, exact zeros left out
    // (what CsrMatrix::gram gives, without its sort per row: 20x faster at 128^3).
    std::array<std::int64_t, 3> reach{};
    for (int axis = 0; axis < g.dims; ++axis) reach[std::size_t(axis)] = stride[std::size_t(axis)];
    auto entries = [&](std::int64_t i, auto&& emit) {
        double diagonal = 0;
        for (int axis = g.dims - 1; axis >= 0; --axis) {  // lower neighbours, farthest first
            const std::int64_t a = i - reach[std::size_t(axis)];
            if (a < 0 || g.n[std::size_t(axis)] == 1) continue;
            const double v = edge[std::size_t(axis)][std::size_t(a)];
            if (v == 0 || (axis == 0 && i % g.n[0] == 0) || (axis == 1 && (i / g.n[0]) % g.n[1] == 0)) continue;
            emit(a, -v * v);
            diagonal += v * v;
        }
        double upper = 0;
        std::array<std::pair<std::int64_t, double>, 3> up;
        int ups = 0;
        for (int axis = 0; axis < g.dims; ++axis) {  // upper neighbours, nearest first
            const double v = edge[std::size_t(axis)][std::size_t(i)];
            if (v == 0) continue;
            up[std::size_t(ups++)] = {i + reach[std::size_t(axis)], -v * v};
            upper += v * v;
        }
        if (diagonal + upper != 0) emit(i, diagonal + upper);
        for (int k = 0; k < ups; ++k) emit(up[std::size_t(k)].first, up[std::size_t(k)].second);
    };
    normal.row_ptr.assign(std::size_t(nvox) + 1, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < nvox; ++i) {
        std::int64_t count = 0;
        entries(i, [&](std::int64_t, double) { ++count; });
        normal.row_ptr[std::size_t(i) + 1] = count;
    }
    for (std::int64_t i = 0; i < nvox; ++i) normal.row_ptr[std::size_t(i) + 1] += normal.row_ptr[std::size_t(i)];
    normal.col.resize(std::size_t(normal.row_ptr.back()));
    normal.val.resize(std::size_t(normal.row_ptr.back()));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < nvox; ++i) {
        std::size_t k = std::size_t(normal.row_ptr[std::size_t(i)]);
        entries(i, [&](std::int64_t c, double v) {
            normal.col[k] = std::int32_t(c);
            normal.val[k++] = v;
        });
    }
    return reg;
}

}  // namespace recon
