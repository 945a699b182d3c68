// Sparse priors as operators: a transform W (finite differences, an orthogonal
// wavelet transform) whose output is penalised by a (group) l1 norm,
// lambda s sum_g ||(W x)_g||_2. The transforms are matrix-free operators on
// VectorSpace's stencil primitives (gradient, waveletLevel), one kernel per
// product on the GPU and nothing to build or upload; the prox is
// VectorSpace::groupSoftThreshold. The same transforms as explicit CSR matrices
// (gradientMatrix, waveletMatrices) are the tests' references.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "recon/core/types.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon {

// One term lambda s sum_g ||(W x)_g||_2 of a sparse prior.
struct SparseTerm {
    std::string name;              // "tv", "wavelet", "anatomical-tv"
    double weight = 0;             // lambda s
    LinearOperatorPtr transform;   // W (its normal W^H W is what ADMM's inner CG applies)
    std::size_t group = 1;         // values per group in W x (isotropic TV: the dimensions; 1: plain l1)
};

// InputError naming `solver` and the term unless `t` has a transform from an image of `n` values on
// `space`, a finite weight >= 0 and a group that divides the transform's output (ADMM's and PDHG's terms).
void checkSparseTerm(const SparseTerm& t, const VectorSpace& space, std::size_t n, const char* solver);

// Forward differences along each axis, one block of grid.voxels() rows per axis (row v of
// block a: x[v + e_a] - x[v]; the last voxel along the axis has an empty row), so the d
// components of one voxel's gradient sit at stride voxels() and form one group.
// `edge_weights`, when given (dims * voxels() values), scales each row.
CsrMatrix gradientMatrix(const Grid& grid, const std::vector<double>* edge_weights = nullptr);
// The gradient of gradientMatrix (same rows, same boundary rule) without a matrix: VectorSpace::gradient,
// its normal D^T D in one pass. `edge_weights` as there.
LinearOperatorPtr gradientOperator(VectorSpace& space, const Grid& grid, const std::vector<double>* edge_weights = nullptr,
                                   std::string name = "gradient");
// The quadratic regularisers' W without a matrix (the session's penalty for fd and anatomical):
// the gradient, with anatomicalEdgeWeights (recon/operators/regularizer.hpp) for the anatomical
// kind, so that its Normal product D^T diag(w^2) D is makeRegularizer's W^T W. Its rows are the
// gradient's (dims * voxels(), a zero row where a voxel has no neighbour), not the CSR W's, so
// ||W x||^2 is the same. InputError for other kinds, or the anatomical kind without a reference.
LinearOperatorPtr quadraticRegularizer(VectorSpace& space, RegularizerKind kind, const Grid& grid,
                                       const ComplexArray* reference = nullptr, const AnatomicalOptions& opts = {});

// Isotropic (group = dims) or anisotropic (group = 1) total variation; `reference` given: the
// anatomically weighted form (Haldar's edge weights, l1 norm).
SparseTerm totalVariation(VectorSpace& space, const Grid& grid, double weight, bool anisotropic = false,
                          const ComplexArray* reference = nullptr, const AnatomicalOptions& opts = {});

enum class WaveletKind { Haar, Daubechies4 };
std::string toString(WaveletKind k);
WaveletKind parseWavelet(const std::string& s);  // "haar" | "db4" (InputError otherwise)

