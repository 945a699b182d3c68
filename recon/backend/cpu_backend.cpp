// The CPU backend: the trusted reference and the fallback. OpenMP threads,
// FFTW, float32 (the paper's CPU.SP) or float64 (CPU.DP).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "recon/backend/backend.hpp"
#include "recon/backend/solver_record.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/nufft.hpp"
#include "recon/nufft/spread_kernel.hpp"
#include "recon/operators/direct_sums.hpp"
#include "recon/solvers/cg.hpp"

namespace recon {
namespace {

template <class T>
using HostVector = std::vector<std::complex<T>>;

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

// Vector operations for the generic CG on host memory (real scalars only, so
// no complex multiplies: the loops vectorise).
template <class T>
struct CpuSpace {
    using Vector = HostVector<T>;
    Vector make(std::size_t n) const { return Vector(n); }
    void copy(const Vector& a, Vector& b) const { b = a; }
    void zero(Vector& a) const { std::fill(a.begin(), a.end(), std::complex<T>(0)); }
    std::complex<double> dot(const Vector& a, const Vector& b) const {
        const T* pa = reinterpret_cast<const T*>(a.data());
        const T* pb = reinterpret_cast<const T*>(b.data());
        double re = 0, im = 0;
        const std::int64_t n = std::int64_t(a.size());
#pragma omp parallel for reduction(+ : re, im) schedule(static) if (n > kParallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) {
            re += double(pa[2 * i]) * pb[2 * i] + double(pa[2 * i + 1]) * pb[2 * i + 1];
            im += double(pa[2 * i]) * pb[2 * i + 1] - double(pa[2 * i + 1]) * pb[2 * i];
        }
        return {re, im};
    }
    // a^H b_k for several b in one pass over a.
    std::vector<std::complex<double>> dots(const Vector& a, const std::vector<const Vector*>& bs) const {
        constexpr int kMax = 8;
        std::vector<std::complex<double>> out;
        for (std::size_t first = 0; first < bs.size(); first += kMax) {
            const int k = int(std::min<std::size_t>(kMax, bs.size() - first));
            const T* pb[kMax] = {};
            for (int j = 0; j < k; ++j) pb[j] = reinterpret_cast<const T*>(bs[first + j]->data());
            const T* pa = reinterpret_cast<const T*>(a.data());
            double acc[2 * kMax] = {};
            const std::int64_t n = std::int64_t(a.size());
#pragma omp parallel for reduction(+ : acc[:2 * kMax]) schedule(static) if (n > kParallelThreshold)
            for (std::int64_t i = 0; i < n; ++i) {
                const double ar = pa[2 * i], ai = pa[2 * i + 1];
                for (int j = 0; j < k; ++j) {
                    acc[2 * j] += ar * pb[j][2 * i] + ai * pb[j][2 * i + 1];
                    acc[2 * j + 1] += ar * pb[j][2 * i + 1] - ai * pb[j][2 * i];
                }
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

// Index of voxel-difference d (in [-N, N)) on the circular 2N grid, per axis.
inline int circularIndex(int d, int n2) { return d < 0 ? d + n2 : d; }

template <class T>
class CpuToeplitz final : public ToeplitzKernel {
public:
    CpuToeplitz(const Grid& g, const HostVector<T>& q) : grid_(g), big_(g.doubled()) {
        fwd_ = std::make_unique<FftPlan<T>>(big_.n, g.dims, FftDirection::Forward);
        bwd_ = std::make_unique<FftPlan<T>>(big_.n, g.dims, FftDirection::Backward);
        // Q is stored on the 2N grid with difference d = j - N at index j; the
        // circular kernel wants d at index d mod 2N: an fftshift per axis.
        spectrum_.resize(big_.voxels());
        for (int z = 0; z < big_.n[2]; ++z)
            for (int y = 0; y < big_.n[1]; ++y)
                for (int x = 0; x < big_.n[0]; ++x) {
                    int cx = circularIndex(x - g.n[0], big_.n[0]);
                    int cy = circularIndex(y - g.n[1], big_.n[1]);
                    int cz = g.dims == 3 ? circularIndex(z - g.n[2], big_.n[2]) : 0;
                    spectrum_[big_.index(cx, cy, cz)] = q[big_.index(x, y, z)];
                }
        fwd_->execute(spectrum_.data());
        const T scale = T(1.0 / double(big_.voxels()));  // the inverse FFT's normalisation, folded in once
        for (auto& v : spectrum_) v *= scale;
    }

    const Grid& grid() const override { return grid_; }

    void applyT(const std::complex<T>* x, std::complex<T>* y) const {
        HostVector<T> work(big_.voxels());
        const Grid& g = grid_;
#pragma omp parallel for schedule(static)
        for (int z = 0; z < g.n[2]; ++z)
            for (int yy = 0; yy < g.n[1]; ++yy)
                std::memcpy(static_cast<void*>(&work[big_.index(0, yy, z)]), &x[g.index(0, yy, z)], sizeof(std::complex<T>) * g.n[0]);
        fwd_->execute(work.data());
        const std::int64_t n = std::int64_t(work.size());
        T* pw = reinterpret_cast<T*>(work.data());
        const T* ps = reinterpret_cast<const T*>(spectrum_.data());
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
            T a = pw[2 * i], b = pw[2 * i + 1], c = ps[2 * i], d = ps[2 * i + 1];
            pw[2 * i] = a * c - b * d;
            pw[2 * i + 1] = a * d + b * c;
        }
        bwd_->execute(work.data());
#pragma omp parallel for schedule(static)
        for (int z = 0; z < g.n[2]; ++z)
            for (int yy = 0; yy < g.n[1]; ++yy)
                std::memcpy(static_cast<void*>(&y[g.index(0, yy, z)]), &work[big_.index(0, yy, z)], sizeof(std::complex<T>) * g.n[0]);
    }

    void apply(const ComplexArray& x, ComplexArray& y) const override {
        HostVector<T> xt = toPrecision<T>(x), yt(x.size());
        applyT(xt.data(), yt.data());
        fromPrecision(yt, y);
    }

    ComplexArray q() const override {
        HostVector<T> s = spectrum_;
        bwd_->execute(s.data());  // spectrum_ already carries 1/size
        ComplexArray out(big_.voxels());
        const Grid& g = grid_;
        for (int z = 0; z < big_.n[2]; ++z)
            for (int y = 0; y < big_.n[1]; ++y)
                for (int x = 0; x < big_.n[0]; ++x) {
                    int cx = circularIndex(x - g.n[0], big_.n[0]);
                    int cy = circularIndex(y - g.n[1], big_.n[1]);
                    int cz = g.dims == 3 ? circularIndex(z - g.n[2], big_.n[2]) : 0;
                    out[big_.index(x, y, z)] = cdouble(s[big_.index(cx, cy, cz)]);
                }
        return out;
    }

private:
    Grid grid_, big_;
    HostVector<T> spectrum_;
    std::unique_ptr<FftPlan<T>> fwd_, bwd_;
};

template <class T>
class CpuSolver final : public IterativeSolver {
public:
    using Space = CpuSpace<T>;
    using Cg = ConjugateGradient<Space>;

    CpuSolver(const SolverSetup& s, std::shared_ptr<const CpuToeplitz<T>> toeplitz)
        : toeplitz_(std::move(toeplitz)), reg_(s.regularizer), n_(toeplitz_->grid().voxels()),
          lambda_scale_(s.lambda_scale) {
        ctx_.data_norm2 = s.data_norm2;
        ctx_.penalty_weight = s.lambda * s.lambda_scale;
        ctx_.voxels = n_;
        std::vector<typename Cg::Term> terms;
        terms.push_back({"data", 1.0, [this](const HostVector<T>& in, HostVector<T>& out) { toeplitz_->applyT(in.data(), out.data()); }});
        if (reg_) {
            terms.push_back({"penalty", ctx_.penalty_weight, [this](const HostVector<T>& in, HostVector<T>& out) {
                                 reg_->normal.multiply(in.data(), out.data());
                             }});
        }
        HostVector<T> b;
        if (const auto* host = dynamic_cast<const HostArray*>(s.rhs.get())) {
            b = toPrecision<T>(host->values());
        } else {
            ComplexArray values;
            s.rhs->toHost(values);
            b = toPrecision<T>(values);
        }
        cg_ = std::make_unique<Cg>(space_, std::move(terms), b, n_);
        if (s.truth) {
            ctx_.has_truth = true;
            ctx_.truth = truthStats(*s.truth);
            cg_->setReference(toPrecision<T>(*s.truth));
        }
        if (s.initial) cg_->setInitial(toPrecision<T>(*s.initial));
    }

    bool step() override { return cg_->step(); }
    IterationRecord record() const override { return makeIterationRecord(cg_->stats(), ctx_); }
    void image(ComplexArray& out) const override { fromPrecision(cg_->solution(), out); }
    void setLambda(double lambda) override {
        ctx_.penalty_weight = lambda * lambda_scale_;
        if (reg_) cg_->setWeight(1, ctx_.penalty_weight);
    }

private:
    Space space_;
    std::shared_ptr<const CpuToeplitz<T>> toeplitz_;
    std::shared_ptr<const Regularizer> reg_;
    std::size_t n_;
    double lambda_scale_;
    RecordContext ctx_;
    std::unique_ptr<Cg> cg_;
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
        return i;
    }

    std::vector<MethodInfo> methods() const override {
        return {{"nufft", "NUFFT: exp-semicircle spreading on a 2x grid + FFTW, accuracy set by the tolerance", false},
                {"direct", "exact sums (the paper's loops), separable phases, OpenMP", true}};
    }
    std::string defaultMethod() const override { return "nufft"; }

    // True for the exact sums, false for the NUFFT; any other name is an error.
    static bool isDirect(const FourierMethod& m) {
        if (m.name == "direct") return true;
        if (m.name == "nufft") return false;
        throw Error("the CPU backend has no Fourier method '" + m.name + "' (it has nufft and direct)");
    }

    void adjointSum(const Trajectory& t, const ComplexArray& c, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        HostVector<T> ct = toPrecision<T>(c), ot(g.points());
        if (isDirect(m))
            directAdjointSum<T>(t, ct.data(), g, ot.data(), progress);
        else
            NufftPlan<T>(t, g, SpreadKernel::forTolerance(m.tolerance)).adjoint(ct.data(), ot.data(), progress);
        fromPrecision(ot, out);
    }

    void forwardSum(const Trajectory& t, const ComplexArray& f, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        HostVector<T> ft = toPrecision<T>(f), ot(t.samples());
        if (isDirect(m))
            directForwardSum<T>(t, ft.data(), g, ot.data(), progress);
        else
            NufftPlan<T>(t, g, SpreadKernel::forTolerance(m.tolerance)).forward(ft.data(), ot.data(), progress);
        fromPrecision(ot, out);
    }

    std::shared_ptr<ToeplitzKernel> makeToeplitz(const Grid& g, const Trajectory& t, const std::vector<double>& phi2,
                                                 const FourierMethod& m, const Progress& progress) override {
        ComplexArray c(phi2.begin(), phi2.end()), q;
        adjointSum(t, c, SampleGrid::differences(g), q, m, progress);
        return std::make_shared<CpuToeplitz<T>>(g, toPrecision<T>(q));
    }

    std::unique_ptr<IterativeSolver> makeSolver(const SolverSetup& s) override {
        auto tk = std::dynamic_pointer_cast<const CpuToeplitz<T>>(s.toeplitz);
        if (!tk) {
            // A kernel from another backend or precision: rebuild ours from its Q.
            const Grid& g = s.toeplitz->grid();
            tk = std::make_shared<CpuToeplitz<T>>(g, toPrecision<T>(s.toeplitz->q()));
        }
        if (!s.rhs || s.rhs->size() != tk->grid().voxels()) throw InputError("solver: F^H d does not match the grid");
        return std::make_unique<CpuSolver<T>>(s, tk);
    }

    void grid(const Trajectory& t, const ComplexArray& weighted, const Grid& g, const GriddingOptions& o,
              ComplexArray& image, const Progress& progress) override {
        HostVector<T> ct = toPrecision<T>(weighted), ot(g.voxels());
        NufftPlan<T>(t, SampleGrid::image(g), SpreadKernel::fromOptions(o), o.deapodize).adjoint(ct.data(), ot.data(), progress);
        fromPrecision(ot, image);
    }

    std::vector<double> densityCompensation(const Trajectory& t, const Grid& g, const GriddingOptions& o, int iterations,
                                            const Progress& progress) override {
        const SpreadKernel kernel = SpreadKernel::fromOptions(o);
        NufftPlan<double> plan(t, SampleGrid::image(g), kernel, false);
        const std::size_t M = t.samples();
        std::vector<cdouble> w(M, 1.0), cw(M), fine(plan.fineSize());
        for (int it = 0; it < iterations; ++it) {
            plan.spread(w.data(), fine.data());
            plan.interpolate(fine.data(), cw.data());
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
};

}  // namespace

std::unique_ptr<Backend> createCpuBackend(Precision p, int threads) {
    if (p == Precision::Single) return std::make_unique<CpuBackend<float>>(threads);
    return std::make_unique<CpuBackend<double>>(threads);
}

}  // namespace recon
