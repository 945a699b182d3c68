// The CPU backend: the trusted reference and the fallback. OpenMP threads,
// FFTW, float32 (the paper's CPU.SP) or float64 (CPU.DP).
#include <omp.h>

#include <algorithm>
#include <array>
#include <thread>
#include <type_traits>
#include <utility>

#include "recon/backend/backend.hpp"
#include "recon/core/vector_clones.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/nufft/padded_convolution.hpp"
#include "recon/nufft/spread_kernel.hpp"
#include "recon/nufft/toeplitz_spectrum.hpp"
#include "recon/operators/direct_sums.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon {
namespace {

template <class T>
using HostVector = std::vector<std::complex<T>>;

// The CPU NUFFT's oversampling: a grid 1.5x the output per axis (a wider kernel keeps the
// tolerance; SpreadKernel::forTolerance), not 2x: Q's grid at 128^3 is 384^3, not 512^3.
// Not 1.25: its deapodisation amplifies float32 rounding to about the default tolerance
// 1e-4 and beyond it below (docs/SCALING.md).
constexpr double kNufftSigma = 1.5;

// Below this many values a vector operation runs on one thread: forking a team
// costs more than it saves, and far more on a loaded machine.
constexpr std::int64_t kParallelThreshold = 1 << 16;

template <class T>
HostVector<T> toPrecision(const ComplexArray& a) {
    HostVector<T> v(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) v[i] = std::complex<T>(a[i]);
    return v;
}

template <class T>
void fromPrecision(const HostVector<T>& v, ComplexArray& a) {
    a.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) a[i] = cdouble(v[i]);
}

// A Vector's storage on this backend: host memory in the working precision.
template <class T>
struct HostStorage final : VectorStorage {
    explicit HostStorage(std::size_t n) : v(n) {}
    std::size_t size() const override { return v.size(); }
    HostVector<T> v;
};

template <class T>
HostVector<T>& values(Vector& x) {
    auto* s = dynamic_cast<HostStorage<T>*>(x.storage());
    if (!s) throw InputError("a vector of another backend or precision was given to the CPU backend");
    return s->v;
}
template <class T>
const HostVector<T>& values(const Vector& x) {
    return values<T>(const_cast<Vector&>(x));
}

struct HostSparse final : SparseStorage {
    explicit HostSparse(CsrMatrix m) : a(std::move(m)) {}
    std::int64_t rows() const override { return a.rows; }
    std::int64_t cols() const override { return a.cols; }
    CsrMatrix a;
};

// a^H b over the complex elements [lo, hi) of interleaved (re, im) values, the sums in double.
// `omp simd` lets the reduction vectorise (plain C++ may not reorder a floating-point sum); callers
// run it block by block so that several pairs share one pass over memory.
template <class T>
[[gnu::always_inline]] inline void dotRangeOf(const T* a, const T* b, std::int64_t lo, std::int64_t hi, double& re, double& im) {
    double r = 0, m = 0;
#pragma omp simd reduction(+ : r, m)
    for (std::int64_t i = lo; i < hi; ++i) {
        const double ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
        r += ar * br + ai * bi;
        m += ar * bi - ai * br;
    }
    re += r;
    im += m;
}
// Wider vectors where the processor has them: 3 pairs at 65,536 float32 values 0.33-0.41 ms with
// SSE2, 0.11-0.15 ms with AVX-512 (docs/SCALING.md). The sum's order (and so its last bits) follows the vector width.
RECON_VECTOR_CLONES
void dotRange(const float* a, const float* b, std::int64_t lo, std::int64_t hi, double& re, double& im) {
    dotRangeOf(a, b, lo, hi, re, im);
}
RECON_VECTOR_CLONES
void dotRange(const double* a, const double* b, std::int64_t lo, std::int64_t hi, double& re, double& im) {
    dotRangeOf(a, b, lo, hi, re, im);
}

