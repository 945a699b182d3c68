// The checks of VectorSpace's stencil primitives, once for every backend.
#include "recon/linop/vector_space.hpp"

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

}  // namespace recon
