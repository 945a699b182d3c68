#include "recon/priors/priors.hpp"

#include <algorithm>
#include <cmath>

#include "recon/core/errors.hpp"

namespace recon {
namespace {

std::array<std::int64_t, 3> strides(const Grid& g) { return {1, g.n[0], std::int64_t(g.n[0]) * g.n[1]}; }

void checkGrid(const Grid& g, const char* what) {
    if (g.dims < 1 || g.dims > 3 || g.n[0] < 1 || g.n[1] < 1 || g.n[2] < 1)
        throw InputError(std::string(what) + ": invalid grid " + g.describe());
    if (std::size_t(g.dims) * g.voxels() > std::size_t(INT32_MAX))
        throw InputError(std::string(what) + ": grid " + g.describe() + " is too large for a sparse transform");
}

// Orthonormal low-pass filters; the high-pass is g[k] = (-1)^k h[L-1-k] (quadrature mirror).
std::vector<double> lowPass(WaveletKind k) {
    if (k == WaveletKind::Haar) return {1 / std::sqrt(2.0), 1 / std::sqrt(2.0)};
    const double r3 = std::sqrt(3.0), d = 4 * std::sqrt(2.0);
    return {(1 + r3) / d, (3 + r3) / d, (3 - r3) / d, (1 - r3) / d};
}

// A transform given by a fixed identity normal: W^H W = I for an orthogonal W.
LinearOperatorPtr orthogonalChain(VectorSpace& space, const std::vector<CsrMatrix>& levels, std::size_t n) {
    if (levels.empty()) return identity(space, n);
    LinearOperatorPtr chain;
    for (std::size_t i = 0; i < levels.size(); ++i) {
        LinearOperatorPtr level = sparseMatrix(space, levels[i], nullptr, "wavelet level " + std::to_string(i + 1));
        chain = chain ? compose(level, chain) : level;
    }
    return withNormal(chain, identity(space, n));
}

}  // namespace

CsrMatrix gradientMatrix(const Grid& g, const std::vector<double>* edge_weights) {
    checkGrid(g, "total variation");
    const std::int64_t nvox = std::int64_t(g.voxels());
    if (edge_weights && edge_weights->size() != std::size_t(g.dims) * std::size_t(nvox))
        throw InputError("total variation: " + std::to_string(edge_weights->size()) + " edge weights for " +
                         std::to_string(g.dims) + " x " + std::to_string(nvox) + " differences");
    const auto st = strides(g);
    CsrMatrix w;
    w.rows = g.dims * nvox;
    w.cols = nvox;
    w.row_ptr.reserve(std::size_t(w.rows) + 1);
    w.row_ptr.push_back(0);
    for (int axis = 0; axis < g.dims; ++axis)
        for (int z = 0; z < g.n[2]; ++z)
            for (int y = 0; y < g.n[1]; ++y)
                for (int x = 0; x < g.n[0]; ++x) {
                    const std::array<int, 3> p{x, y, z};
                    const std::int64_t a = std::int64_t(g.index(x, y, z));
                    const double weight = edge_weights ? (*edge_weights)[std::size_t(axis * nvox + a)] : 1.0;
                    // No wrap-around: the last voxel's difference would couple opposite edges.
                    if (p[axis] + 1 < g.n[axis] && weight != 0) {
                        w.col.push_back(std::int32_t(a));
                        w.val.push_back(-weight);
                        w.col.push_back(std::int32_t(a + st[axis]));
                        w.val.push_back(weight);
                    }
                    w.row_ptr.push_back(std::int64_t(w.col.size()));
                }
    return w;
}

std::vector<double> anatomicalEdgeWeights(const Grid& g, const ComplexArray& reference, const AnatomicalOptions& opts) {
    const std::size_t nvox = g.voxels();
    if (reference.size() != nvox)
        throw InputError("anatomical TV needs a reference image of " + g.describe() + " voxels, got " +
                         std::to_string(reference.size()) + " values");
    if (!(opts.edge_threshold > 0) || !(opts.edge_weight >= 0) || !(opts.edge_weight <= 1))
        throw InputError("anatomical TV: the edge threshold must be > 0 and the edge weight in [0, 1]");
    double refmax = 0;
    for (auto v : reference) refmax = std::max(refmax, std::abs(v));
    if (!(refmax > 0)) throw InputError("the reference image for the anatomical prior is all zero");
    const auto st = strides(g);
    std::vector<double> w(std::size_t(g.dims) * nvox, 1.0);
    for (int axis = 0; axis < g.dims; ++axis)
        for (int z = 0; z < g.n[2]; ++z)
            for (int y = 0; y < g.n[1]; ++y)
                for (int x = 0; x < g.n[0]; ++x) {
                    const std::array<int, 3> p{x, y, z};
                    if (p[axis] + 1 >= g.n[axis]) continue;
                    const std::size_t a = g.index(x, y, z), b = a + std::size_t(st[axis]);
                    const double jump = std::abs(std::abs(reference[b]) - std::abs(reference[a])) / refmax;
                    // An edge in the reference: the image may jump here at little cost.
                    if (jump > opts.edge_threshold) w[std::size_t(axis) * nvox + a] = opts.edge_weight;
                }
    return w;
}

SparseTerm totalVariation(VectorSpace& space, const Grid& grid, double weight, bool anisotropic,
                          const ComplexArray* reference, const AnatomicalOptions& opts) {
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("total variation: the weight must be a finite number >= 0");
    std::vector<double> edges;
    if (reference) edges = anatomicalEdgeWeights(grid, *reference, opts);
    auto d = std::make_shared<CsrMatrix>(gradientMatrix(grid, reference ? &edges : nullptr));
    auto gram = std::make_shared<CsrMatrix>(d->gram(d->transposed()));
    SparseTerm t;
    t.name = reference ? "anatomical-tv" : "tv";
    t.weight = weight;
    t.transform = sparseMatrix(space, d, gram, reference ? "anatomically weighted gradient" : "gradient");
    t.group = anisotropic ? 1 : std::size_t(grid.dims);
    return t;
}

std::string toString(WaveletKind k) { return k == WaveletKind::Haar ? "haar" : "db4"; }

WaveletKind parseWavelet(const std::string& s) {
    if (s == "haar") return WaveletKind::Haar;
    if (s == "db4" || s == "daubechies4" || s == "d4") return WaveletKind::Daubechies4;
    throw InputError("unknown wavelet '" + s + "' (expected haar or db4)");
}

CsrMatrix waveletLevelMatrix(const Grid& g, WaveletKind kind, int axis, const std::array<int, 3>& box) {
    checkGrid(g, "wavelet transform");
    if (axis < 0 || axis >= g.dims) throw InputError("wavelet transform: no axis " + std::to_string(axis));
    const std::vector<double> h = lowPass(kind);
    const int len = box[std::size_t(axis)];
    if (len % 2 != 0 || len < int(h.size()) || len > g.n[std::size_t(axis)])
        throw InputError("wavelet transform: a box length of " + std::to_string(len) + " along axis " + std::to_string(axis) +
                         " cannot be split by " + toString(kind));
    const std::size_t taps = h.size();
    const auto st = strides(g);
    const std::int64_t nvox = std::int64_t(g.voxels());
    CsrMatrix m;
    m.rows = m.cols = nvox;
    m.row_ptr.reserve(std::size_t(nvox) + 1);
    m.row_ptr.push_back(0);
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) {
                const std::array<int, 3> p{x, y, z};
                const std::int64_t v = std::int64_t(g.index(x, y, z));
                bool inside = true;
                for (int a = 0; a < g.dims; ++a) inside = inside && p[std::size_t(a)] < box[std::size_t(a)];
                if (!inside) {
                    m.col.push_back(std::int32_t(v));
                    m.val.push_back(1.0);
                } else {
                    // Output j < len/2: low-pass of inputs 2j..2j+taps-1 (periodic in the box); else high-pass.
                    const int j = p[std::size_t(axis)];
                    const bool high = j >= len / 2;
                    const int start = 2 * (high ? j - len / 2 : j);
                    const std::int64_t line = v - std::int64_t(j) * st[std::size_t(axis)];
                    std::vector<std::pair<std::int32_t, double>> row;
                    for (std::size_t k = 0; k < taps; ++k) {
                        const double c = high ? ((k % 2 == 0) ? 1.0 : -1.0) * h[taps - 1 - k] : h[k];
                        const int i = (start + int(k)) % len;
                        row.emplace_back(std::int32_t(line + std::int64_t(i) * st[std::size_t(axis)]), c);
                    }
                    std::sort(row.begin(), row.end());
                    for (const auto& [c, val] : row) {
                        m.col.push_back(c);
                        m.val.push_back(val);
                    }
                }
                m.row_ptr.push_back(std::int64_t(m.col.size()));
            }
    return m;
}