// Vector operations on host memory (real scalars only where possible, so no
// complex multiplies: the loops vectorise).
template <class T>
struct CpuSpace {
    using Vector = HostVector<T>;
    static constexpr std::int64_t kDotBlock = 2048;  // complex elements: 16 KB of float32 per vector
    std::complex<double> dot(const Vector& a, const Vector& b) const {
        return dotPairs({{&a, &b}}).front();
    }
    // a^H b_k for several b in one pass over a.
    std::vector<std::complex<double>> dots(const Vector& a, const std::vector<const Vector*>& bs) const {
        std::vector<std::pair<const Vector*, const Vector*>> pairs;
        for (const Vector* b : bs) pairs.emplace_back(&a, b);
        return dotPairs(pairs);
    }
    // a_k^H b_k for several pairs in one pass: block by block, each block's pairs while it is in cache.
    std::vector<std::complex<double>> dotPairs(const std::vector<std::pair<const Vector*, const Vector*>>& pairs) const {
        constexpr int kMax = 8;
        std::vector<std::complex<double>> out;
        for (std::size_t first = 0; first < pairs.size(); first += kMax) {
            const int k = int(std::min<std::size_t>(kMax, pairs.size() - first));
            const T* pa[kMax] = {};
            const T* pb[kMax] = {};
            for (int j = 0; j < k; ++j) {
                pa[j] = reinterpret_cast<const T*>(pairs[first + j].first->data());
                pb[j] = reinterpret_cast<const T*>(pairs[first + j].second->data());
            }
            double acc[2 * kMax] = {};
            const std::int64_t n = std::int64_t(pairs[first].first->size());
            const std::int64_t blocks = (n + kDotBlock - 1) / kDotBlock;
#pragma omp parallel for reduction(+ : acc[:2 * kMax]) schedule(static) if (n > kParallelThreshold)
            for (std::int64_t blk = 0; blk < blocks; ++blk) {
                const std::int64_t lo = blk * kDotBlock, hi = std::min(n, lo + kDotBlock);
                for (int j = 0; j < k; ++j) dotRange(pa[j], pb[j], lo, hi, acc[2 * j], acc[2 * j + 1]);
            }
            for (int j = 0; j < k; ++j) out.emplace_back(acc[2 * j], acc[2 * j + 1]);
        }
        return out;
    }
    // y += alpha x; returns ||y||^2 from the same pass.
    double axpyNorm2(double alpha, const Vector& x, Vector& y) const {
        const T a = T(alpha);
        const T* px = reinterpret_cast<const T*>(x.data());
        T* py = reinterpret_cast<T*>(y.data());
        const std::int64_t n = 2 * std::int64_t(x.size());
        double norm2 = 0;
#pragma omp parallel for simd reduction(+ : norm2) schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) {
            py[i] += a * px[i];
            norm2 += double(py[i]) * py[i];
        }
        return norm2;
    }
    void axpy(double alpha, const Vector& x, Vector& y) const {
        const T a = T(alpha);
        const T* px = reinterpret_cast<const T*>(x.data());
        T* py = reinterpret_cast<T*>(y.data());
        const std::int64_t n = 2 * std::int64_t(x.size());
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) py[i] += a * px[i];
    }
    void xpby(const Vector& x, double beta, Vector& y) const {
        const T b = T(beta);
        const T* px = reinterpret_cast<const T*>(x.data());
        T* py = reinterpret_cast<T*>(y.data());
        const std::int64_t n = 2 * std::int64_t(x.size());
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) py[i] = px[i] + b * py[i];
    }
    // y = d x or conj(d) x elementwise (y may be x or d). In real arithmetic, as std::complex's
    // product with its NaN check does not vectorise (SENSE's map products: 2 per coil per iteration).
    void multiply(const Vector& d, const Vector& x, Vector& y, bool conjugate_d) const {
        const T* pd = reinterpret_cast<const T*>(d.data());
        const T* px = reinterpret_cast<const T*>(x.data());
        T* py = reinterpret_cast<T*>(y.data());
        const T sign = conjugate_d ? T(-1) : T(1);
        const std::int64_t n = std::int64_t(x.size());
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) {
            const T dr = pd[2 * i], di = sign * pd[2 * i + 1], xr = px[2 * i], xi = px[2 * i + 1];
            py[2 * i] = dr * xr - di * xi;
            py[2 * i + 1] = dr * xi + di * xr;
        }
    }
    // y += sum_k a_k x_k (complex a_k) in one pass over y.
    void axpys(const std::vector<std::complex<double>>& a, const std::vector<const Vector*>& xs, Vector& y) const {
        T* py = reinterpret_cast<T*>(y.data());
        const std::int64_t n = std::int64_t(y.size());
        constexpr std::size_t kMax = 8;
        for (std::size_t first = 0; first < xs.size(); first += kMax) {
            const int k = int(std::min(kMax, xs.size() - first));
            const T* px[kMax] = {};
            T ar[kMax] = {}, ai[kMax] = {};
            for (int j = 0; j < k; ++j) {
                px[j] = reinterpret_cast<const T*>(xs[first + j]->data());
                ar[j] = T(a[first + j].real());
                ai[j] = T(a[first + j].imag());
            }
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
            for (std::int64_t i = 0; i < n; ++i) {
                T re = py[2 * i], im = py[2 * i + 1];
                for (int j = 0; j < k; ++j) {
                    const T xr = px[j][2 * i], xi = px[j][2 * i + 1];
                    re += ar[j] * xr - ai[j] * xi;
                    im += ar[j] * xi + ai[j] * xr;
                }
                py[2 * i] = re;
                py[2 * i + 1] = im;
            }
        }
    }
    void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) const {
        const std::int64_t n = 2 * std::int64_t(y.size());
        T* py = reinterpret_cast<T*>(y.data());
        std::fill(py, py + n, T(0));
        for (std::size_t k = 0; k < xs.size(); ++k) {
            const T a = T(w[k]);
            const T* px = reinterpret_cast<const T*>(xs[k]->data());
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
            for (std::int64_t i = 0; i < n; ++i) py[i] += a * px[i];
        }
    }
};

