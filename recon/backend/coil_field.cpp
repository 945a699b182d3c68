#include "recon/backend/coil_field.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "recon/backend/backend.hpp"
#include "recon/core/conventions.hpp"

namespace recon {

std::size_t blockPoints(const BlockShape& s) { return std::size_t(s[0]) * std::size_t(s[1]) * std::size_t(s[2]); }

ComplexArray transformAxis(const ComplexArray& in, BlockShape& shape, int axis, const ComplexArray& m, int out_len) {
    const int len = shape[std::size_t(axis)];
    std::size_t below = 1, above = 1;
    for (int a = 0; a < axis; ++a) below *= std::size_t(shape[std::size_t(a)]);
    for (int a = axis + 1; a < 3; ++a) above *= std::size_t(shape[std::size_t(a)]);
    above *= in.size() / (below * above * std::size_t(len));  // several blocks side by side
    ComplexArray out(below * above * std::size_t(out_len));
    // Every (hi, o) writes its own output row: parallel over both (the last axis has above = 1).
#pragma omp parallel for collapse(2) schedule(static)
    for (std::ptrdiff_t hi = 0; hi < std::ptrdiff_t(above); ++hi)
        for (int o = 0; o < out_len; ++o) {
            const cdouble* row = m.data() + std::size_t(o) * std::size_t(len);
            cdouble* dst = out.data() + (std::size_t(hi) * std::size_t(out_len) + std::size_t(o)) * below;
            // In real arithmetic: std::complex's product with its NaN check does not vectorise
            // (the same products and sums, so the same values).
            double* d = reinterpret_cast<double*>(dst);
            for (int i = 0; i < len; ++i) {
                const double* src = reinterpret_cast<const double*>(in.data() + (std::size_t(hi) * std::size_t(len) + std::size_t(i)) * below);
                const double wr = row[i].real(), wi = row[i].imag();
#pragma omp simd
                for (std::size_t lo = 0; lo < below; ++lo) {
                    const double sr = src[2 * lo], si = src[2 * lo + 1];
                    d[2 * lo] += wr * sr - wi * si;
                    d[2 * lo + 1] += wr * si + wi * sr;
                }
            }
        }
    shape[std::size_t(axis)] = out_len;
    return out;
}

ComplexArray dftMatrix(int n, int f0, int f_count, int sign, bool to_image) {
    ComplexArray m(std::size_t(n) * std::size_t(f_count));
    for (int o = 0; o < f_count; ++o)
        for (int j = 0; j < n; ++j) {
            const double phase = sign * 2 * kPi * double(f0 + o) * double(j - n / 2) / double(n);
            const cdouble e(std::cos(phase), std::sin(phase));
            if (to_image) m[std::size_t(j) * std::size_t(f_count) + std::size_t(o)] = e;
            else m[std::size_t(o) * std::size_t(n) + std::size_t(j)] = e;
        }
    return m;
}

std::size_t signalSubspaceSize(const std::vector<double>& values, double threshold) {
    if (values.empty()) return 0;
    const double energy_max = std::max(0.0, values.back());
    std::size_t kept = 0;
    while (kept < values.size() && values[values.size() - 1 - kept] >= threshold * energy_max) ++kept;
    return kept;
}

BlockShape CalibrationMatrix::positions() const {
    return {block[0] - kernel[0] + 1, block[1] - kernel[1] + 1, block[2] - kernel[2] + 1};
}

namespace {

void checkCalibrationMatrix(const CalibrationMatrix& m) {
    for (int a = 0; a < 3; ++a)
        if (m.kernel[std::size_t(a)] < 1 || m.block[std::size_t(a)] < m.kernel[std::size_t(a)])
            throw InputError("calibration matrix: the kernel (" + std::to_string(m.kernel[std::size_t(a)]) +
                             ") must fit the block (" + std::to_string(m.block[std::size_t(a)]) + ") on axis " + std::to_string(a));
    if (m.coils < 1 || m.values.size() != std::size_t(m.coils) * blockPoints(m.block))
        throw InputError("calibration matrix: " + std::to_string(m.values.size()) + " block values for " +
                         std::to_string(m.coils) + " coils of " + std::to_string(blockPoints(m.block)) + " points");
}

}  // namespace

ComplexArray calibrationMatrixValues(const CalibrationMatrix& m) {
    checkCalibrationMatrix(m);
    const BlockShape pos = m.positions(), &cal = m.block, &ker = m.kernel;
    const std::size_t rows = m.rows(), columns = m.cols(), ker_points = blockPoints(ker), cal_points = blockPoints(cal);
    ComplexArray a(rows * columns);
    // Column by column (coil, kernel offset), in parallel: each writes its own contiguous column.
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t col = 0; col < std::ptrdiff_t(columns); ++col) {
        const std::size_t c = std::size_t(col) / ker_points, k = std::size_t(col) % ker_points;
        const std::size_t kx = k % std::size_t(ker[0]), ky = k / std::size_t(ker[0]) % std::size_t(ker[1]),
                          kz = k / (std::size_t(ker[0]) * std::size_t(ker[1]));
        cdouble* dst = a.data() + std::size_t(col) * rows;
        const cdouble* coil = m.values.data() + c * cal_points;
        for (std::size_t qz = 0; qz < std::size_t(pos[2]); ++qz)
            for (std::size_t qy = 0; qy < std::size_t(pos[1]); ++qy) {
                const cdouble* src = coil + ((qz + kz) * std::size_t(cal[1]) + qy + ky) * std::size_t(cal[0]) + kx;
                for (std::size_t qx = 0; qx < std::size_t(pos[0]); ++qx) *dst++ = src[qx];
            }
    }
    return a;
}

