#include "recon/backend/circulant_preconditioner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

#include "recon/nufft/fft.hpp"

namespace recon {
namespace {

int wrap(int d, int n) { return ((d % n) + n) % n; }

// Per axis of the 2N grid: the residue (d mod N) of each stored difference d = j - N and
// the weight the approximation gives it. Axes beyond the grid's dims have one entry.
struct AxisTable {
    std::vector<int> residue;
    std::vector<double> weight;
};

AxisTable axisTable(int n, bool active, CirculantApproximation a) {
    AxisTable t;
    if (!active) {
        t.residue = {0};
        t.weight = {1.0};
        return t;
    }
    for (int j = 0; j < 2 * n; ++j) {
        const int d = j - n, ad = std::abs(d);
        double w;
        if (a == CirculantApproximation::Chan) {
            w = double(n - ad) / n;  // how many entries of the N x N Toeplitz block carry difference d
        } else {
            w = 2 * ad < n ? 1.0 : (2 * ad == n ? 0.5 : 0.0);  // the central part; the middle one shared
        }
        t.residue.push_back(wrap(d, n));
        t.weight.push_back(w);
    }
    return t;
}

std::vector<double> realSpectrum(const Grid& g, ComplexArray c) {
    FftPlan<double>(g.n, g.dims, FftDirection::Forward).execute(c.data());
    std::vector<double> eig(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) eig[i] = c[i].real();
    return eig;
}

}  // namespace

std::vector<double> circulantEigenvalues(const Grid& g, const ComplexArray& q, CirculantApproximation a) {
    const Grid big = g.doubled();
    if (q.size() != big.voxels())
        throw InputError("circulant preconditioner: Q has " + std::to_string(q.size()) + " values, not " + big.describe());
    std::array<AxisTable, 3> axes;
    for (int k = 0; k < 3; ++k) axes[std::size_t(k)] = axisTable(g.n[std::size_t(k)], k < g.dims, a);
    ComplexArray c(g.voxels());
    for (int z = 0; z < big.n[2]; ++z)
        for (int y = 0; y < big.n[1]; ++y) {
            const double wyz = axes[1].weight[std::size_t(y)] * axes[2].weight[std::size_t(z)];
            if (wyz == 0) continue;
            for (int x = 0; x < big.n[0]; ++x) {
                const double w = wyz * axes[0].weight[std::size_t(x)];
                if (w == 0) continue;
                c[g.index(axes[0].residue[std::size_t(x)], axes[1].residue[std::size_t(y)], axes[2].residue[std::size_t(z)])] +=
                    w * q[big.index(x, y, z)];
            }
        }
    return realSpectrum(g, std::move(c));
}

std::vector<double> circulantEigenvalues(const Grid& g, const CsrMatrix& a) {
    const std::int64_t n = std::int64_t(g.voxels());
    if (a.rows != n || a.cols != n)
        throw InputError("circulant preconditioner: the matrix is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                         ", the grid " + g.describe() + " has " + std::to_string(n) + " voxels");
    // c(r) = the mean of A_ij over the pairs with i - j = r (mod N per axis): the closest
    // circulant in the Frobenius norm.
    auto coords = [&](std::int64_t i) {
        return std::array<int, 3>{int(i % g.n[0]), int((i / g.n[0]) % g.n[1]), int(i / (std::int64_t(g.n[0]) * g.n[1]))};
    };
    ComplexArray c(g.voxels());
    for (std::int64_t i = 0; i < n; ++i) {
        const auto ci = coords(i);
        for (std::int64_t k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k) {
            const auto cj = coords(a.col[std::size_t(k)]);
            c[g.index(wrap(ci[0] - cj[0], g.n[0]), wrap(ci[1] - cj[1], g.n[1]), wrap(ci[2] - cj[2], g.n[2]))] +=
                a.val[std::size_t(k)] / double(n);
        }
    }
    return realSpectrum(g, std::move(c));
}

std::vector<double> inverseCirculantSpectrum(const Grid& g, const std::vector<double>& data, const std::vector<double>& penalty,
                                             double weight, double exponent, double floor) {
    const std::size_t n = g.voxels();
    if (data.size() != n || (!penalty.empty() && penalty.size() != n))
        throw InputError("circulant preconditioner: the eigenvalues do not match the grid " + g.describe());
    if (!std::isfinite(weight) || weight < 0) throw InputError("circulant preconditioner: the penalty weight is not a finite number >= 0");
    if (!(exponent > 0 && exponent <= 1)) throw InputError("circulant preconditioner: the exponent must be in (0, 1]");
    if (!(floor > 0 && floor <= 1)) throw InputError("circulant preconditioner: the eigenvalue floor must be in (0, 1]");
    std::vector<double> m(n);
    double largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        m[i] = data[i] + (penalty.empty() ? 0.0 : weight * penalty[i]);
        if (!std::isfinite(m[i])) throw InputError("circulant preconditioner: an eigenvalue is not a finite number");
        largest = std::max(largest, m[i]);
    }
    if (!(largest > 0)) throw InputError("circulant preconditioner: the operator's circulant approximation is zero");
    // (m/m_max)^{-p} / m_max: scaled by the largest eigenvalue, so that the preconditioned
    // operator's spectrum keeps its scale.
    for (std::size_t i = 0; i < n; ++i) m[i] = std::pow(std::max(m[i], floor * largest) / largest, -exponent) / largest;
    return m;
}

ComplexArray inverseCirculantKernel(const Grid& g, const std::vector<double>& data, const std::vector<double>& penalty,
                                    double weight, double exponent, double floor) {
    const std::vector<double> m = inverseCirculantSpectrum(g, data, penalty, weight, exponent, floor);
    const std::size_t n = g.voxels();
    // The kernel: c(d) = (1/n) sum_k e^{+i 2 pi k d / N} m(k).
    ComplexArray c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = m[i] / double(n);
    FftPlan<double>(g.n, g.dims, FftDirection::Backward).execute(c.data());
    // Its Toeplitz embedding: difference d at index d + N holds c(d mod N).
    const Grid big = g.doubled();
    ComplexArray q(big.voxels());
    const int nz = g.dims == 3 ? g.n[2] : 0;
    for (int z = 0; z < big.n[2]; ++z)
        for (int y = 0; y < big.n[1]; ++y)
            for (int x = 0; x < big.n[0]; ++x)
                q[big.index(x, y, z)] = c[g.index(wrap(x - g.n[0], g.n[0]), wrap(y - g.n[1], g.n[1]), nz ? wrap(z - nz, nz) : 0)];
    return q;
}

namespace {

// A circulant's eigenvalues kept in the host's memory with FFTW plans on its grid: the default
// backends' (the CPU's), whose vectors are on the host already, so download and upload are copies.
class HostCirculant final : public CirculantStorage {
public:
    HostCirculant(const Grid& g, std::vector<double> eig)
        : grid_(g), eig_(std::move(eig)), forward_(g.n, g.dims, FftDirection::Forward), backward_(g.n, g.dims, FftDirection::Backward) {
        for (double& v : eig_) v /= double(eig_.size());  // the backward FFT is unnormalised
    }
    const Grid& grid() const override { return grid_; }
    void apply(ComplexArray& x) const {
        forward_.execute(x.data());
        for (std::size_t i = 0; i < x.size(); ++i) x[i] *= eig_[i];
        backward_.execute(x.data());
    }

private:
    Grid grid_;
    std::vector<double> eig_;
    FftPlan<double> forward_, backward_;
};

// The operator M^{-p}: the backend's N-grid FFT pair around the resident eigenvalues.
class InverseCirculant final : public LinearOperator {
public:
    InverseCirculant(Backend& backend, std::shared_ptr<const CirculantStorage> c)
        : LinearOperator(backend, c->grid().voxels(), c->grid().voxels(), "circulant M^-p (N grid)"), backend_(backend),
          c_(std::move(c)) {}

protected:
    void applyForward(const Vector& x, Vector& y) const override { backend_.circulantMultiply(*c_, x, y); }
    void applyAdjoint(const Vector& y, Vector& x) const override { applyForward(y, x); }  // real spectrum: Hermitian

private:
    Backend& backend_;
    std::shared_ptr<const CirculantStorage> c_;
};

void checkExponentAndFloor(double exponent, double floor) {
    if (!(exponent > 0 && exponent <= 1)) throw InputError("circulant preconditioner: the exponent must be in (0, 1]");
    if (!(floor > 0 && floor <= 1)) throw InputError("circulant preconditioner: the eigenvalue floor must be in (0, 1]");
}

}  // namespace

// ---------------------------------------------------------------- the defaults of the backend primitives

Vector ToeplitzOperator::qVector() const { return space().fromHost(q()); }

void Backend::circulantEigenvalues(const CirculantFold& f, const Vector& kernel, Vector& eig) {
    for (int a = 0; a < 3; ++a) {
        const auto i = std::size_t(a);
        const std::size_t residues = a < f.grid.dims ? std::size_t(f.grid.n[i]) : 1;
        if (f.index[i].size() != 2 * residues || f.weight[i].size() != 2 * residues)
            throw InputError("circulant fold: the table of axis " + std::to_string(a) + " does not match the grid " + f.grid.describe());
        for (int j : f.index[i])
            if (j < 0 || j >= f.source.n[i])
                throw InputError("circulant fold: an index outside the source grid " + f.source.describe());
    }
    if (kernel.size() != f.source.voxels() || eig.size() != f.grid.voxels())
        throw InputError("circulant eigenvalues: the vectors do not match the grids " + f.source.describe() + " and " + f.grid.describe());
    applyCirculantEigenvalues(f, kernel, eig);
}

void Backend::inverseCirculantPower(Vector& m, double exponent, double floor) {
    checkExponentAndFloor(exponent, floor);
    const double largest = applyInverseCirculantPower(m, exponent, floor);
    if (!std::isfinite(largest)) throw InputError("circulant preconditioner: an eigenvalue is not a finite number");
    if (!(largest > 0)) throw InputError("circulant preconditioner: the operator's circulant approximation is zero");
}

std::shared_ptr<const CirculantStorage> Backend::circulantSpectrum(const Grid& g, const Vector& eig) {
    if (eig.size() != g.voxels()) throw InputError("circulant spectrum: " + std::to_string(eig.size()) + " values, not " + g.describe());
    return makeCirculantSpectrum(g, eig);
}

void Backend::circulantMultiply(const CirculantStorage& c, const Vector& x, Vector& y) {
    if (x.size() != c.grid().voxels() || y.size() != x.size())
        throw InputError("circulant product: the vectors do not match the grid " + c.grid().describe());
    applyCirculantMultiply(c, x, y);
}

double Backend::thresholdMasks(const Vector& g, double fraction, Vector& inside, Vector& outside) {
    if (!(fraction >= 0 && fraction < 1)) throw InputError("threshold masks: the fraction " + std::to_string(fraction) + " is not in [0, 1)");
    if (inside.size() != g.size() || outside.size() != g.size()) throw InputError("threshold masks: the masks do not match the vector's size");
    const double largest = applyThresholdMasks(g, fraction, inside, outside);
    if (!std::isfinite(largest)) throw InputError("threshold masks: a value is not a finite number");
    return largest;
}

void Backend::applyCirculantEigenvalues(const CirculantFold& f, const Vector& kernel, Vector& eig) {
    const ComplexArray k = toHost(kernel);
    const Grid& g = f.grid;
    const int ny = g.dims > 1 ? g.n[1] : 1, nz = g.dims > 2 ? g.n[2] : 1;
    ComplexArray c(g.voxels());
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < g.n[0]; ++x) {
                cdouble sum = 0;
                for (int jz = 0; jz < 2; ++jz)
                    for (int jy = 0; jy < 2; ++jy)
                        for (int jx = 0; jx < 2; ++jx) {
                            const std::size_t iz = std::size_t(2 * z + jz), iy = std::size_t(2 * y + jy), ix = std::size_t(2 * x + jx);
                            const double w = f.weight[0][ix] * f.weight[1][iy] * f.weight[2][iz];
                            if (w != 0) sum += w * k[f.source.index(f.index[0][ix], f.index[1][iy], f.index[2][iz])];
                        }
                c[g.index(x, y, z)] = sum;
            }
    FftPlan<double>(g.n, g.dims, FftDirection::Forward).execute(c.data());
    for (cdouble& v : c) v = cdouble(f.nonnegative ? std::max(v.real(), 0.0) : v.real(), 0.0);
    upload(c, eig);
}

