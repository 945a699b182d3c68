// A dense matrix of independent Gaussian entries as CSR: the small test problems of
// the sparse-prior solvers (ADMM, FISTA) draw their forward operator from it.
#pragma once

#include <random>

#include "recon/operators/regularizer.hpp"

namespace recon::test {

inline CsrMatrix denseGaussian(std::size_t rows, std::size_t cols, std::mt19937& rng,
                               std::normal_distribution<double>& nd) {
    CsrMatrix a;
    a.rows = std::int64_t(rows);
    a.cols = std::int64_t(cols);
    a.row_ptr.push_back(0);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            a.col.push_back(std::int32_t(c));
            a.val.push_back(nd(rng));
        }
        a.row_ptr.push_back(std::int64_t(a.col.size()));
    }
    return a;
}

}  // namespace recon::test