ComplexArray calibrationGram(const CalibrationMatrix& m) {
    checkCalibrationMatrix(m);
    const BlockShape pos = m.positions(), &cal = m.block, &ker = m.kernel;
    const std::size_t columns = m.cols(), ker_points = blockPoints(ker), cal_points = blockPoints(cal);
    const BlockShape diff{2 * ker[0] - 1, 2 * ker[1] - 1, 2 * ker[2] - 1};
    const std::size_t diffs = blockPoints(diff), pairs = std::size_t(m.coils) * std::size_t(m.coils + 1) / 2;
    ComplexArray gram(columns * columns);
    // One task per (coil pair c <= c', offset difference delta): the product image
    // f(p) = conj(x_c(p)) x_c'(p + delta) over the points the patches reach, then its sums over
    // the boxes [kappa, kappa + positions) for every kappa with kappa + delta inside the kernel,
    // one axis after the other (sliding sums), written to ((c, kappa), (c', kappa + delta)) and,
    // for c < c', its mirror. For c = c' every entry is its own task's (delta and -delta cover
    // the two triangles), so no two tasks write one entry.
#pragma omp parallel
    {
        ComplexArray f(cal_points), s1(cal_points), s2(cal_points);
#pragma omp for schedule(dynamic, 16)
        for (std::ptrdiff_t task = 0; task < std::ptrdiff_t(pairs * diffs); ++task) {
            std::size_t pair = std::size_t(task) / diffs;
            const std::size_t d = std::size_t(task) % diffs;
            int r = 0;
            while (pair >= std::size_t(m.coils - r)) pair -= std::size_t(m.coils - r++);
            const int c0 = r, c1 = r + int(pair);
            std::array<int, 3> delta{}, lo{}, hi{}, len{};  // kappa in [lo, hi); f on [lo, hi - 1 + pos)
            delta[0] = int(d % std::size_t(diff[0])) - (ker[0] - 1);
            delta[1] = int(d / std::size_t(diff[0]) % std::size_t(diff[1])) - (ker[1] - 1);
            delta[2] = int(d / (std::size_t(diff[0]) * std::size_t(diff[1]))) - (ker[2] - 1);
            for (int a = 0; a < 3; ++a) {
                lo[std::size_t(a)] = std::max(0, -delta[std::size_t(a)]);
                hi[std::size_t(a)] = std::min(ker[std::size_t(a)], ker[std::size_t(a)] - delta[std::size_t(a)]);
                len[std::size_t(a)] = hi[std::size_t(a)] - lo[std::size_t(a)] + pos[std::size_t(a)] - 1;
            }
            const cdouble* x0 = m.values.data() + std::size_t(c0) * cal_points;
            const cdouble* x1 = m.values.data() + std::size_t(c1) * cal_points;
            auto at = [&](int px, int py, int pz) { return (std::size_t(pz) * std::size_t(cal[1]) + std::size_t(py)) * std::size_t(cal[0]) + std::size_t(px); };
            // f, dense on len[0] x len[1] x len[2] (x fastest), p = lo + index. conj(a) b in real
            // arithmetic, a row at a time: std::complex's product (its NaN check) does not
            // vectorise, and was most of this function's time.
            for (int z = 0; z < len[2]; ++z)
                for (int y = 0; y < len[1]; ++y) {
                    const int py = lo[1] + y, pz = lo[2] + z;
                    const double* a = reinterpret_cast<const double*>(x0 + at(lo[0], py, pz));
                    const double* b = reinterpret_cast<const double*>(x1 + at(lo[0] + delta[0], py + delta[1], pz + delta[2]));
                    double* o = reinterpret_cast<double*>(f.data() + (std::size_t(z) * std::size_t(len[1]) + std::size_t(y)) * std::size_t(len[0]));
#pragma omp simd
                    for (int x = 0; x < len[0]; ++x) {
                        o[2 * x] = a[2 * x] * b[2 * x] + a[2 * x + 1] * b[2 * x + 1];
                        o[2 * x + 1] = a[2 * x] * b[2 * x + 1] - a[2 * x + 1] * b[2 * x];
                    }
                }
            // Sliding box sums of `pos` along one axis: in has sizes n_in, out the same with that
            // axis's length replaced by w = hi - lo (one sum per kappa). The lines along the axis
            // side by side (the innermost loop over the contiguous index l, which vectorises).
            auto boxSums = [&](const ComplexArray& in, ComplexArray& out, std::array<int, 3> n_in, int axis) {
                const int w = hi[std::size_t(axis)] - lo[std::size_t(axis)], p = pos[std::size_t(axis)];
                std::size_t stride = 1;
                for (int a = 0; a < axis; ++a) stride *= std::size_t(n_in[std::size_t(a)]);
                std::size_t above = 1;
                for (int a = axis + 1; a < 3; ++a) above *= std::size_t(n_in[std::size_t(a)]);
                const std::size_t n_axis = std::size_t(n_in[std::size_t(axis)]), reals = 2 * stride;
                for (std::size_t h = 0; h < above; ++h) {
                    const double* src = reinterpret_cast<const double*>(in.data() + h * n_axis * stride);
                    double* dst = reinterpret_cast<double*>(out.data() + h * std::size_t(w) * stride);
                    for (std::size_t l = 0; l < reals; ++l) dst[l] = 0;
                    for (int j = 0; j < p; ++j)
#pragma omp simd
                        for (std::size_t l = 0; l < reals; ++l) dst[l] += src[std::size_t(j) * reals + l];
                    for (int k = 1; k < w; ++k) {
                        const double *added = src + std::size_t(k + p - 1) * reals, *dropped = src + std::size_t(k - 1) * reals;
                        const double* previous = dst + std::size_t(k - 1) * reals;
                        double* sums = dst + std::size_t(k) * reals;
#pragma omp simd
                        for (std::size_t l = 0; l < reals; ++l) sums[l] = previous[l] + (added[l] - dropped[l]);
                    }
                }
            };
            // z and y first (whole x lines at once), x last, on what is left (w_x... x w_y x w_z).
            std::array<int, 3> n = len;
            boxSums(f, s1, n, 2);
            n[2] = hi[2] - lo[2];
            boxSums(s1, s2, n, 1);
            n[1] = hi[1] - lo[1];
            boxSums(s2, s1, n, 0);
            n[0] = hi[0] - lo[0];
            // s1 now holds G((c0, kappa), (c1, kappa + delta)) for kappa in [lo, hi).
            std::size_t j = 0;
            for (int kz = lo[2]; kz < hi[2]; ++kz)
                for (int ky = lo[1]; ky < hi[1]; ++ky)
                    for (int kx = lo[0]; kx < hi[0]; ++kx, ++j) {
                        const std::size_t row = std::size_t(c0) * ker_points +
                                                (std::size_t(kz) * std::size_t(ker[1]) + std::size_t(ky)) * std::size_t(ker[0]) + std::size_t(kx);
                        const std::size_t col = std::size_t(c1) * ker_points +
                                                (std::size_t(kz + delta[2]) * std::size_t(ker[1]) + std::size_t(ky + delta[1])) * std::size_t(ker[0]) +
                                                std::size_t(kx + delta[0]);
                        gram[col * columns + row] = s1[j];
                        if (c0 != c1) gram[row * columns + col] = std::conj(s1[j]);
                    }
        }
    }
    return gram;
}