// F^H F through the Toeplitz embedding: the pruned, fused product with Q's real spectrum.
template <class T>
class CpuToeplitz final : public ToeplitzOperator {
public:
    CpuToeplitz(VectorSpace& space, const Grid& g, const std::vector<T>& spectrum)
        : ToeplitzOperator(space, g), product_(std::make_unique<PaddedConvolution<T>>(g, spectrum)) {}

    ComplexArray q() const override { return qFromToeplitzSpectrum(grid(), product_->spectrum()); }

private:
    void applyForward(const Vector& xv, Vector& yv) const override { product_->apply(values<T>(xv).data(), values<T>(yv).data()); }
    // SENSE's normal: the maps' products fused into the padding and the cropping, the coils
    // shared out over the threads (PaddedConvolution::applyCoilSum).
    void applyCoilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const override {
        std::vector<const std::complex<T>*> m;
        for (const Vector* map : maps) m.push_back(values<T>(*map).data());
        product_->applyCoilSum(m, values<T>(x).data(), values<T>(y).data());
    }

    std::unique_ptr<PaddedConvolution<T>> product_;  // pruned FFTs, the spectrum product fused in
};

// The plain Fourier sums on host vectors, exact or by a NUFFT plan made on first use.
template <class T>
class CpuFourierSums final : public LinearOperator {
public:
    CpuFourierSums(VectorSpace& space, const Trajectory& t, const SampleGrid& g, bool direct, double tolerance)
        : LinearOperator(space, g.points(), t.samples(), direct ? "Fourier sums (exact)" : "Fourier sums (NUFFT)"),
          t_(t), g_(g), direct_(direct), tolerance_(tolerance) {}

private:
    void applyForward(const Vector& x, Vector& y) const override {
        if (direct_)
            directForwardSum<T>(t_, values<T>(x).data(), g_, values<T>(y).data());
        else
            plan().forward(values<T>(x).data(), values<T>(y).data());
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        if (direct_)
            directAdjointSum<T>(t_, values<T>(y).data(), g_, values<T>(x).data());
        else
            plan().adjoint(values<T>(y).data(), values<T>(x).data());
    }
    const NufftPlan<T>& plan() const {
        if (!plan_) plan_ = std::make_unique<NufftPlan<T>>(t_, g_, SpreadKernel::forTolerance(tolerance_, kNufftSigma));
        return *plan_;
    }
    Trajectory t_;
    SampleGrid g_;
    bool direct_;
    double tolerance_;
    mutable std::unique_ptr<NufftPlan<T>> plan_;
};

template <class T>
class CpuBackend final : public Backend {
public:
    explicit CpuBackend(int threads) {
        if (threads > 0) setCpuThreads(threads);
    }

    BackendInfo info() const override {
        BackendInfo i;
        i.kind = "cpu";
        i.device = std::to_string(cpuThreads()) + " threads";
        i.precision = std::is_same_v<T, float> ? Precision::Single : Precision::Double;
        i.q_oversampling = kNufftSigma;
        return i;
    }

    // A^H A from the calibration blocks (calibrationGram), never A: in 3D with 8 coils forming it
    // from A (6859 x 1728) took 13 of ESPIRiT's ~50 CPU seconds on two cores.
    void calibrationProjection(const CalibrationMatrix& m, double threshold, std::vector<double>& values, std::size_t& kept,
                               ComplexArray& projection) override {
        hostGramProjection(calibrationGram(m), m.cols(), threshold, values, kept, projection);
    }

    std::vector<MethodInfo> methods() const override {
        return {{"nufft", "NUFFT: exp-semicircle spreading on a 1.5x grid + pruned FFTW, accuracy set by the tolerance", false},
                {"direct", "exact sums (the paper's loops), separable phases, OpenMP", true}};
    }
    std::string defaultMethod() const override { return "nufft"; }