double Backend::applyInverseCirculantPower(Vector& m, double exponent, double floor) {
    ComplexArray h = toHost(m);
    double largest = 0;
    for (const cdouble& v : h) {
        if (!std::isfinite(v.real())) return std::nan("");
        largest = std::max(largest, v.real());
    }
    if (!(largest > 0)) return largest;
    // (m/m_max)^{-p} / m_max: scaled by the largest eigenvalue, so that the preconditioned
    // operator's spectrum keeps its scale.
    for (cdouble& v : h) v = std::pow(std::max(v.real(), floor * largest) / largest, -exponent) / largest;
    upload(h, m);
    return largest;
}

double Backend::applyThresholdMasks(const Vector& g, double fraction, Vector& inside, Vector& outside) {
    const ComplexArray h = toHost(g);
    double largest = 0;
    for (const cdouble& v : h) {
        if (!std::isfinite(v.real())) return std::nan("");
        largest = std::max(largest, v.real());
    }
    ComplexArray in(h.size()), out(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) (h[i].real() > fraction * largest ? in : out)[i] = 1.0;
    upload(in, inside);
    upload(out, outside);
    return largest;
}

std::shared_ptr<const CirculantStorage> Backend::makeCirculantSpectrum(const Grid& g, const Vector& eig) {
    const ComplexArray h = toHost(eig);
    std::vector<double> re(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) re[i] = h[i].real();
    return std::make_shared<HostCirculant>(g, std::move(re));
}

