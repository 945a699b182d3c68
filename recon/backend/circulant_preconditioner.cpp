#include "recon/backend/circulant_preconditioner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

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

// The circulant applied where it lives, on the N grid: FFT, the spectrum, inverse FFT, in
// the host's memory (float64). On the CPU backend download and upload are copies, so one
// application costs an N-grid FFT pair instead of the Toeplitz product's 2N-grid one.
class HostCirculant final : public LinearOperator {
public:
    HostCirculant(VectorSpace& space, const Grid& g, std::vector<double> spectrum)
        : LinearOperator(space, g.voxels(), g.voxels(), "circulant M^-p (N grid)"), spectrum_(std::move(spectrum)),
          forward_(g.n, g.dims, FftDirection::Forward), backward_(g.n, g.dims, FftDirection::Backward) {
        for (double& v : spectrum_) v /= double(spectrum_.size());  // the backward FFT is unnormalised
    }

protected:
    void applyForward(const Vector& x, Vector& y) const override {
        space().download(x, buffer_);
        forward_.execute(buffer_.data());
        for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] *= spectrum_[i];
        backward_.execute(buffer_.data());
        space().upload(buffer_, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override { applyForward(y, x); }  // real spectrum: Hermitian

private:
    std::vector<double> spectrum_;
    FftPlan<double> forward_, backward_;
    mutable ComplexArray buffer_;
};

}  // namespace

LinearOperatorPtr inverseCirculantOnGrid(VectorSpace& space, const Grid& g, const std::vector<double>& data,
                                         const std::vector<double>& penalty, double weight, double exponent, double floor) {
    return std::make_shared<HostCirculant>(space, g, inverseCirculantSpectrum(g, data, penalty, weight, exponent, floor));
}

std::shared_ptr<ToeplitzOperator> inverseCirculant(Backend& backend, const Grid& g, const std::vector<double>& data,
                                                   const std::vector<double>& penalty, double weight, double exponent,
                                                   double floor) {
    return backend.toeplitzFromQ(g, inverseCirculantKernel(g, data, penalty, weight, exponent, floor));
}

}  // namespace recon