    // ------------------------------------------------------------ the vector space
    Vector make(std::size_t n) override { return Vector(std::make_unique<HostStorage<T>>(n)); }
    void upload(const ComplexArray& host, Vector& v) override {
        HostVector<T>& d = values<T>(v);
        if (d.size() != host.size()) throw InputError("upload: " + std::to_string(host.size()) + " values into a vector of " + std::to_string(d.size()));
        for (std::size_t i = 0; i < host.size(); ++i) d[i] = std::complex<T>(host[i]);
    }
    void download(const Vector& v, ComplexArray& host) override { fromPrecision(values<T>(v), host); }
    void copy(const Vector& from, Vector& to) override { values<T>(to) = values<T>(from); }
    void copyRange(const Vector& from, std::size_t fo, Vector& to, std::size_t to_offset, std::size_t count) override {
        const HostVector<T>& a = values<T>(from);
        HostVector<T>& b = values<T>(to);
        if (fo + count > a.size() || to_offset + count > b.size()) throw InputError("copyRange: the range lies outside a vector");
        std::copy(a.begin() + std::ptrdiff_t(fo), a.begin() + std::ptrdiff_t(fo + count), b.begin() + std::ptrdiff_t(to_offset));
    }
    void zero(Vector& v) override {
        HostVector<T>& a = values<T>(v);
        std::fill(a.begin(), a.end(), std::complex<T>(0));
    }
    void scale(cdouble a, Vector& y) override {
        const std::complex<T> s(a);
        for (auto& v : values<T>(y)) v *= s;
    }
    void axpy(double a, const Vector& x, Vector& y) override { ops_.axpy(a, values<T>(x), values<T>(y)); }
    void xpby(const Vector& x, double b, Vector& y) override { ops_.xpby(values<T>(x), b, values<T>(y)); }
    void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) override {
        std::vector<const HostVector<T>*> h;
        for (const Vector* x : xs) h.push_back(&values<T>(*x));
        ops_.combine(w, h, values<T>(y));
    }
    void multiply(const Vector& d, const Vector& x, Vector& y, bool conjugate_d) override {
        const HostVector<T>& dv = values<T>(d);
        const HostVector<T>& xv = values<T>(x);
        HostVector<T>& yv = values<T>(y);
        if (dv.size() != xv.size() || yv.size() != xv.size()) throw InputError("multiply: vectors of different lengths");
        ops_.multiply(dv, xv, yv, conjugate_d);
    }
    void axpys(const std::vector<cdouble>& a, const std::vector<const Vector*>& xs, Vector& y) override {
        if (a.size() != xs.size()) throw InputError("axpys: " + std::to_string(a.size()) + " scalars for " + std::to_string(xs.size()) + " vectors");
        std::vector<const HostVector<T>*> h;
        for (const Vector* x : xs) {
            if (x->size() != y.size()) throw InputError("axpys: vectors of different lengths");
            h.push_back(&values<T>(*x));
        }
        ops_.axpys(a, h, values<T>(y));
    }
    cdouble dot(const Vector& a, const Vector& b) override { return ops_.dot(values<T>(a), values<T>(b)); }
    std::vector<cdouble> dots(const Vector& a, const std::vector<const Vector*>& bs) override {
        std::vector<const HostVector<T>*> h;
        for (const Vector* b : bs) h.push_back(&values<T>(*b));
        return ops_.dots(values<T>(a), h);
    }
    std::vector<cdouble> dotPairs(const std::vector<VectorPair>& pairs) override {
        if (pairs.empty()) return {};
        std::vector<std::pair<const HostVector<T>*, const HostVector<T>*>> h;
        for (const auto& [a, b] : pairs) {
            if (a->size() != b->size() || a->size() != pairs.front().first->size())
                throw InputError("dotPairs: vectors of different lengths");
            h.emplace_back(&values<T>(*a), &values<T>(*b));
        }
        return ops_.dotPairs(h);
    }
    double axpyNorm2(double a, const Vector& x, Vector& y) override { return ops_.axpyNorm2(a, values<T>(x), values<T>(y)); }
    void groupSoftThreshold(const Vector& x, std::size_t group, double t, Vector& y) override {
        const HostVector<T>& xv = values<T>(x);
        HostVector<T>& yv = values<T>(y);
        const std::size_t stride = groupStride(xv.size(), group, "groupSoftThreshold");
        if (yv.size() != xv.size()) throw InputError("groupSoftThreshold: vectors of different lengths");
        if (!(t >= 0) || !std::isfinite(t)) throw InputError("groupSoftThreshold: the threshold must be a finite number >= 0");
        const std::int64_t n = std::int64_t(stride);
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) {
            double norm2 = 0;
            for (std::size_t k = 0; k < group; ++k) norm2 += std::norm(std::complex<double>(xv[std::size_t(i) + k * stride]));
            const double norm = std::sqrt(norm2);
            // max(0, 1 - t/|x|) without dividing by zero: a group of zeros stays zero.
            const T factor = T(norm > t ? 1.0 - t / norm : 0.0);
            for (std::size_t k = 0; k < group; ++k) yv[std::size_t(i) + k * stride] = factor * xv[std::size_t(i) + k * stride];
        }
    }
    double groupNorm1(const Vector& x, std::size_t group) override {
        const HostVector<T>& xv = values<T>(x);
        const std::size_t stride = groupStride(xv.size(), group, "groupNorm1");
        const std::int64_t n = std::int64_t(stride);
        double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) {
            double norm2 = 0;
            for (std::size_t k = 0; k < group; ++k) norm2 += std::norm(std::complex<double>(xv[std::size_t(i) + k * stride]));
            sum += std::sqrt(norm2);
        }
        return sum;
    }
    std::shared_ptr<const SparseStorage> uploadSparse(const CsrMatrix& a) override { return std::make_shared<HostSparse>(a); }
    void sparseMultiply(const SparseStorage& a, const Vector& x, Vector& y) override {
        const auto* m = dynamic_cast<const HostSparse*>(&a);
        if (!m) throw InputError("a sparse matrix of another backend was given to the CPU backend");
        if (values<T>(x).size() != std::size_t(m->a.cols) || values<T>(y).size() != std::size_t(m->a.rows))
            throw InputError("sparse product: the vectors do not match the matrix");
        m->a.multiply(values<T>(x).data(), values<T>(y).data());
    }

    // ------------------------------------------------------------ the priors' stencils