void Backend::applyCirculantMultiply(const CirculantStorage& c, const Vector& x, Vector& y) {
    const auto* h = dynamic_cast<const HostCirculant*>(&c);
    if (!h) throw InputError("a circulant of another backend was given to the " + info().kind + " backend's circulant product");
    ComplexArray buffer = toHost(x);
    h->apply(buffer);
    upload(buffer, y);
}

// ---------------------------------------------------------------- on the backend

CirculantFold toeplitzFold(const Grid& g, CirculantApproximation a) {
    CirculantFold f;
    f.grid = g;
    f.source = g.doubled();
    for (int k = 0; k < 3; ++k) {
        const auto i = std::size_t(k);
        if (k >= g.dims) {
            f.index[i] = {0, 0};
            f.weight[i] = {1.0, 0.0};
            continue;
        }
        // Residue r gathers the differences d = r and d = r - N, stored at d + N.
        const AxisTable t = axisTable(g.n[i], true, a);
        const int n = g.n[i];
        for (int r = 0; r < n; ++r)
            for (int d : {r, r - n}) {
                f.index[i].push_back(d + n);
                f.weight[i].push_back(t.weight[std::size_t(d + n)]);
            }
    }
    return f;
}

CirculantFold impulseFold(const Grid& g, const std::array<int, 3>& centre) {
    CirculantFold f;
    f.grid = g;
    f.source = g;
    f.nonnegative = true;
    for (int k = 0; k < 3; ++k) {
        const auto i = std::size_t(k);
        const int n = k < g.dims ? g.n[i] : 1;
        for (int r = 0; r < n; ++r) {
            f.index[i].insert(f.index[i].end(), {wrap(centre[i] + r, n), 0});
            f.weight[i].insert(f.weight[i].end(), {1.0, 0.0});
        }
    }
    return f;
}