ComplexArray blockImages(const FrequencyBlocks& blocks, const Grid& grid) {
    ComplexArray out = blocks.values;
    BlockShape shape = blocks.shape;
    for (int a = 0; a < grid.dims; ++a) {
        const ComplexArray m = dftMatrix(grid.n[std::size_t(a)], blocks.first[std::size_t(a)], blocks.shape[std::size_t(a)],
                                         blocks.sign, true);
        out = transformAxis(out, shape, a, m, grid.n[std::size_t(a)]);
    }
    return out;
}

void checkCoilField(const CoilField& field, const Grid& grid) {
    const std::size_t pairs = std::size_t(field.coils) * std::size_t(field.coils + 1) / 2;
    auto fits = [&](const FrequencyBlocks& b, std::size_t count) {
        for (int a = 0; a < 3; ++a)
            if (b.shape[std::size_t(a)] < 1 || (a >= grid.dims && b.shape[std::size_t(a)] != 1)) return false;
        return b.values.size() == count * blockPoints(b.shape) && (b.sign == 1 || b.sign == -1);
    };
    if (field.coils < 1 || !fits(field.coil_blocks, std::size_t(field.coils)))
        throw InputError("coil field: " + std::to_string(field.coil_blocks.values.size()) +
                         " coil block values do not make one block per coil for " + std::to_string(field.coils) + " coils");
    if (!field.pair_blocks.values.empty() && !fits(field.pair_blocks, pairs))
        throw InputError("coil field: " + std::to_string(field.pair_blocks.values.size()) +
                         " pair block values do not make one block per coil pair (" + std::to_string(pairs) + ")");
    if (!(field.object_threshold >= 0 && field.object_threshold < 1))
        throw InputError("coil maps: the mask threshold must lie in [0, 1)");
    if (field.half_width < 0 || field.half_width > 32)
        throw InputError("Walsh coil maps: the neighbourhood's half width must lie in [0, 32], got " +
                         std::to_string(field.half_width));
}

