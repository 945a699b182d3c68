#include "test_support.hpp"

#include <cmath>

namespace recon::test {

namespace {
double position(const SampleGrid& g, int axis, int j) { return (j - g.size[axis] / 2) * g.spacing[axis]; }
}  // namespace

ComplexArray bruteAdjoint(const Trajectory& t, const ComplexArray& c, const SampleGrid& g) {
    ComplexArray out(g.points());
    for (int z = 0; z < g.size[2]; ++z)
        for (int y = 0; y < g.size[1]; ++y)
            for (int x = 0; x < g.size[0]; ++x) {
                std::complex<long double> acc = 0;
                for (std::size_t m = 0; m < t.samples(); ++m) {
                    long double ph = 2.0L * 3.141592653589793238462643L *
                                     (t.kx(m) * position(g, 0, x) + t.ky(m) * position(g, 1, y) + t.kz(m) * position(g, 2, z));
                    acc += std::complex<long double>(c[m]) * std::complex<long double>(std::cos(ph), std::sin(ph));
                }
                out[(std::size_t(z) * g.size[1] + y) * g.size[0] + x] = cdouble(acc);
            }
    return out;
}

ComplexArray bruteForward(const Trajectory& t, const ComplexArray& f, const SampleGrid& g) {
    ComplexArray out(t.samples());
    for (std::size_t m = 0; m < t.samples(); ++m) {
        std::complex<long double> acc = 0;
        for (int z = 0; z < g.size[2]; ++z)
            for (int y = 0; y < g.size[1]; ++y)
                for (int x = 0; x < g.size[0]; ++x) {
                    long double ph = -2.0L * 3.141592653589793238462643L *
                                     (t.kx(m) * position(g, 0, x) + t.ky(m) * position(g, 1, y) + t.kz(m) * position(g, 2, z));
                    acc += std::complex<long double>(f[(std::size_t(z) * g.size[1] + y) * g.size[0] + x]) *
                           std::complex<long double>(std::cos(ph), std::sin(ph));
                }
        out[m] = cdouble(acc);
    }
    return out;
}

ComplexArray randomComplex(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> nd;
    ComplexArray v(n);
    for (auto& x : v) x = cdouble(nd(rng), nd(rng));
    return v;
}

Trajectory randomTrajectory(const Grid& g, std::size_t m, unsigned seed) {
    std::mt19937 rng(seed);
    Trajectory t;
    t.dims = g.dims;
    t.kind = "random";
    for (std::size_t i = 0; i < m; ++i) {
        for (int a = 0; a < 3; ++a) {
            double half = g.n[a] / 2.0;
            double k = 0;
            if (a < g.dims) {
                if (i % 7 == 0) k = -half;                                                    // band edge
                else if (i % 5 == 0) k = std::uniform_real_distribution<double>(-0.3, 0.3)(rng);  // clustered centre
                else k = std::uniform_real_distribution<double>(-half, half)(rng);
            }
            t.k.push_back(k);
        }
    }
    return t;
}

double relativeError(const ComplexArray& a, const ComplexArray& ref) {
    double e = 0, r = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        e += std::norm(a[i] - ref[i]);
        r += std::norm(ref[i]);
    }
    return std::sqrt(e / r);
}

cdouble inner(const ComplexArray& a, const ComplexArray& b) {
    cdouble s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += std::conj(a[i]) * b[i];
    return s;
}

void projectOntoGroupBalls(ComplexArray& y, std::size_t group, double w) {
    const std::size_t stride = y.size() / group;
    for (std::size_t i = 0; i < stride; ++i) {
        double n2 = 0;
        for (std::size_t k = 0; k < group; ++k) n2 += std::norm(y[i + k * stride]);
        const double s = std::sqrt(n2) > w ? w / std::sqrt(n2) : 1.0;
        for (std::size_t k = 0; k < group; ++k) y[i + k * stride] *= s;
    }
}

std::unique_ptr<NormalEquationsCg> toeplitzCg(Backend& b, const Trajectory& t, std::shared_ptr<const ToeplitzOperator> tk,
                                              const ComplexArray& rhs, double data_norm2, const Regularizer* reg,
                                              double weight) {
    const Grid g = tk->grid();
    std::vector<NormalTerm> terms{
        {"data", 1.0, fourierOperator(b, t, g, std::vector<double>(t.samples(), 1.0), {"direct"}, std::move(tk))}};
    if (reg) terms.push_back({"penalty", weight, sparseMatrix(b, reg->w, &reg->normal, "W")});
    return std::make_unique<NormalEquationsCg>(std::move(terms), b.fromHost(rhs), data_norm2);
}

}  // namespace recon::test
