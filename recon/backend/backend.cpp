#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <Eigen/Dense>

#include "recon/backend/backend.hpp"
#include "recon/core/host_memory.hpp"
#include "recon/core/lapack.hpp"

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

// LAPACK's routines ask for their workspace's size first (lwork = -1).
lapack::fint workspaceSize(cdouble query) { return std::max<lapack::fint>(1, lapack::fint(query.real())); }

void checkLapack(lapack::fint info, const char* routine) {
    if (info != 0)
        throw Error(std::string("ESPIRiT: LAPACK's ") + routine + " failed on the calibration matrix's Gram matrix (info " +
                    std::to_string(info) + ")");
}

}  // namespace

void hostGramProjection(const ComplexArray& gram, std::size_t cols, double threshold, std::vector<double>& values,
                        std::size_t& kept, ComplexArray& projection) {
    if (gram.size() != cols * cols)
        throw InputError("Gram projection: " + std::to_string(gram.size()) + " values for a " + std::to_string(cols) + " x " +
                         std::to_string(cols) + " matrix");
    if (cols == 0 || cols > std::size_t(std::numeric_limits<lapack::fint>::max() / 2))
        throw InputError("Gram projection: a " + std::to_string(cols) + " x " + std::to_string(cols) + " matrix is out of range");
    for (std::size_t j = 0; j < cols; ++j)
        for (std::size_t i = j; i < cols; ++i)  // the lower triangle, the part read
            if (!std::isfinite(gram[j * cols + i].real()) || !std::isfinite(gram[j * cols + i].imag()))
                throw InputError("ESPIRiT: the calibration data are not finite (the Gram matrix holds NaN or infinity)");
    using lapack::fint;
    const fint n = fint(cols);
    fint info = 0, query = -1;
    // G = Q T Q^H (zhetrd: blocked Householder, real tridiagonal T), all of T's eigenvalues
    // (dsterf), the eigenvectors of only the kept ones (zstemr, MRRR) and Q applied to those
    // (zunmtr): all n eigenvectors would cost n^3 more for vectors that are then dropped.
    ComplexArray a = gram;
    std::vector<double> d(cols), e(cols);
    ComplexArray tau(cols);
    cdouble size{};
    lapack::zhetrd_("L", &n, a.data(), &n, d.data(), e.data(), tau.data(), &size, &query, &info, 1);
    ComplexArray work(std::size_t(workspaceSize(size)));
    fint lwork = fint(work.size());
    lapack::zhetrd_("L", &n, a.data(), &n, d.data(), e.data(), tau.data(), work.data(), &lwork, &info, 1);
    checkLapack(info, "zhetrd");

    values = d;  // ascending, as Backend::gramEigen's
    std::vector<double> e_scratch = e;
    lapack::dsterf_(&n, values.data(), e_scratch.data(), &info);
    checkLapack(info, "dsterf");
    // A^H A is positive semidefinite: a largest eigenvalue not above zero is a zero matrix, whose
    // "signal subspace" (everything at or above 0.001 of nothing) would be the whole space.
    if (!(values.back() > 0))
        throw InputError("ESPIRiT: the calibration data are zero (no signal in the calibration region of k-space)");
    kept = signalSubspaceSize(values, threshold);

    // T's eigenvectors of the kept (largest) eigenvalues, by index: il..iu = n - kept + 1 .. n.
    const fint k = fint(kept), il = n - k + 1, iu = n;
    fint found = 0, tryrac = 1;
    const double unused = 0;
    std::vector<double> w(cols);
    ComplexArray z(cols * kept);
    std::vector<fint> support(2 * kept);
    double rsize = 0;
    fint isize = 0;
    lapack::zstemr_("V", "I", &n, d.data(), e.data(), &unused, &unused, &il, &iu, &found, w.data(), z.data(), &n, &k,
                    support.data(), &tryrac, &rsize, &query, &isize, &query, &info, 1, 1);
    std::vector<double> rwork(std::size_t(std::max(1.0, rsize)));
    std::vector<fint> iwork(std::size_t(std::max<fint>(1, isize)));
    fint lrwork = fint(rwork.size()), liwork = fint(iwork.size());
    lapack::zstemr_("V", "I", &n, d.data(), e.data(), &unused, &unused, &il, &iu, &found, w.data(), z.data(), &n, &k,
                    support.data(), &tryrac, rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
    checkLapack(info, "zstemr");
    if (found != k) throw Error("ESPIRiT: LAPACK's zstemr found " + std::to_string(found) + " of the " + std::to_string(k) + " eigenvectors");

    // The kept eigenvectors of G: Q z.
    lapack::zunmtr_("L", "L", "N", &n, &k, a.data(), &n, tau.data(), z.data(), &n, &size, &query, &info, 1, 1, 1);
    work.resize(std::size_t(workspaceSize(size)));
    lwork = fint(work.size());
    lapack::zunmtr_("L", "L", "N", &n, &k, a.data(), &n, tau.data(), z.data(), &n, work.data(), &lwork, &info, 1, 1, 1);
    checkLapack(info, "zunmtr");

    // P = V V^H: its lower triangle (zherk), the upper one its mirror.
    projection.assign(cols * cols, cdouble(0));
    const double one = 1, zero = 0;
    lapack::zherk_("L", "N", &n, &k, &one, z.data(), &n, &zero, projection.data(), &n, 1, 1);
    for (std::size_t j = 0; j < cols; ++j)
        for (std::size_t i = j + 1; i < cols; ++i) projection[i * cols + j] = std::conj(projection[j * cols + i]);
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