std::vector<std::uint8_t> objectFromRootSumOfSquares(const std::vector<double>& rss, double threshold) {
    double rss_max = 0;
    for (double r : rss) rss_max = std::max(rss_max, r);
    if (!(rss_max > 0)) throw InputError("coil maps: the centre of k-space holds no signal");
    std::vector<std::uint8_t> mask(rss.size());
    for (std::size_t v = 0; v < rss.size(); ++v) mask[v] = rss[v] > threshold * rss_max ? 1 : 0;
    return mask;
}

void boxSumAlongAxis(cdouble* data, const Grid& g, int axis, int h) {
    const int len = g.n[std::size_t(axis)];
    const std::size_t stride = axis == 0 ? 1 : axis == 1 ? std::size_t(g.n[0]) : std::size_t(g.n[0]) * std::size_t(g.n[1]);
    const std::size_t lines = g.voxels() / std::size_t(len);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t line = 0; line < std::ptrdiff_t(lines); ++line) {
        // The line's first element: split the line index into the indices below and above the axis.
        const std::size_t below = std::size_t(line) % stride, above = std::size_t(line) / stride;
        cdouble* p = data + above * stride * std::size_t(len) + below;
        std::vector<cdouble> prefix(std::size_t(len) + 1);
        for (int i = 0; i < len; ++i) prefix[std::size_t(i) + 1] = prefix[std::size_t(i)] + p[std::size_t(i) * stride];
        for (int i = 0; i < len; ++i)
            p[std::size_t(i) * stride] = prefix[std::size_t(std::min(len, i + h + 1))] - prefix[std::size_t(std::max(0, i - h))];
    }
}

