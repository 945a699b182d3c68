#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <Eigen/Dense>

#include "recon/backend/backend.hpp"
#include "recon/core/host_memory.hpp"

namespace recon {

std::string BackendInfo::describe() const {
    std::string s = kind + " (" + device + ", " + toString(precision);
    if (memory_bytes) s += ", " + OutOfMemory::humanBytes(memory_bytes);
    return s + ")";
}

std::size_t Backend::availableMemory() const { return availableHostMemory(); }

std::shared_ptr<const Vector> Backend::adjointOnBackend(const Trajectory& t, const ComplexArray& c, const SampleGrid& grid,
                                                       const FourierMethod& method, const Progress& progress) {
    ComplexArray out;
    adjointSum(t, c, grid, out, method, progress);
    return std::make_shared<const Vector>(fromHost(out));
}

std::vector<std::shared_ptr<const Vector>> Backend::adjointsOnBackend(const Trajectory& t, const ComplexArray& c, int coils,
                                                                      const SampleGrid& grid, const FourierMethod& method,
                                                                      const Progress& progress) {
    const std::size_t m = t.samples();
    if (coils < 1 || c.size() != std::size_t(coils) * m)
        throw InputError("adjoint sums of " + std::to_string(coils) + " coils: " + std::to_string(c.size()) +
                         " values, not coils x " + std::to_string(m) + " samples");
    std::vector<std::shared_ptr<const Vector>> out;
    for (int k = 0; k < coils; ++k) {
        const ComplexArray one(c.begin() + std::ptrdiff_t(std::size_t(k) * m), c.begin() + std::ptrdiff_t(std::size_t(k + 1) * m));
        out.push_back(adjointOnBackend(t, one, grid, method, progress.part(double(k) / coils, double(k + 1) / coils)));
    }
    return out;
}

void Backend::gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
                        ComplexArray& vectors) {
    if (a.size() != rows * cols)
        throw InputError("gramEigen: " + std::to_string(a.size()) + " values for a " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix");
    const Eigen::Map<const Eigen::MatrixXcd> m(a.data(), Eigen::Index(rows), Eigen::Index(cols));
    Eigen::MatrixXcd gram = Eigen::MatrixXcd::Zero(Eigen::Index(cols), Eigen::Index(cols));
    gram.selfadjointView<Eigen::Lower>().rankUpdate(m.adjoint());
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(gram);  // ascending; reads the lower triangle
    values.assign(es.eigenvalues().data(), es.eigenvalues().data() + cols);
    vectors.assign(es.eigenvectors().data(), es.eigenvectors().data() + cols * cols);
}

void Backend::gramProjection(const ComplexArray& a, std::size_t rows, std::size_t cols, double threshold,
                             std::vector<double>& values, std::size_t& kept, ComplexArray& projection) {
    if (a.size() != rows * cols)
        throw InputError("gramProjection: " + std::to_string(a.size()) + " values for a " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix");
    const Eigen::Map<const Eigen::MatrixXcd> m(a.data(), Eigen::Index(rows), Eigen::Index(cols));
    ComplexArray gram(cols * cols);
    Eigen::Map<Eigen::MatrixXcd> g(gram.data(), Eigen::Index(cols), Eigen::Index(cols));
    g.setZero();
    g.selfadjointView<Eigen::Lower>().rankUpdate(m.adjoint());
    hostGramProjection(gram, cols, threshold, values, kept, projection);
}

void Backend::calibrationProjection(const CalibrationMatrix& m, double threshold, std::vector<double>& values,
                                    std::size_t& kept, ComplexArray& projection) {
    gramProjection(calibrationMatrixValues(m), m.rows(), m.cols(), threshold, values, kept, projection);
}

namespace {

// Eigenvectors of the real symmetric tridiagonal matrix (diagonal d, off-diagonal e) for the
// given eigenvalues (descending, accurate to rounding) by inverse iteration, as LAPACK's dstein:
// (T - lambda I) x = b by Gaussian elimination with partial pivoting, three solves from a fixed
// start; an eigenvalue closer to the previous one than 1e-3 |T| joins its cluster, whose
// vectors are orthogonalised (modified Gram-Schmidt) after every solve, and one equal to it
// within rounding is moved apart by that rounding first. O(n) per solve instead of the O(n^3)
// rotations of all n eigenvectors (8 of the 44 s of a 1728 x 1728 decomposition).
Eigen::MatrixXd tridiagonalEigenvectors(const Eigen::VectorXd& d, const Eigen::VectorXd& e, const std::vector<double>& lambdas) {
    const Eigen::Index n = d.size();
    const std::size_t k = lambdas.size();
    Eigen::MatrixXd z(n, Eigen::Index(k));
    if (n == 0 || k == 0) return z;
    double norm = 0;  // the 1-norm of T
    for (Eigen::Index i = 0; i < n; ++i)
        norm = std::max(norm, std::abs(d(i)) + (i > 0 ? std::abs(e(i - 1)) : 0.0) + (i + 1 < n ? std::abs(e(i)) : 0.0));
    if (norm == 0) norm = 1;
    const double eps = std::numeric_limits<double>::epsilon(), cluster_gap = 1e-3 * norm, tiny = eps * norm;
    const auto size = static_cast<std::size_t>(n);
    std::vector<double> u0(size), u1(size), u2(size), l(size);
    std::vector<char> swapped(size);
    Eigen::VectorXd x(n);
    std::size_t cluster_start = 0;
    double previous = 0;
    for (std::size_t j = 0; j < k; ++j) {
        double lambda = lambdas[j];
        if (j > 0 && previous - lambda < cluster_gap) {
            if (previous - lambda < 10 * eps * std::abs(previous)) lambda = previous - 10 * eps * std::abs(previous);
        } else {
            cluster_start = j;
        }
        previous = lambda;
        // T - lambda I = P L U; U has two super-diagonals (u1, u2). The row carried to the next
        // step has entries on its diagonal and the first super-diagonal only.
        double cur_d = d(0) - lambda, cur_s = n > 1 ? e(0) : 0.0;
        for (Eigen::Index i = 0; i + 1 < n; ++i) {
            const double sub = e(i), diag = d(i + 1) - lambda, sup = i + 2 < n ? e(i + 1) : 0.0;
            const std::size_t s = std::size_t(i);
            if (std::abs(cur_d) >= std::abs(sub)) {
                if (cur_d == 0) cur_d = tiny;
                l[s] = sub / cur_d;
                swapped[s] = 0;
                u0[s] = cur_d, u1[s] = cur_s, u2[s] = 0;
                cur_d = diag - l[s] * cur_s;
                cur_s = sup;
            } else {
                l[s] = cur_d / sub;
                swapped[s] = 1;
                u0[s] = sub, u1[s] = diag, u2[s] = sup;
                cur_d = cur_s - l[s] * diag;
                cur_s = -l[s] * sup;
            }
        }
        u0[std::size_t(n - 1)] = cur_d == 0 ? tiny : cur_d;
        // A start with every component (deterministic, no eigenvector orthogonal to it in practice).
        for (Eigen::Index i = 0; i < n; ++i) x(i) = 1.0 + 0.5 * std::sin(1.7 * double(i) + 0.3 * double(j));
        x /= x.norm();
        for (int it = 0; it < 3; ++it) {
            for (Eigen::Index i = 0; i + 1 < n; ++i) {
                const std::size_t s = std::size_t(i);
                if (swapped[s]) std::swap(x(i), x(i + 1));
                x(i + 1) -= l[s] * x(i);
            }
            for (Eigen::Index i = n - 1; i >= 0; --i) {
                const std::size_t s = std::size_t(i);
                double v = x(i);
                if (i + 1 < n) v -= u1[s] * x(i + 1);
                if (i + 2 < n) v -= u2[s] * x(i + 2);
                x(i) = v / (u0[s] == 0 ? tiny : u0[s]);
            }
            for (std::size_t c = cluster_start; c < j; ++c) x -= z.col(Eigen::Index(c)).dot(x) * z.col(Eigen::Index(c));
            const double len = x.norm();
            if (!(len > 0) || !std::isfinite(len)) throw Error("ESPIRiT: inverse iteration failed on the calibration matrix");
            x /= len;
        }
        z.col(Eigen::Index(j)) = x;
    }
    return z;
}

}  // namespace

void hostGramProjection(const ComplexArray& gram, std::size_t cols, double threshold, std::vector<double>& values,
                        std::size_t& kept, ComplexArray& projection) {
    if (gram.size() != cols * cols)
        throw InputError("Gram projection: " + std::to_string(gram.size()) + " values for a " + std::to_string(cols) + " x " +
                         std::to_string(cols) + " matrix");
    // G = Q T Q^H (Householder, real tridiagonal T), T's eigenvalues, then the eigenvectors of
    // only the kept ones (inverse iteration on T) and Q applied to those: all n eigenvectors
    // by QR rotations took most of the decomposition's time.
    const Eigen::Map<const Eigen::MatrixXcd> g(gram.data(), Eigen::Index(cols), Eigen::Index(cols));
    const Eigen::Tridiagonalization<Eigen::MatrixXcd> tri(g);  // reads the lower triangle
    const Eigen::VectorXd diagonal = tri.diagonal(), off = tri.subDiagonal();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
    es.computeFromTridiagonal(diagonal, off, Eigen::EigenvaluesOnly);  // ascending
    if (es.info() != Eigen::Success) throw Error("ESPIRiT: the calibration matrix's eigenvalues did not converge");
    values.assign(es.eigenvalues().data(), es.eigenvalues().data() + cols);
    kept = signalSubspaceSize(values, threshold);
    std::vector<double> top(kept);
    for (std::size_t j = 0; j < kept; ++j) top[j] = values[cols - 1 - j];
    const Eigen::MatrixXcd signal = tri.matrixQ() * tridiagonalEigenvectors(diagonal, off, top).cast<cdouble>();
    projection.resize(cols * cols);
    Eigen::Map<Eigen::MatrixXcd>(projection.data(), Eigen::Index(cols), Eigen::Index(cols)).noalias() = signal * signal.adjoint();
}

void Backend::dominantEigenvectors(int n, std::size_t voxels, const ComplexArray& upper, ComplexArray& vectors,
                                   std::vector<double>& values, const Progress& progress) {
    if (n < 1 || upper.size() != std::size_t(n) * std::size_t(n + 1) / 2 * voxels)
        throw InputError("dominantEigenvectors: " + std::to_string(upper.size()) + " values are not the upper triangles of " +
                         std::to_string(voxels) + " matrices of " + std::to_string(n) + " x " + std::to_string(n));
    auto pair = [&](int r, int c) {
        return upper.data() + (std::size_t(r) * std::size_t(n) - std::size_t(r) * std::size_t(r - 1) / 2 + std::size_t(c - r)) * voxels;
    };
    vectors.assign(std::size_t(n) * voxels, cdouble(0));
    values.assign(voxels, 0.0);
    // Power iteration, started from the previous voxel's eigenvector (neighbours' maps are close:
    // a few products of n^2 instead of a full n x n decomposition, 11 us per voxel at n = 8).
    // Accepted only when converged (residual |M x - l x| <= 1e-12 |M|_F) and provably the largest:
    // l > 0 and l^2 > |M|_F^2 / 2 leave no other eigenvalue as large (their squares sum to |M|_F^2).
    // Otherwise (close eigenvalues, a slow start) Eigen's self-adjoint solver (Householder
    // tridiagonalisation + QR), robust where power iteration is not.
    constexpr std::size_t kChunk = 4096;
    constexpr int kPowerSteps = 60;
    for (std::size_t start = 0; start < voxels; start += kChunk) {
        progress.update(double(start) / double(voxels));
        const std::ptrdiff_t end = std::ptrdiff_t(std::min(voxels, start + kChunk));
#pragma omp parallel
        {
            Eigen::MatrixXcd m(n, n);
            // The power steps on plain arrays in real arithmetic (x, w: n complex values as re, im):
            // Eigen's general matrix-vector product costs more in its set-up than in its 64
            // products at n = 8, and std::complex's product does not vectorise.
            std::vector<double> x(2 * std::size_t(n)), w(2 * std::size_t(n));
            bool warm = false;
#pragma omp for schedule(static)
            for (std::ptrdiff_t v = std::ptrdiff_t(start); v < end; ++v) {
                for (int r = 0; r < n; ++r)
                    for (int c = r; c < n; ++c) {
                        const cdouble z = pair(r, c)[v];
                        m(r, c) = z;
                        m(c, r) = std::conj(z);
                    }
                const double frob2 = m.squaredNorm();
                const double* md = reinterpret_cast<const double*>(m.data());  // column-major
                double lambda = 0;
                bool found = false;
                if (frob2 > 0) {
                    if (!warm) {  // the column of the largest diagonal entry
                        Eigen::Index j = 0;
                        m.diagonal().real().maxCoeff(&j);
                        const double len = m.col(j).norm();
                        for (int r = 0; r < 2 * n; ++r) x[std::size_t(r)] = md[2 * std::size_t(j) * std::size_t(n) + std::size_t(r)] / len;
                    }
                    for (int step = 0; step < kPowerSteps && !found; ++step) {
                        std::fill(w.begin(), w.end(), 0.0);
                        for (int c = 0; c < n; ++c) {  // w += x_c m(:, c)
                            const double xr = x[2 * std::size_t(c)], xi = x[2 * std::size_t(c) + 1];
                            const double* col = md + 2 * std::size_t(c) * std::size_t(n);
#pragma omp simd
                            for (int r = 0; r < n; ++r) {
                                w[2 * std::size_t(r)] += col[2 * r] * xr - col[2 * r + 1] * xi;
                                w[2 * std::size_t(r) + 1] += col[2 * r] * xi + col[2 * r + 1] * xr;
                            }
                        }
                        lambda = 0;  // x^H M x, x of unit norm
                        for (int i = 0; i < 2 * n; ++i) lambda += x[std::size_t(i)] * w[std::size_t(i)];
                        // |w - l x|^2 itself: |w|^2 - l^2 would cancel to rounding (1e-16 |M|_F^2).
                        double residual2 = 0, len2 = 0;
                        for (int i = 0; i < 2 * n; ++i) {
                            const double e = w[std::size_t(i)] - lambda * x[std::size_t(i)];
                            residual2 += e * e;
                            len2 += w[std::size_t(i)] * w[std::size_t(i)];
                        }
                        found = residual2 <= 1e-24 * frob2 && lambda > 0 && lambda * lambda > 0.5 * frob2;
                        const double len = std::sqrt(len2);
                        if (!(len > 0)) break;
                        for (int i = 0; i < 2 * n; ++i) x[std::size_t(i)] = w[std::size_t(i)] / len;
                    }
                }
                if (found) {
                    warm = true;
                } else {
                    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(m);  // eigenvalues ascending
                    lambda = es.eigenvalues()(n - 1);
                    for (int r = 0; r < n; ++r) {
                        x[2 * std::size_t(r)] = es.eigenvectors()(r, n - 1).real();
                        x[2 * std::size_t(r) + 1] = es.eigenvectors()(r, n - 1).imag();
                    }
                    warm = frob2 > 0;
                }
                values[std::size_t(v)] = lambda;
                for (int r = 0; r < n; ++r) vectors[std::size_t(r) * voxels + std::size_t(v)] = cdouble(x[2 * std::size_t(r)], x[2 * std::size_t(r) + 1]);
            }
        }
    }
    progress.update(1.0);
}

LinearOperatorPtr fourierOperator(Backend& backend, const Trajectory& t, const Grid& grid, const std::vector<double>& phi,
                                  const FourierMethod& method, std::shared_ptr<const ToeplitzOperator> normal) {
    if (phi.size() != t.samples())
        throw InputError("Fourier operator: " + std::to_string(phi.size()) + " values of phi for " + std::to_string(t.samples()) + " samples");
    LinearOperatorPtr f = compose(diagonal(backend, ComplexArray(phi.begin(), phi.end()), "phi"),
                                  backend.fourierSums(t, SampleGrid::image(grid), method));
    return normal ? withNormal(f, normal) : f;
}

void ToeplitzOperator::coilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const {
    if (maps.empty()) throw InputError("SENSE normal: no coil maps");
    for (std::size_t c = 0; c < maps.size(); ++c)
        if (!maps[c] || maps[c]->size() != inSize())
            throw InputError("SENSE normal: coil " + std::to_string(c) + "'s map has " +
                             std::to_string(maps[c] ? maps[c]->size() : 0) + " values, not the " +
                             std::to_string(inSize()) + " voxels of " + grid().describe());
    if (x.size() != inSize() || y.size() != inSize())
        throw InputError("SENSE normal: the image vectors have " + std::to_string(x.size()) + " and " +
                         std::to_string(y.size()) + " values, not " + std::to_string(inSize()));
    if (x.storage() == y.storage()) throw InputError("SENSE normal: the output must not be the input");
    applyCoilSumNormal(maps, x, y);
}

void ToeplitzOperator::applyCoilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const {
    VectorSpace& s = space();
    Vector& weighted = scratch(0, inSize());
    Vector& product = scratch(1, inSize());
    s.zero(y);
    for (const Vector* map : maps) {
        s.multiply(*map, x, weighted);
        forward(weighted, product);  // T itself (its forward is F^H F)
        s.multiply(*map, product, product, /*conjugate_d=*/true);
        s.axpy(1.0, product, y);
    }
}

std::shared_ptr<ToeplitzOperator> Backend::toeplitzCopy(const ToeplitzOperator& kernel) {
    return toeplitzFromQ(kernel.grid(), kernel.q());
}

LinearOperatorPtr Backend::ctProjector(const ct::CtGeometry& geometry, const ct::ProjectorOptions& options) {
    return ct::cpuDdProjector(*this, geometry, options);
}

std::unique_ptr<Backend> createBackend(BackendChoice c, Precision p, std::string* note) {
    std::string why;
    if (c != BackendChoice::Cpu) {
        if (auto b = createCudaBackend(p, 0, &why)) {
            if (note) *note = "using " + b->info().describe();
            return b;
        }
        if (c == BackendChoice::Cuda) throw Error("CUDA backend unavailable: " + why);
    }
    auto b = createCpuBackend(p);
    if (note) *note = (c == BackendChoice::Auto ? "no usable GPU (" + why + "); " : std::string()) + "using " + b->info().describe();
    return b;
}

}  // namespace recon
