#include "recon/sense/small_linalg.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <Eigen/Dense>

#include "recon/core/errors.hpp"

namespace recon {

SquareMatrix cholesky(const SquareMatrix& a) {
    const int n = a.n;
    SquareMatrix l(n);
    for (int j = 0; j < n; ++j) {
        double d = a(j, j).real();
        for (int k = 0; k < j; ++k) d -= std::norm(l(j, k));
        if (!(d > 0))
            throw NumericalError("Cholesky factorisation: the matrix is not positive definite at row " +
                                 std::to_string(j) + " (a coil without noise, or two identical coils)");
        l(j, j) = std::sqrt(d);
        for (int i = j + 1; i < n; ++i) {
            cdouble s = a(i, j);
            for (int k = 0; k < j; ++k) s -= l(i, k) * std::conj(l(j, k));
            l(i, j) = s / l(j, j).real();
        }
    }
    return l;
}

namespace {

// Cyclic Jacobi on a real symmetric matrix (row-major, m x m): eigenvalues on the
// diagonal of `s`, eigenvectors in the columns of `v`.
void jacobiSymmetric(std::vector<double>& s, std::vector<double>& v, int m) {
    v.assign(std::size_t(m) * std::size_t(m), 0.0);
    for (int i = 0; i < m; ++i) v[std::size_t(i) * std::size_t(m) + std::size_t(i)] = 1;
    auto at = [m](std::vector<double>& x, int r, int c) -> double& { return x[std::size_t(r) * std::size_t(m) + std::size_t(c)]; };
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0, total = 0;
        for (int p = 0; p < m; ++p)
            for (int q = 0; q < m; ++q) (p == q ? total : off) += at(s, p, q) * at(s, p, q);
        if (off <= 1e-30 * (total + off) || off == 0) return;
        for (int p = 0; p < m - 1; ++p)
            for (int q = p + 1; q < m; ++q) {
                const double apq = at(s, p, q);
                if (apq == 0) continue;
                const double theta = (at(s, q, q) - at(s, p, p)) / (2 * apq);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
                for (int k = 0; k < m; ++k) {  // columns p, q
                    const double kp = at(s, k, p), kq = at(s, k, q);
                    at(s, k, p) = c * kp - sn * kq;
                    at(s, k, q) = sn * kp + c * kq;
                }
                for (int k = 0; k < m; ++k) {  // rows p, q
                    const double pk = at(s, p, k), qk = at(s, q, k);
                    at(s, p, k) = c * pk - sn * qk;
                    at(s, q, k) = sn * pk + c * qk;
                }
                for (int k = 0; k < m; ++k) {
                    const double kp = at(v, k, p), kq = at(v, k, q);
                    at(v, k, p) = c * kp - sn * kq;
                    at(v, k, q) = sn * kp + c * kq;
                }
            }
    }
}

}  // namespace

HermitianEigen hermitianEigen(const SquareMatrix& a) {
    // H = A + iB is Hermitian iff [[A, -B], [B, A]] is real symmetric; each eigenvalue of H
    // appears twice there, and a real eigenvector (u; w) gives the complex one u + i w.
    const int n = a.n, m = 2 * n;
    std::vector<double> s(std::size_t(m) * std::size_t(m)), v;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            const double re = 0.5 * (a(r, c).real() + a(c, r).real()), im = 0.5 * (a(r, c).imag() - a(c, r).imag());
            s[std::size_t(r) * m + c] = re;
            s[std::size_t(r + n) * m + c + n] = re;
            s[std::size_t(r) * m + c + n] = -im;
            s[std::size_t(r + n) * m + c] = im;
        }
    jacobiSymmetric(s, v, m);
    std::vector<int> order(static_cast<std::size_t>(m));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int i, int j) { return s[std::size_t(i) * m + i] > s[std::size_t(j) * m + j]; });
    HermitianEigen out;
    out.vectors = SquareMatrix(n);
    std::vector<ComplexArray> accepted;
    // Of each pair, keep the vector not already spanned (complex Gram-Schmidt).
    for (int idx : order) {
        if (int(accepted.size()) == n) break;
        ComplexArray z(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) z[std::size_t(r)] = {v[std::size_t(r) * m + idx], v[std::size_t(r + n) * m + idx]};
        for (const auto& u : accepted) {
            cdouble p = 0;
            for (int r = 0; r < n; ++r) p += std::conj(u[std::size_t(r)]) * z[std::size_t(r)];
            for (int r = 0; r < n; ++r) z[std::size_t(r)] -= p * u[std::size_t(r)];
        }
        double norm = 0;
        for (const auto& x : z) norm += std::norm(x);
        if (norm < 0.25) continue;  // the partner (times i) of an accepted vector
        norm = std::sqrt(norm);
        for (auto& x : z) x /= norm;
        out.values.push_back(s[std::size_t(idx) * m + idx]);
        accepted.push_back(std::move(z));
    }
    for (int c = 0; c < int(accepted.size()); ++c)
        for (int r = 0; r < n; ++r) out.vectors(r, c) = accepted[std::size_t(c)][std::size_t(r)];
    return out;
}

DominantEigen dominantEigenvectors(Backend& backend, const HermitianField& field, const Progress& progress,
                                   const std::vector<std::uint8_t>* only) {
    DominantEigen out;
    dominantEigenvectorsWhere(backend, field.n, field.voxels, field.upper, only, out.vectors, out.values, progress);
    return out;
}

}  // namespace recon