void dominantEigenvectorsWhere(Backend& backend, int n, std::size_t voxels, const ComplexArray& upper,
                               const std::vector<std::uint8_t>* only, ComplexArray& vectors,
                               std::vector<double>& values, const Progress& progress) {
    if (!only) {
        backend.dominantEigenvectors(n, voxels, upper, vectors, values, progress);
        return;
    }
    if (only->size() != voxels)
        throw InputError("dominant eigenvectors: the voxel selection has " + std::to_string(only->size()) +
                         " values for " + std::to_string(voxels) + " voxels");
    const std::size_t pairs = std::size_t(n) * std::size_t(n + 1) / 2;
    if (upper.size() != pairs * voxels)
        throw InputError("dominant eigenvectors: " + std::to_string(upper.size()) + " values are not the upper triangles of " +
                         std::to_string(voxels) + " matrices of " + std::to_string(n) + " x " + std::to_string(n));
    // Gather the selected voxels, decompose them on the backend, scatter back: zero elsewhere.
    std::vector<std::size_t> kept;
    for (std::size_t v = 0; v < voxels; ++v)
        if ((*only)[v]) kept.push_back(v);
    ComplexArray selected(pairs * kept.size());
    for (std::size_t p = 0; p < pairs; ++p)
        for (std::size_t k = 0; k < kept.size(); ++k) selected[p * kept.size() + k] = upper[p * voxels + kept[k]];
    ComplexArray part_vectors;
    std::vector<double> part_values;
    if (!kept.empty()) backend.dominantEigenvectors(n, kept.size(), selected, part_vectors, part_values, progress);
    vectors.assign(std::size_t(n) * voxels, cdouble(0));
    values.assign(voxels, 0.0);
    for (std::size_t k = 0; k < kept.size(); ++k) {
        values[kept[k]] = part_values[k];
        for (int r = 0; r < n; ++r) vectors[std::size_t(r) * voxels + kept[k]] = part_vectors[std::size_t(r) * kept.size() + k];
    }
    progress.update(1.0);
}

// The host's path: the field in host memory (pair after pair), then the per-voxel
// eigen-decompositions on this backend.
CoilFieldEigen Backend::coilFieldEigenvectors(const Grid& grid, const CoilField& field, const Progress& progress) {
    checkCoilField(field, grid);
    const int n = field.coils;
    const std::size_t voxels = grid.voxels(), pairs = std::size_t(n) * std::size_t(n + 1) / 2;
    CoilFieldEigen out;
    const ComplexArray images = blockImages(field.coil_blocks, grid);
    std::vector<double> rss(voxels, 0.0);
    for (int c = 0; c < n; ++c)
        for (std::size_t v = 0; v < voxels; ++v) rss[v] += std::norm(images[std::size_t(c) * voxels + v]);
    for (double& r : rss) r = std::sqrt(r);
    out.object = objectFromRootSumOfSquares(rss, field.object_threshold);
    progress.update(0.1);
    ComplexArray upper;
    if (!field.pair_blocks.values.empty()) {
        upper = blockImages(field.pair_blocks, grid);
    } else {
        upper.resize(pairs * voxels);
        std::size_t p = 0;
        for (int r = 0; r < n; ++r)
            for (int c = r; c < n; ++c, ++p) {
                progress.check();
                cdouble* dst = upper.data() + p * voxels;
                const cdouble* a = images.data() + std::size_t(r) * voxels;
                const cdouble* b = images.data() + std::size_t(c) * voxels;
                for (std::size_t v = 0; v < voxels; ++v) dst[v] = a[v] * std::conj(b[v]);
                for (int axis = 0; axis < grid.dims; ++axis) boxSumAlongAxis(dst, grid, axis, field.half_width);
            }
    }
    progress.update(0.2);
    dominantEigenvectorsWhere(*this, n, voxels, upper, &out.object, out.vectors, out.values, progress.part(0.2, 1));
    return out;
}

}  // namespace recon
