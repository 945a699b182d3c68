// The checks of VectorSpace's stencil primitives, once for every backend.
#include "recon/linop/vector_space.hpp"

#include <cmath>
#include <string>

#include "recon/core/errors.hpp"

namespace recon {
namespace {

void checkImageGrid(const Grid& g, const char* what) {
    if (g.dims < 1 || g.dims > 3 || g.n[0] < 1 || g.n[1] < 1 || g.n[2] < 1 || (g.dims < 3 && g.n[2] != 1) ||
        (g.dims < 2 && g.n[1] != 1))
        throw InputError(std::string(what) + ": invalid grid " + g.describe());
}

void checkLength(const Vector& v, std::size_t n, const char* what, const char* which) {
    if (v.size() != n)
        throw InputError(std::string(what) + ": " + which + " has " + std::to_string(v.size()) + " values, expected " +
                         std::to_string(n));
}

}  // namespace

void VectorSpace::gradient(const Grid& grid, const Vector* weights, Product p, const Vector& x, Vector& y) {
    const char* what = "gradient";
    checkImageGrid(grid, what);
    const std::size_t nvox = grid.voxels(), ndiff = std::size_t(grid.dims) * nvox;
    checkLength(x, p == Product::Adjoint ? ndiff : nvox, what, "the input");
    checkLength(y, p == Product::Forward ? ndiff : nvox, what, "the output");
    if (weights) checkLength(*weights, ndiff, what, "the edge weights");
    if (x.storage() == y.storage()) throw InputError("gradient: the output must not be the input");
    applyGradient(grid, weights, p, x, y);
}

void VectorSpace::waveletLevel(const Grid& grid, int axis, const std::array<int, 3>& box, const std::array<int, 3>& extent,
                               const std::vector<double>& lowpass, bool inverse, const Vector& x, Vector& y) {
    const char* what = "wavelet level";
    checkImageGrid(grid, what);
    if (axis < 0 || axis >= grid.dims) throw InputError("wavelet level: the grid " + grid.describe() + " has no axis " + std::to_string(axis));
    if (lowpass.size() < 2 || lowpass.size() > kMaxWaveletTaps || lowpass.size() % 2 != 0)
        throw InputError("wavelet level: a filter of " + std::to_string(lowpass.size()) + " taps (expected an even number, 2.." +
                         std::to_string(kMaxWaveletTaps) + ")");
    for (int a = 0; a < 3; ++a) {
        const auto i = std::size_t(a);
        if (box[i] < 1 || box[i] > extent[i] || extent[i] > grid.n[i])
            throw InputError("wavelet level: the box " + std::to_string(box[i]) + " and extent " + std::to_string(extent[i]) +
                             " along axis " + std::to_string(a) + " do not fit the grid " + grid.describe());
    }
    const int len = box[std::size_t(axis)];
    if (len % 2 != 0 || len < int(lowpass.size()))
        throw InputError("wavelet level: a box length of " + std::to_string(len) + " along axis " + std::to_string(axis) +
                         " cannot be split by a filter of " + std::to_string(lowpass.size()) + " taps");
    checkLength(x, grid.voxels(), what, "the input");
    checkLength(y, grid.voxels(), what, "the output");
    if (x.storage() == y.storage()) throw InputError("wavelet level: the output must not be the input");
    applyWaveletLevel(grid, axis, box, extent, lowpass, inverse, x, y);
}

namespace {

void checkHaarTiles(const Grid& grid, const std::array<int, 3>& splits, const char* what) {
    checkImageGrid(grid, what);
    std::size_t tile = 1;
    for (int a = 0; a < 3; ++a) {
        const auto i = std::size_t(a);
        if (splits[i] < 0 || splits[i] > 16 || (a >= grid.dims && splits[i] != 0))
            throw InputError(std::string(what) + ": " + std::to_string(splits[i]) + " splits along axis " + std::to_string(a) +
                             " of the grid " + grid.describe());
        const int side = 1 << splits[i];
        if (grid.n[i] % side != 0)
            throw InputError(std::string(what) + ": axis " + std::to_string(a) + " of the grid " + grid.describe() +
                             " is not a multiple of its tile of " + std::to_string(side) + " voxels");
        tile *= std::size_t(side);
    }
    if (tile > VectorSpace::kMaxHaarTile)
        throw InputError(std::string(what) + ": a tile of " + std::to_string(tile) + " voxels (at most " +
                         std::to_string(VectorSpace::kMaxHaarTile) + ")");
}

}  // namespace

void VectorSpace::haarShrink(const Grid& grid, const std::array<int, 3>& splits, std::size_t offset, double t, const Vector& x,
                             Vector& y) {
    const char* what = "Haar shrinkage";
    checkHaarTiles(grid, splits, what);
    checkLength(x, grid.voxels(), what, "the input");
    checkLength(y, grid.voxels(), what, "the output");
    if (!(t >= 0) || !std::isfinite(t)) throw InputError("Haar shrinkage: the threshold must be a finite number >= 0");
    applyHaarShrink(grid, splits, offset % grid.voxels(), t, x, y);
}

double VectorSpace::haarNorm1(const Grid& grid, const std::array<int, 3>& splits, const std::vector<std::size_t>& offsets,
                              const Vector& x) {
    const char* what = "Haar l1 norm";
    checkHaarTiles(grid, splits, what);
    checkLength(x, grid.voxels(), what, "the input");
    if (offsets.empty() || offsets.size() > 64) throw InputError("Haar l1 norm: 1..64 shifts, not " + std::to_string(offsets.size()));
    std::vector<std::size_t> reduced;
    for (std::size_t o : offsets) reduced.push_back(o % grid.voxels());
    return applyHaarNorm1(grid, splits, reduced, x);
}

}  // namespace recon