std::vector<CsrMatrix> waveletMatrices(const Grid& g, WaveletKind kind, int max_levels) {
    checkGrid(g, "wavelet transform");
    if (max_levels < 0 || max_levels > 16) throw InputError("wavelet transform: levels must be in 0..16");
    std::array<int, 3> box = g.n;
    std::vector<CsrMatrix> out;
    for (int level = 0; level < max_levels; ++level) {
        bool split = false;
        for (int axis = 0; axis < g.dims; ++axis) {
            const int len = box[std::size_t(axis)];
            if (len % 2 != 0 || len < 8) continue;
            out.push_back(waveletLevelMatrix(g, kind, axis, box));
            split = true;
        }
        if (!split) break;
        // The next level works on the low-pass box of every axis split here.
        for (int axis = 0; axis < g.dims; ++axis)
            if (box[std::size_t(axis)] % 2 == 0 && box[std::size_t(axis)] >= 8) box[std::size_t(axis)] /= 2;
    }
    return out;
}

SparseTerm waveletSparsity(VectorSpace& space, const Grid& grid, double weight, WaveletKind kind, int max_levels) {
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("wavelet sparsity: the weight must be a finite number >= 0");
    SparseTerm t;
    t.name = "wavelet";
    t.weight = weight;
    t.transform = orthogonalChain(space, waveletMatrices(grid, kind, max_levels), grid.voxels());
    t.group = 1;
    return t;
}

double defaultSparseLambda(RegularizerKind kind) {
    switch (kind) {
        case RegularizerKind::TotalVariation: return 0.1;
        case RegularizerKind::Wavelet: return 0.2;  // FISTA with Haar and random shifts: best 0.2-0.3 on the 2D demo cases
        // Differences across the reference's edges weigh 0.05: the prior tolerates a larger lambda.
        case RegularizerKind::AnatomicalTotalVariation: return 1.0;
        default: throw InputError("'" + toString(kind) + "' is not a sparse prior");
    }
}

double sparsePenalty(const std::vector<SparseTerm>& terms, const Vector& x) {
    double sum = 0;
    for (const SparseTerm& t : terms) {
        if (t.weight == 0) continue;
        VectorSpace& s = t.transform->space();
        Vector wx = s.make(t.transform->outSize());
        t.transform->forward(x, wx);
        sum += t.weight * s.groupNorm1(wx, t.group);
    }
    return sum;
}

}  // namespace recon
