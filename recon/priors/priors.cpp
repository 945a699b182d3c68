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
}

// The CSR references index columns with int32.
void checkMatrixSize(const Grid& g, const char* what) {
    checkGrid(g, what);
    if (std::size_t(g.dims) * g.voxels() > std::size_t(INT32_MAX))
        throw InputError(std::string(what) + ": grid " + g.describe() + " is too large for a sparse transform");
}

// The gradient: VectorSpace::gradient with the (optional) edge weights resident on the backend.
class GradientOperator final : public LinearOperator {
public:
    GradientOperator(VectorSpace& space, const Grid& grid, const std::vector<double>* edge_weights, std::string name)
        : LinearOperator(space, grid.voxels(), std::size_t(grid.dims) * grid.voxels(), std::move(name)), grid_(grid) {
        if (edge_weights) weights_ = space.fromHost(ComplexArray(edge_weights->begin(), edge_weights->end()));
    }

private:
    const Vector* weights() const { return weights_.empty() ? nullptr : &weights_; }
    void applyForward(const Vector& x, Vector& y) const override { space().gradient(grid_, weights(), Product::Forward, x, y); }
    void applyAdjoint(const Vector& y, Vector& x) const override { space().gradient(grid_, weights(), Product::Adjoint, y, x); }
    void applyNormal(const Vector& x, Vector& y) const override { space().gradient(grid_, weights(), Product::Normal, x, y); }
    Grid grid_;
    Vector weights_;
};

// The multilevel wavelet transform: its levels in order (synthesis: reversed), ping-ponging between
// the output and one scratch vector so that the last level lands in the output. A level's output
// buffer then holds the result of two levels before, which differs from its input only inside the
// previous level's box: after the first two levels only that box (with this level's) is written.
class WaveletOperator final : public LinearOperator, public ShrinkableTransform {
public:
    WaveletOperator(VectorSpace& space, const Grid& grid, WaveletKind kind, int max_levels)
        : LinearOperator(space, grid.voxels(), grid.voxels(), toString(kind) + " wavelet transform"),
          grid_(grid),
          lowpass_(waveletLowPass(kind)),
          levels_(waveletLevels(grid, max_levels)) {
        if (kind == WaveletKind::Haar) tiles_ = haarSplits(grid, max_levels);
    }

    void shrink(const Vector& x, std::size_t offset, double t, Vector& y) const override {
        if (tiles_) return space().haarShrink(grid_, *tiles_, offset, t, x, y);
        // Level by level: shift, transform, threshold, back (scratch 0 is chain()'s).
        Vector& shifted = scratch(1, inSize());
        Vector& coeffs = scratch(2, inSize());
        cyclicShift(space(), x, offset, shifted);
        chain(shifted, coeffs, false);
        space().softThreshold(coeffs, t, coeffs);
        chain(coeffs, shifted, true);
        cyclicShift(space(), shifted, inSize() - offset % inSize(), y);
    }
    double norm1(const Vector& x, const std::vector<std::size_t>& offsets) const override {
        if (offsets.empty()) throw InputError("wavelet l1 norm: no shifts given");
        if (tiles_) return space().haarNorm1(grid_, *tiles_, offsets, x);
        Vector& shifted = scratch(1, inSize());
        Vector& coeffs = scratch(2, inSize());
        double sum = 0;
        for (std::size_t offset : offsets) {
            cyclicShift(space(), x, offset, shifted);
            chain(shifted, coeffs, false);
            sum += space().norm1(coeffs);
        }
        return sum / double(offsets.size());
    }

private:
    void applyForward(const Vector& x, Vector& y) const override { chain(x, y, false); }
    void applyAdjoint(const Vector& y, Vector& x) const override { chain(y, x, true); }
    void applyNormal(const Vector& x, Vector& y) const override { space().copy(x, y); }  // orthogonal
    void chain(const Vector& in, Vector& out, bool inverse) const {
        const std::size_t count = levels_.size();
        if (count == 0) return space().copy(in, out);
        Vector& other = scratch(0, inSize());
        const Vector* from = &in;
        std::array<int, 3> previous_box{};
        for (std::size_t t = 0; t < count; ++t) {
            const WaveletLevel& level = levels_[inverse ? count - 1 - t : t];
            Vector& to = (count - 1 - t) % 2 == 0 ? out : other;
            std::array<int, 3> extent = grid_.n;  // the first two levels' outputs hold nothing yet
            if (t >= 2)
                for (std::size_t a = 0; a < 3; ++a) extent[a] = std::max(level.box[a], previous_box[a]);
            space().waveletLevel(grid_, level.axis, level.box, extent, lowpass_, inverse, *from, to);
            from = &to;
            previous_box = level.box;
        }
    }
    Grid grid_;
    std::vector<double> lowpass_;
    std::vector<WaveletLevel> levels_;
    std::optional<std::array<int, 3>> tiles_;  // Haar's tiles, where they fit
};

}  // namespace