protected:
    void applyGradient(const Grid& g, const Vector* weights, Product p, const Vector& x, Vector& y) override {
        const HostVector<T>& in = values<T>(x);
        HostVector<T>& out = values<T>(y);
        const HostVector<T>* w = weights ? &values<T>(*weights) : nullptr;
        const std::int64_t nvox = std::int64_t(g.voxels()), lines = std::int64_t(g.n[1]) * g.n[2];
        const std::array<std::int64_t, 3> st{1, g.n[0], std::int64_t(g.n[0]) * g.n[1]};
        // w, conj(w) or |w|^2 of difference a at voxel v (1 without weights).
        auto weight = [&](int a, std::int64_t v) { return w ? (*w)[std::size_t(a * nvox + v)] : std::complex<T>(1); };
        // The unweighted normal product D^H D on a line whose neighbours along y (and z) all exist:
        // its inner voxels need no boundary test, and with unit weights the complex arithmetic is
        // the same float operations on the real and imaginary parts alike, so one loop over the
        // line's floats vectorises. Same operations in the same order as the general loop below
        // (bit-identical); its ends and the boundary lines take that loop.
        const bool fast_normal = p == Product::Normal && !w && (g.dims == 2 || g.dims == 3) && g.n[0] > 2;
        const T* fin = reinterpret_cast<const T*>(in.data());
        T* fout = reinterpret_cast<T*>(out.data());
#pragma omp parallel for schedule(static) if (nvox > kParallelThreshold)
        for (std::int64_t line = 0; line < lines; ++line) {
            const int yy = int(line % g.n[1]), zz = int(line / g.n[1]);
            const bool inner_line = fast_normal && yy >= 1 && yy + 1 < g.n[1] && (g.dims == 2 || (zz >= 1 && zz + 1 < g.n[2]));
            if (inner_line) {
                const std::int64_t sy = 2 * st[1], sz = 2 * st[2], first = 2 * (line * g.n[0] + 1),
                                   end = 2 * ((line + 1) * g.n[0] - 1);
                // One loop for 2D and 3D (the z pair compiled in or out): the general loop's operation order.
                auto innerVoxels = [&](auto three_d) {
#pragma omp simd
                    for (std::int64_t f = first; f < end; ++f) {
                        T acc = 0;
                        acc += fin[f] - fin[f - 2];
                        acc -= fin[f + 2] - fin[f];
                        acc += fin[f] - fin[f - sy];
                        acc -= fin[f + sy] - fin[f];
                        if constexpr (decltype(three_d)::value) {
                            acc += fin[f] - fin[f - sz];
                            acc -= fin[f + sz] - fin[f];
                        }
                        fout[f] = acc;
                    }
                };
                if (g.dims == 2)
                    innerVoxels(std::false_type{});
                else
                    innerVoxels(std::true_type{});
            }
            for (int xx = 0; xx < g.n[0]; xx = inner_line && xx == 0 ? g.n[0] - 1 : xx + 1) {
                const std::array<int, 3> pos{xx, yy, zz};
                const std::int64_t v = line * g.n[0] + xx;
                if (p == Product::Forward) {
                    for (int a = 0; a < g.dims; ++a)
                        out[std::size_t(a * nvox + v)] =
                            pos[std::size_t(a)] + 1 < g.n[std::size_t(a)] ? weight(a, v) * (in[std::size_t(v + st[std::size_t(a)])] - in[std::size_t(v)])
                                                                          : std::complex<T>(0);
                    continue;
                }
                std::complex<T> acc = 0;
                for (int a = 0; a < g.dims; ++a) {
                    const std::int64_t s = st[std::size_t(a)];
                    const bool has_prev = pos[std::size_t(a)] >= 1, has_next = pos[std::size_t(a)] + 1 < g.n[std::size_t(a)];
                    if (p == Product::Adjoint) {
                        if (has_prev) acc += std::conj(weight(a, v - s)) * in[std::size_t(a * nvox + v - s)];
                        if (has_next) acc -= std::conj(weight(a, v)) * in[std::size_t(a * nvox + v)];
                    } else {
                        if (has_prev) acc += std::norm(weight(a, v - s)) * (in[std::size_t(v)] - in[std::size_t(v - s)]);
                        if (has_next) acc -= std::norm(weight(a, v)) * (in[std::size_t(v + s)] - in[std::size_t(v)]);
                    }
                }
                out[std::size_t(v)] = acc;
            }
        }
    }
    void applyWaveletLevel(const Grid& g, int axis, const std::array<int, 3>& box, const std::array<int, 3>& extent,
                           const std::vector<double>& lowpass, bool inverse, const Vector& x, Vector& y) override {
        const HostVector<T>& in = values<T>(x);
        HostVector<T>& out = values<T>(y);
        const int taps = int(lowpass.size()), len = box[std::size_t(axis)], half = len / 2;
        std::array<T, kMaxWaveletTaps> h{}, hp{};
        for (int k = 0; k < taps; ++k) {
            h[std::size_t(k)] = T(lowpass[std::size_t(k)]);
            hp[std::size_t(k)] = T((k % 2 == 0 ? 1.0 : -1.0) * lowpass[std::size_t(taps - 1 - k)]);
        }
        const std::array<std::int64_t, 3> st{1, g.n[0], std::int64_t(g.n[0]) * g.n[1]};
        const std::int64_t s = st[std::size_t(axis)], lines = std::int64_t(extent[1]) * extent[2];
#pragma omp parallel for schedule(static) if (lines * extent[0] > kParallelThreshold)
        for (std::int64_t line = 0; line < lines; ++line) {
            const int yy = int(line % extent[1]), zz = int(line / extent[1]);
            for (int xx = 0; xx < extent[0]; ++xx) {
                const std::array<int, 3> pos{xx, yy, zz};
                const std::int64_t v = std::int64_t(g.index(xx, yy, zz));
                if (xx >= box[0] || yy >= box[1] || zz >= box[2]) {
                    out[std::size_t(v)] = in[std::size_t(v)];
                    continue;
                }
                const int j = pos[std::size_t(axis)];
                const std::int64_t base = v - j * s;  // the line's first voxel
                std::complex<T> acc = 0;
                if (!inverse) {
                    // Low-pass outputs first, then high-pass, each from inputs 2m .. 2m + taps - 1 (periodic).
                    const bool high = j >= half;
                    const int m = high ? j - half : j;
                    for (int k = 0; k < taps; ++k)
                        acc += (high ? hp : h)[std::size_t(k)] * in[std::size_t(base + ((2 * m + k) % len) * s)];
                } else {
                    // The transpose: input j received h[k] from low output m and g[k] from high output m
                    // wherever 2m + k = j (mod len).
                    for (int k = 0; k < taps; ++k) {
                        const int r = ((j - k) % len + len) % len;
                        if (r % 2 != 0) continue;
                        const int m = r / 2;
                        acc += h[std::size_t(k)] * in[std::size_t(base + m * s)] + hp[std::size_t(k)] * in[std::size_t(base + (half + m) * s)];
                    }
                }
                out[std::size_t(v)] = acc;
            }
        }
    }

    void applyHaarShrink(const Grid& g, const std::array<int, 3>& splits, std::size_t offset, double t, const Vector& x,
                         Vector& y) override {
        const HostVector<T>& in = values<T>(x);
        HostVector<T>& out = values<T>(y);
        haarTiles(g, splits, offset, [&](std::vector<std::complex<T>>& tile, const std::array<int, 3>& side) {
            haarTile(tile, side, splits, false);
            double sum = 0;
            for (std::complex<T>& c : tile) {
                const double norm = std::abs(std::complex<double>(c));
                const double factor = norm > t ? 1.0 - t / norm : 0.0;  // soft(c, t) without dividing by zero
                c *= T(factor);
                sum += factor * norm;
            }
            haarTile(tile, side, splits, true);
            return sum;
        }, &in, &out);
    }
    double applyHaarNorm1(const Grid& g, const std::array<int, 3>& splits, const std::vector<std::size_t>& offsets,
                          const Vector& x) override {
        const HostVector<T>& in = values<T>(x);
        double total = 0;
        for (std::size_t offset : offsets)
            total += haarTiles(g, splits, offset, [&](std::vector<std::complex<T>>& tile, const std::array<int, 3>& side) {
                haarTile(tile, side, splits, false);
                double sum = 0;
                for (const std::complex<T>& c : tile) sum += std::abs(std::complex<double>(c));
                return sum;
            }, &in, nullptr);
        return total / double(offsets.size());
    }