Vector circulantEigenvalues(Backend& backend, const ToeplitzOperator& kernel, CirculantApproximation a) {
    const Grid& g = kernel.grid();
    Vector eig = backend.make(g.voxels());
    {
        const Vector q = kernel.qVector();  // the 2N grid, freed before the solve's vectors grow
        backend.circulantEigenvalues(toeplitzFold(g, a), q, eig);
    }
    return eig;
}

Vector impulseCirculantEigenvalues(Backend& backend, const Grid& g, const LinearOperator& w) {
    const std::array<int, 3> c{g.n[0] / 2, g.dims > 1 ? g.n[1] / 2 : 0, g.dims > 2 ? g.n[2] / 2 : 0};
    // The impulse made on the backend: one value uploaded, not a grid's worth.
    Vector in = backend.make(g.voxels()), response = backend.make(g.voxels()), eig = backend.make(g.voxels());
    backend.copyRange(backend.fromHost(ComplexArray{cdouble(1.0)}), 0, in, g.index(c[0], c[1], c[2]), 1);
    w.normal(in, response);
    backend.circulantEigenvalues(impulseFold(g, c), response, eig);
    return eig;
}

LinearOperatorPtr inverseCirculant(Backend& backend, const Grid& g, const Vector& data, const std::vector<double>& weights,
                                   const std::vector<const Vector*>& penalties, double exponent, double floor) {
    const std::size_t n = g.voxels();
    if (data.size() != n || weights.size() != penalties.size())
        throw InputError("circulant preconditioner: the eigenvalues do not match the grid " + g.describe());
    std::vector<double> w{1.0};
    std::vector<const Vector*> terms{&data};
    for (std::size_t k = 0; k < penalties.size(); ++k) {
        if (!penalties[k] || penalties[k]->size() != n)
            throw InputError("circulant preconditioner: the eigenvalues do not match the grid " + g.describe());
        if (!std::isfinite(weights[k]) || weights[k] < 0)
            throw InputError("circulant preconditioner: the penalty weight is not a finite number >= 0");
        w.push_back(weights[k]);
        terms.push_back(penalties[k]);
    }
    checkExponentAndFloor(exponent, floor);
    Vector m = backend.make(n);
    backend.combine(w, terms, m);
    backend.inverseCirculantPower(m, exponent, floor);
    return std::make_shared<InverseCirculant>(backend, backend.circulantSpectrum(g, m));
}

LinearOperatorPtr inverseCirculant(Backend& backend, const Grid& g, const std::vector<double>& data,
                                   const std::vector<double>& penalty, double weight, double exponent, double floor) {
    const std::size_t n = g.voxels();
    if (data.size() != n || (!penalty.empty() && penalty.size() != n))
        throw InputError("circulant preconditioner: the eigenvalues do not match the grid " + g.describe());
    if (!std::isfinite(weight) || weight < 0) throw InputError("circulant preconditioner: the penalty weight is not a finite number >= 0");
    auto upload = [&](const std::vector<double>& v) {
        ComplexArray h(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) h[i] = v[i];
        return backend.fromHost(h);
    };
    const Vector d = upload(data);
    if (penalty.empty()) return inverseCirculant(backend, g, d, {}, {}, exponent, floor);
    const Vector p = upload(penalty);
    return inverseCirculant(backend, g, d, {weight}, {&p}, exponent, floor);
}

}  // namespace recon
