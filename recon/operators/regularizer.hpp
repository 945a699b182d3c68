// Regularisers W, stored sparse (CSR) as the reference paper does. Backends apply
// W^H W through its precomputed product (one sparse product per CG step instead
// of W^T (W x), which reads three times the memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

// The first three are quadratic (lambda s ||W x||^2, solved by CG); the sparse priors
// (recon/priors: lambda s ||W x||_1, solved by ADMM) are total variation, l1 of wavelet
// coefficients and anatomically weighted total variation.
enum class RegularizerKind { Tikhonov, FiniteDifference, AnatomicalFiniteDifference, TotalVariation, Wavelet, AnatomicalTotalVariation };
std::string toString(RegularizerKind k);
// "tikhonov" | "fd" | "anatomical" | "tv" | "wavelet" | "anatomical-tv"
RegularizerKind parseRegularizer(const std::string& s);
bool isSparse(RegularizerKind k);  // an l1 prior (ADMM), not a quadratic one (CG)

// Real sparse matrix in CSR form (rows x cols). W's entries are real for every
// regulariser we build, so W^H = W^T.
struct CsrMatrix {
    std::int64_t rows = 0, cols = 0;
    std::vector<std::int64_t> row_ptr;  // rows + 1
    std::vector<std::int32_t> col;      // nnz
    std::vector<double> val;            // nnz

    std::size_t nnz() const { return val.size(); }
    CsrMatrix transposed() const;
    // A^T A (sorted columns, exact zeros kept out), for a matrix whose transpose is `t`.
    CsrMatrix gram(const CsrMatrix& t) const;
    // y = A x (y resized); x, y complex.
    template <class T>
    void multiply(const std::complex<T>* x, std::complex<T>* y) const;
};

struct Regularizer {
    RegularizerKind kind = RegularizerKind::FiniteDifference;
    CsrMatrix w;   // W
    CsrMatrix normal;  // W^T W (real), what the solvers apply
    std::string describe() const;
};

struct AnatomicalOptions {
    // Edge threshold relative to the reference's maximum: neighbours whose
    // reference magnitudes differ by more than this are not smoothed together.
    double edge_threshold = 0.1;
    // Weight left on a difference that crosses a detected edge (0 = none).
    double edge_weight = 0.05;
};

// Haldar's anatomical edge weights, one per difference in the gradient's layout (dims blocks of
// grid.voxels(): the weight of the pair (v, v + e_axis) at axis * voxels() + v; 1 where v has no
// such neighbour): a difference whose reference magnitudes differ by more than opts.edge_threshold
// of the reference's maximum keeps opts.edge_weight. The one rule of the anatomical fd regulariser
// and of anatomical TV (recon/priors).
std::vector<double> anatomicalEdgeWeights(const Grid& grid, const ComplexArray& reference, const AnatomicalOptions& opts);

// Builds W for `grid` (quadratic kinds only). The anatomical kind needs `reference` (grid.voxels() values).
Regularizer makeRegularizer(RegularizerKind kind, const Grid& grid, const ComplexArray* reference = nullptr,
                            const AnatomicalOptions& opts = {});

}  // namespace recon