private:
    // Calls work(tile, side) on each tile of (P x) gathered into a buffer (P: the cyclic shift by
    // `offset`), scatters the tile back through P^H into *out when given; returns the sum of work's results.
    template <class Work>
    static double haarTiles(const Grid& g, const std::array<int, 3>& splits, std::size_t offset, Work work, const HostVector<T>* in,
                            HostVector<T>* out) {
        const std::array<int, 3> side{1 << splits[0], 1 << splits[1], 1 << splits[2]};
        const std::array<int, 3> tiles{g.n[0] / side[0], g.n[1] / side[1], g.n[2] / side[2]};
        const std::int64_t count = std::int64_t(tiles[0]) * tiles[1] * tiles[2];
        const std::size_t n = g.voxels(), volume = std::size_t(side[0]) * side[1] * side[2];
        double total = 0;
#pragma omp parallel reduction(+ : total) if (std::int64_t(n) > kParallelThreshold)
        {
            std::vector<std::complex<T>> tile(volume);
            std::vector<std::size_t> where(volume);
#pragma omp for schedule(static)
            for (std::int64_t b = 0; b < count; ++b) {
                const std::array<int, 3> origin{int(b % tiles[0]) * side[0], int(b / tiles[0] % tiles[1]) * side[1],
                                                int(b / tiles[0] / tiles[1]) * side[2]};
                std::size_t e = 0;
                for (int k = 0; k < side[2]; ++k)
                    for (int j = 0; j < side[1]; ++j)
                        for (int i = 0; i < side[0]; ++i, ++e) {
                            const std::size_t v = g.index(origin[0] + i, origin[1] + j, origin[2] + k);
                            where[e] = (v + n - offset) % n;  // (P x)[v] = x[(v - offset) mod n]
                            tile[e] = (*in)[where[e]];
                        }
                total += work(tile, side);
                if (out)
                    for (std::size_t i = 0; i < volume; ++i) (*out)[where[i]] = tile[i];
            }
        }
        return total;
    }
    // The multilevel Haar transform of one tile in place (Mallat's order inside the tile), or its inverse.
    static void haarTile(std::vector<std::complex<T>>& tile, const std::array<int, 3>& side, const std::array<int, 3>& splits,
                         bool inverse) {
        const int levels = std::max({splits[0], splits[1], splits[2]});
        const std::array<std::size_t, 3> st{1, std::size_t(side[0]), std::size_t(side[0]) * side[1]};
        const T r = T(1 / std::sqrt(2.0));
        std::vector<std::complex<T>> line(std::size_t(std::max({side[0], side[1], side[2]})));
        for (int step = 0; step < levels * 3; ++step) {
            const int s = inverse ? levels * 3 - 1 - step : step, level = s / 3, axis = s % 3;
            if (level >= splits[std::size_t(axis)]) continue;
            std::array<int, 3> box{};
            for (int a = 0; a < 3; ++a) box[std::size_t(a)] = side[std::size_t(a)] >> std::min(level, splits[std::size_t(a)]);
            const int len = box[std::size_t(axis)], half = len / 2;
            const std::size_t stride = st[std::size_t(axis)];
            std::array<int, 3> other = box;
            other[std::size_t(axis)] = 1;
            for (int k = 0; k < other[2]; ++k)
                for (int j = 0; j < other[1]; ++j)
                    for (int i = 0; i < other[0]; ++i) {
                        const std::size_t base = std::size_t(i) + std::size_t(j) * st[1] + std::size_t(k) * st[2];
                        for (int q = 0; q < len; ++q) line[std::size_t(q)] = tile[base + std::size_t(q) * stride];
                        for (int m = 0; m < half; ++m) {
                            std::complex<T>& a = tile[base + std::size_t(inverse ? 2 * m : m) * stride];
                            std::complex<T>& b = tile[base + std::size_t(inverse ? 2 * m + 1 : half + m) * stride];
                            const std::complex<T> u = line[std::size_t(inverse ? m : 2 * m)];
                            const std::complex<T> w = line[std::size_t(inverse ? half + m : 2 * m + 1)];
                            a = r * (u + w);  // analysis: low, high; synthesis: the pair from (low, high)
                            b = r * (u - w);
                        }
                    }
        }
    }