// The orthonormal low-pass filter h (the high-pass is its quadrature mirror g[k] = (-1)^k h[L-1-k]).
std::vector<double> waveletLowPass(WaveletKind k);
// One level of the multilevel transform: the axis split and the low-pass box it works on.
struct WaveletLevel {
    int axis = 0;
    std::array<int, 3> box{1, 1, 1};
};
// The levels in the order they apply. An axis is split while its low-pass length is even and at
// least 8 (so at least 4 coarse values remain); an axis of odd length is left whole, so any grid
// size works with periodic boundaries.
std::vector<WaveletLevel> waveletLevels(const Grid& grid, int max_levels = 4);
// One level of the periodic orthogonal wavelet transform along one axis of a sub-box
// (the low-pass box `box` starting at the origin): rows inside the box are the filter's
// low half then high half, every other row is the identity. Orthogonal.
CsrMatrix waveletLevelMatrix(const Grid& grid, WaveletKind kind, int axis, const std::array<int, 3>& box);
// The multilevel separable transform as a list of level matrices (waveletLevels, apply in order).
std::vector<CsrMatrix> waveletMatrices(const Grid& grid, WaveletKind kind, int max_levels = 4);
// The same transform without matrices: one VectorSpace::waveletLevel per level; W^H W = I is its normal.
LinearOperatorPtr waveletOperator(VectorSpace& space, const Grid& grid, WaveletKind kind, int max_levels = 4);
// An orthogonal W whose l1 prox the transform computes itself, in fewer passes over the image than
// a forward transform, a threshold and an adjoint would take (waveletOperator's: all of Haar's levels
// with the shift and the threshold in one pass, VectorSpace::haarShrink, where its tiles fit).
class ShrinkableTransform {
public:
    virtual ~ShrinkableTransform() = default;
    // y = P^H W^H soft(W P x, t), P the cyclic shift by `offset` (cyclicShift's): the prox of
    // t ||W P .||_1. y may be x.
    virtual void shrink(const Vector& x, std::size_t offset, double t, Vector& y) const = 0;
    // The mean of ||W P x||_1 over the shifts by `offsets` (the Averaged rule's penalty; {0}: ||W x||_1).
    virtual double norm1(const Vector& x, const std::vector<std::size_t>& offsets) const = 0;
};
// The Haar tiles of waveletLevels(grid, max_levels): each axis' split count (VectorSpace::haarShrink's
// `splits`), or nothing where a tile would exceed VectorSpace::kMaxHaarTile voxels.
std::optional<std::array<int, 3>> haarSplits(const Grid& grid, int max_levels);

// How FISTA/POGM move the wavelet grid against the image (docs/SPARSE.md, "Random shifts"):
// Fixed: never (the fixed grid's problem, blocks and all); Random: a random cyclic shift per step
// (BART's; the iterates never settle, each step solving a slightly different problem); Averaged:
// each step's prox the average of the proxes over a fixed set of kAveragedShifts shifts spread over
// the coarsest blocks (cycle spinning as a proximal average, Yu 2013: itself the prox of one convex
// function, so the iterates converge to one image and a warm re-solve settles).
enum class WaveletShifts { Fixed, Random, Averaged };
inline constexpr int kAveragedShifts = 4;
std::string toString(WaveletShifts s);
WaveletShifts parseWaveletShifts(const std::string& s);  // "off" | "on" | "random" | "average" (InputError otherwise)
// The offsets (cyclicShift's, of the flattened image) of the Averaged rule on `grid`: shift k moves
// every axis by k (T / kAveragedShifts + 1) mod T voxels, T the coarsest Haar block (2^levels).
std::vector<std::size_t> averagedShiftOffsets(const Grid& grid, int max_levels = 4);

// l1 of the wavelet coefficients; W^H W = I, so its normal is the identity.
SparseTerm waveletSparsity(VectorSpace& space, const Grid& grid, double weight, WaveletKind kind = WaveletKind::Daubechies4,
                           int max_levels = 4);

// The lambda (times s) a sparse prior starts from when none is given. The l1 penalty
// lambda s ||W x||_1 against ||F x - d||^2 ≈ s ||x - x_true||^2 near the centre of k-space
// makes lambda a threshold in image units, relative to an image of magnitude about 1
// (the demo cases' phantoms). Measured best of a sweep (150-200 iterations): TV 0.05 on small-2d,
// 0.2 on radial-2d-noisy and spiral-2d; wavelets (FISTA, Haar, shifts) 0.1-0.3; anatomical TV 1-2 on small-2d.
// InputError for a quadratic kind.
double defaultSparseLambda(RegularizerKind kind);

// sum_k weight_k sum_g ||(W_k x)_g||_2 on the backend.
double sparsePenalty(const std::vector<SparseTerm>& terms, const Vector& x);

}  // namespace recon