std::vector<double> waveletLowPass(WaveletKind k) {
    if (k == WaveletKind::Haar) return {1 / std::sqrt(2.0), 1 / std::sqrt(2.0)};
    const double r3 = std::sqrt(3.0), d = 4 * std::sqrt(2.0);
    return {(1 + r3) / d, (3 + r3) / d, (3 - r3) / d, (1 - r3) / d};
}

LinearOperatorPtr gradientOperator(VectorSpace& space, const Grid& grid, const std::vector<double>* edge_weights, std::string name) {
    checkGrid(grid, "total variation");
    if (edge_weights && edge_weights->size() != std::size_t(grid.dims) * grid.voxels())
        throw InputError("total variation: " + std::to_string(edge_weights->size()) + " edge weights for " +
                         std::to_string(grid.dims) + " x " + std::to_string(grid.voxels()) + " differences");
    return std::make_shared<GradientOperator>(space, grid, edge_weights, std::move(name));
}

CsrMatrix gradientMatrix(const Grid& g, const std::vector<double>* edge_weights) {
    checkMatrixSize(g, "total variation");
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

LinearOperatorPtr quadraticRegularizer(VectorSpace& space, RegularizerKind kind, const Grid& grid, const ComplexArray* reference,
                                       const AnatomicalOptions& opts) {
    if (kind == RegularizerKind::FiniteDifference) return gradientOperator(space, grid, nullptr, "W (fd)");
    if (kind != RegularizerKind::AnatomicalFiniteDifference)
        throw InputError("'" + toString(kind) + "' has no matrix-free quadratic form (expected fd or anatomical)");
    if (!reference) throw InputError("the anatomically weighted regulariser needs a reference image");
    const std::vector<double> edges = anatomicalEdgeWeights(grid, *reference, opts);
    return gradientOperator(space, grid, &edges, "W (anatomical)");
}

SparseTerm totalVariation(VectorSpace& space, const Grid& grid, double weight, bool anisotropic,
                          const ComplexArray* reference, const AnatomicalOptions& opts) {
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("total variation: the weight must be a finite number >= 0");
    std::vector<double> edges;
    if (reference) edges = anatomicalEdgeWeights(grid, *reference, opts);
    SparseTerm t;
    t.name = reference ? "anatomical-tv" : "tv";
    t.weight = weight;
    t.transform = gradientOperator(space, grid, reference ? &edges : nullptr, reference ? "anatomically weighted gradient" : "gradient");
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
    checkMatrixSize(g, "wavelet transform");
    if (axis < 0 || axis >= g.dims) throw InputError("wavelet transform: no axis " + std::to_string(axis));
    const std::vector<double> h = waveletLowPass(kind);
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

std::vector<WaveletLevel> waveletLevels(const Grid& g, int max_levels) {
    checkGrid(g, "wavelet transform");
    if (max_levels < 0 || max_levels > 16) throw InputError("wavelet transform: levels must be in 0..16");
    std::array<int, 3> box = g.n;
    std::vector<WaveletLevel> out;
    for (int level = 0; level < max_levels; ++level) {
        bool split = false;
        for (int axis = 0; axis < g.dims; ++axis) {
            const int len = box[std::size_t(axis)];
            if (len % 2 != 0 || len < 8) continue;
            out.push_back({axis, box});
            split = true;
        }
        if (!split) break;
        // The next level works on the low-pass box of every axis split here.
        for (int axis = 0; axis < g.dims; ++axis)
            if (box[std::size_t(axis)] % 2 == 0 && box[std::size_t(axis)] >= 8) box[std::size_t(axis)] /= 2;
    }
    return out;
}

std::string toString(WaveletShifts s) {
    switch (s) {
        case WaveletShifts::Fixed: return "off";
        case WaveletShifts::Random: return "random";
        default: return "average";
    }
}

WaveletShifts parseWaveletShifts(const std::string& s) {
    if (s == "off") return WaveletShifts::Fixed;
    if (s == "on" || s == "random") return WaveletShifts::Random;
    if (s == "average") return WaveletShifts::Averaged;
    throw InputError("unknown wavelet shift rule '" + s + "' (expected off, random or average)");
}

std::vector<std::size_t> averagedShiftOffsets(const Grid& grid, int max_levels) {
    checkGrid(grid, "wavelet shifts");
    std::array<int, 3> splits{};
    for (const WaveletLevel& l : waveletLevels(grid, max_levels)) ++splits[std::size_t(l.axis)];
    const int levels = std::max({splits[0], splits[1], splits[2]});
    const int block = 1 << levels, step = block / kAveragedShifts + 1;
    std::vector<std::size_t> out;
    for (int k = 0; k < kAveragedShifts; ++k) {
        const std::size_t d = std::size_t((k * step) % block);
        // The same d along every axis the grid has: d (1 + n0 + n0 n1) in the flattened image.
        std::size_t offset = 0, stride = 1;
        for (int a = 0; a < grid.dims; ++a) {
            offset += d * stride;
            stride *= std::size_t(grid.n[std::size_t(a)]);
        }
        out.push_back(offset % grid.voxels());
    }
    return out;
}

std::optional<std::array<int, 3>> haarSplits(const Grid& grid, int max_levels) {
    std::array<int, 3> splits{};
    for (const WaveletLevel& l : waveletLevels(grid, max_levels)) ++splits[std::size_t(l.axis)];
    const std::size_t tile = std::size_t(1) << (splits[0] + splits[1] + splits[2]);
    if (tile > VectorSpace::kMaxHaarTile) return std::nullopt;
    return splits;
}

std::vector<CsrMatrix> waveletMatrices(const Grid& g, WaveletKind kind, int max_levels) {
    std::vector<CsrMatrix> out;
    for (const WaveletLevel& l : waveletLevels(g, max_levels)) out.push_back(waveletLevelMatrix(g, kind, l.axis, l.box));
    return out;
}

LinearOperatorPtr waveletOperator(VectorSpace& space, const Grid& grid, WaveletKind kind, int max_levels) {
    return std::make_shared<WaveletOperator>(space, grid, kind, max_levels);
}

void checkSparseTerm(const SparseTerm& t, const VectorSpace& space, std::size_t n, const char* solver) {
    const std::string who = std::string(solver) + ": ";
    if (!t.transform) throw InputError(who + "the term '" + t.name + "' has no transform");
    if (t.transform->inSize() != n)
        throw InputError(who + "the term '" + t.name + "' (" + t.transform->name() + ") takes " +
                         std::to_string(t.transform->inSize()) + " values, the image has " + std::to_string(n));
    if (&t.transform->space() != &space) throw InputError(who + "the term '" + t.name + "' lives on another backend");
    if (!(t.weight >= 0) || !std::isfinite(t.weight)) throw InputError(who + "the weight of '" + t.name + "' is not a finite number >= 0");
    groupStride(t.transform->outSize(), t.group, solver);
}

SparseTerm waveletSparsity(VectorSpace& space, const Grid& grid, double weight, WaveletKind kind, int max_levels) {
    if (!(weight >= 0) || !std::isfinite(weight)) throw InputError("wavelet sparsity: the weight must be a finite number >= 0");
    SparseTerm t;
    t.name = "wavelet";
    t.weight = weight;
    t.transform = waveletOperator(space, grid, kind, max_levels);
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