public:
    // ------------------------------------------------------------ sums and operators
    // True for the exact sums, false for the NUFFT; any other name is an error.
    static bool isDirect(const FourierMethod& m) {
        if (m.name == "direct") return true;
        if (m.name == "nufft") return false;
        throw InputError("the CPU backend has no Fourier method '" + m.name + "' (it has nufft and direct)");
    }

    void adjointSum(const Trajectory& t, const ComplexArray& c, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        HostVector<T> ct = toPrecision<T>(c), ot(g.points());
        if (isDirect(m))
            directAdjointSum<T>(t, ct.data(), g, ot.data(), progress);
        else
            NufftPlan<T>(t, g, SpreadKernel::forTolerance(m.tolerance, kNufftSigma)).adjoint(ct.data(), ot.data(), progress);
        fromPrecision(ot, out);
    }

    void forwardSum(const Trajectory& t, const ComplexArray& f, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        HostVector<T> ft = toPrecision<T>(f), ot(t.samples());
        if (isDirect(m))
            directForwardSum<T>(t, ft.data(), g, ot.data(), progress);
        else
            NufftPlan<T>(t, g, SpreadKernel::forTolerance(m.tolerance, kNufftSigma)).forward(ft.data(), ot.data(), progress);
        fromPrecision(ot, out);
    }

    LinearOperatorPtr fourierSums(const Trajectory& t, const SampleGrid& g, const FourierMethod& m) override {
        return std::make_shared<CpuFourierSums<T>>(*this, t, g, isDirect(m), m.tolerance);
    }

    std::shared_ptr<ToeplitzOperator> makeToeplitz(const Grid& g, const Trajectory& t, const std::vector<double>& phi2,
                                                   const FourierMethod& m, const Progress& progress) override {
        if (isDirect(m)) {
            ComplexArray c(phi2.begin(), phi2.end()), q;
            adjointSum(t, c, SampleGrid::differences(g), q, m, progress);
            return toeplitzFromQ(g, q);
        }
        return std::make_shared<CpuToeplitz<T>>(*this, g, toeplitzSpectrum<T>(t, phi2, g, SpreadKernel::forTolerance(m.tolerance, kNufftSigma), progress));
    }
    std::shared_ptr<ToeplitzOperator> toeplitzFromQ(const Grid& g, const ComplexArray& q) override {
        return std::make_shared<CpuToeplitz<T>>(*this, g, toeplitzSpectrumFromQ<T>(g, q));
    }

    void grid(const Trajectory& t, const ComplexArray& weighted, const Grid& g, const GriddingOptions& o,
              ComplexArray& image, const Progress& progress) override {
        HostVector<T> ct = toPrecision<T>(weighted), ot(g.voxels());
        NufftPlan<T>(t, SampleGrid::image(g), griddingKernel(o), o.deapodize).adjoint(ct.data(), ot.data(), progress);
        fromPrecision(ot, image);
    }

    std::vector<double> densityCompensation(const Trajectory& t, const Grid& g, const GriddingOptions& o, int iterations,
                                            const Progress& progress) override {
        const SpreadKernel kernel = griddingKernel(o);
        NufftPlan<double> plan(t, SampleGrid::image(g), kernel, false);
        plan.keepKernelWeights();  // 2 passes per iteration over the same kernel values
        const std::size_t M = t.samples();
        // Complex values on a complex grid, though the weights are real: a real grid of the same
        // points is half the size, and at 64^3 its free raised glibc's dynamic mmap threshold so far
        // that the gridding after it kept 20 % more memory (Session.MemoryEstimateBoundsTheMeasuredPeak).
        std::vector<cdouble> w(M, 1.0), cw(M), fine(plan.fineSize());
        for (int it = 0; it < iterations; ++it) {
            plan.spread(w.data(), fine.data(), progress);
            plan.interpolate(fine.data(), cw.data(), progress);
            for (std::size_t m = 0; m < M; ++m) w[m] = cw[m].real() > 0 ? w[m] / cw[m].real() : 0.0;
            progress.update(double(it + 1) / iterations);
        }
        // Pipe-Menon's fixed point makes sum w' C(k - k') = 1 with C the kernel's
        // autocorrelation in fine cells; (integral psi)^(2d) / sigma^d turns that
        // into k-space area per sample (cycles/FOV)^d, independent of the kernel.
        const double ipsi = kernel.integral();
        const double area = std::pow(ipsi * ipsi / kernel.sigma, g.dims);
        std::vector<double> out(M);
        for (std::size_t m = 0; m < M; ++m) out[m] = w[m].real() * area;
        return out;
    }

private:
    CpuSpace<T> ops_;
};

}  // namespace

std::unique_ptr<Backend> createCpuBackend(Precision p, int threads) {
    if (p == Precision::Single) return std::make_unique<CpuBackend<float>>(threads);
    return std::make_unique<CpuBackend<double>>(threads);
}

}  // namespace recon
