// The operator layer on the CPU backend: adjoint identities and normals of every
// combinator against their definitions, shape errors named at construction, and
// an operator written outside the engine solved against a dense float64 solve.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>

#include "operator_checks.hpp"
#include "recon/operators/regularizer.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// <A x, y> = <x, A^H y> and A^H A x = A^H (A x), on random vectors.
void checkAdjointAndNormal(const LinearOperator& a, double tol) {
    const ComplexArray x = randomComplex(a.inSize(), 1), y = randomComplex(a.outSize(), 2);
    const ComplexArray ax = applyForward(a, x), ahy = applyAdjoint(a, y);
    const cdouble lhs = inner(y, ax), rhs = inner(ahy, x);
    EXPECT_LT(std::abs(lhs - rhs), tol * std::abs(lhs)) << a.name();
    EXPECT_LT(relativeError(applyNormal(a, x), applyAdjoint(a, ax)), tol) << a.name();
}

struct Fixture {
    std::unique_ptr<Backend> backend = createCpuBackend(Precision::Double);
    Grid g = Grid::make3D(6, 5, 4);
    Trajectory t = randomTrajectory(g, 150, 7);
    std::vector<double> phi = std::vector<double>(t.samples(), 0.8);
    LinearOperatorPtr fourier() {
        std::vector<double> phi2(phi.size(), 0.64);
        return fourierOperator(*backend, t, g, phi, {"direct"}, backend->makeToeplitz(g, t, phi2, {"direct"}));
    }
};

TEST(LinearOperator, EveryCombinatorIsConsistentWithItsAdjoint) {
    Fixture f;
    Backend& b = *f.backend;
    const std::size_t n = f.g.voxels();
    const Regularizer fd = makeRegularizer(RegularizerKind::FiniteDifference, f.g);
    auto w = sparseMatrix(b, fd.w, &fd.normal, "W");
    auto d = diagonal(b, randomComplex(n, 3), "d");
    auto blur = std::make_shared<FlatBlur>(b, n);
    checkAdjointAndNormal(*f.fourier(), 1e-9);  // normal through the Toeplitz embedding
    checkAdjointAndNormal(*w, 1e-12);            // normal through W^T W
    checkAdjointAndNormal(*d, 1e-12);
    checkAdjointAndNormal(*blur, 1e-12);
    checkAdjointAndNormal(*compose(f.fourier(), d), 1e-9);
    checkAdjointAndNormal(*sum(d, blur), 1e-12);
    checkAdjointAndNormal(*scaled(cdouble(0.3, -2.0), w), 1e-12);
    checkAdjointAndNormal(*vstack({f.fourier(), scaled(std::sqrt(0.7), w), identity(b, n)}), 1e-9);
    checkAdjointAndNormal(*compose(vstack({d, blur}), sum(identity(b, n), blur)), 1e-12);
}

// dotPairs: a_k^H b_k for every pair, more pairs than one pass takes, in both precisions;
// mismatched lengths are an error.
TEST(VectorSpace, DotPairsIsOneInnerProductPerPair) {
    for (auto p : {Precision::Single, Precision::Double}) {
        auto b = createCpuBackend(p);
        const std::size_t n = 5003;
        std::vector<ComplexArray> host;
        std::vector<Vector> v;
        for (unsigned i = 0; i < 4; ++i) {
            host.push_back(randomComplex(n, 20 + i));
            v.push_back(b->fromHost(host.back()));
        }
        std::vector<VectorSpace::VectorPair> pairs;
        std::vector<cdouble> expected;
        for (int k = 0; k < 11; ++k) {
            const int i = k % 4, j = (3 * k + 1) % 4;
            pairs.push_back({&v[i], &v[j]});
            expected.push_back(inner(host[i], host[j]));
        }
        const std::vector<cdouble> got = b->dotPairs(pairs);
        ASSERT_EQ(got.size(), expected.size());
        const double tol = p == Precision::Single ? 1e-6 : 1e-12;
        for (std::size_t k = 0; k < got.size(); ++k)
            EXPECT_LT(std::abs(got[k] - expected[k]), tol * double(n)) << k << " " << toString(p);
        EXPECT_TRUE(b->dotPairs({}).empty());
        Vector shorter = b->make(n - 1);
        EXPECT_THROW(b->dotPairs({{&v[0], &v[1]}, {&v[0], &shorter}}), InputError);
    }
}

TEST(LinearOperator, StackIsTheBlocksOneAfterAnother) {
    Fixture f;
    Backend& b = *f.backend;
    const std::size_t n = f.g.voxels();
    auto d = diagonal(b, randomComplex(n, 4), "d");
    auto blur = std::make_shared<FlatBlur>(b, n);
    const ComplexArray x = randomComplex(n, 5);
    const ComplexArray stacked = applyForward(*vstack({d, blur}), x);
    ASSERT_EQ(stacked.size(), 2 * n);
    const ComplexArray dx = applyForward(*d, x), bx = applyForward(*blur, x);
    EXPECT_LT(relativeError(ComplexArray(stacked.begin(), stacked.begin() + std::ptrdiff_t(n)), dx), 1e-15);
    EXPECT_LT(relativeError(ComplexArray(stacked.begin() + std::ptrdiff_t(n), stacked.end()), bx), 1e-15);
}

TEST(LinearOperator, ShapesAreCheckedWithNames) {
    Fixture f;
    Backend& b = *f.backend;
    auto fourier = f.fourier();
    auto small = identity(b, 7);
    try {
        compose(fourier, small);
        FAIL() << "composition of mismatched shapes accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("identity gives 7 values"), std::string::npos) << e.what();
    }
    EXPECT_THROW(sum(fourier, small), InputError);
    EXPECT_THROW(vstack({small, fourier}), InputError);
    EXPECT_THROW(withNormal(fourier, small), InputError);
    EXPECT_THROW(vstack({}), InputError);
    EXPECT_THROW(compose(nullptr, small), InputError);
    EXPECT_THROW(applyForward(*fourier, ComplexArray(3)), InputError);
    // A vector of another backend is refused, not misread.
    auto other = createCpuBackend(Precision::Single);
    Vector foreign = other->make(f.g.voxels()), out = b.make(f.t.samples());
    EXPECT_THROW(fourier->forward(foreign, out), InputError);
}

TEST(LinearOperator, CustomOperatorComposedWithFourierSolvesLikeDenseFloat64) {
    auto b = createCpuBackend(Precision::Double);
    checkCustomOperatorSolve(*b, 1e-7);
}

TEST(LinearOperator, CustomOperatorComposedWithFourierSolvesLikeDenseFloat32) {
    auto b = createCpuBackend(Precision::Single);
    checkCustomOperatorSolve(*b, 2e-3);
}

// ------------------------------------------------------------------ the runner

class CountingMonitor final : public Monitor {
public:
    explicit CountingMonitor(std::atomic<bool>* cancel = nullptr, int cancel_after = -1)
        : Monitor(cancel), cancel_(cancel), cancel_after_(cancel_after) {}
    void iteration(int, const IterationRecord& r, const ComplexArray* snapshot) override {
        ++iterations;
        if (snapshot) ++snapshots;
        last = r;
        if (cancel_ && iterations == cancel_after_) cancel_->store(true);
    }
    int iterations = 0, snapshots = 0;
    IterationRecord last;

private:
    std::atomic<bool>* cancel_;
    int cancel_after_;
};

std::unique_ptr<NormalEquationsCg> smallSolve(Backend& b, const ComplexArray& rhs) {
    const std::size_t n = rhs.size();
    return std::make_unique<NormalEquationsCg>(
        std::vector<NormalTerm>{{"data", 1.0, std::make_shared<FlatBlur>(b, n)}, {"tikhonov", 0.1, identity(b, n)}},
        b.fromHost(rhs), 1.0);
}

TEST(Runner, SnapshotsEveryKAndAtTheEnd) {
    auto b = createCpuBackend(Precision::Double);
    auto cg = smallSolve(*b, randomComplex(40, 1));
    CountingMonitor m;
    RunOptions o;
    o.iterations = 12;
    o.snapshot_every = 5;
    const RunResult r = runIterations(*cg, o, m);
    EXPECT_EQ(m.iterations, 12);
    EXPECT_EQ(m.snapshots, 3);  // 5, 10, 12
    EXPECT_EQ(r.history.size(), 12u);
    EXPECT_EQ(r.reason, StopReason::Budget);
    ComplexArray now;
    cg->image(now);
    EXPECT_EQ(r.image, now);
}

TEST(Runner, CancelKeepsTheLastCompleteIterate) {
    auto b = createCpuBackend(Precision::Double);
    auto cg = smallSolve(*b, randomComplex(40, 2));
    std::atomic<bool> cancel{false};
    CountingMonitor m(&cancel, 4);
    RunOptions o;
    o.iterations = 30;
    o.snapshot_every = 0;
    const RunResult r = runIterations(*cg, o, m);
    EXPECT_TRUE(r.cancelled());
    EXPECT_EQ(r.history.size(), 4u);
    EXPECT_EQ(cg->record().iteration, 4);
    ComplexArray now;
    cg->image(now);
    EXPECT_EQ(r.image, now);
}

// record_costs false: the same iterates and residuals, the records before the last without the
// cost terms, the last (the budget's end, a cancel) the whole record as with costs.
TEST(Runner, WithoutCostsOnlyTheLastRecordHasThem) {
    auto b = createCpuBackend(Precision::Double);
    const ComplexArray rhs = randomComplex(40, 6);
    RunOptions o;
    o.iterations = 12;
    Monitor quiet;
    auto with = smallSolve(*b, rhs), without = smallSolve(*b, rhs);
    const RunResult a = runIterations(*with, o, quiet);
    o.record_costs = false;
    const RunResult r = runIterations(*without, o, quiet);
    EXPECT_EQ(r.image, a.image);
    ASSERT_EQ(r.history.size(), a.history.size());
    for (std::size_t i = 0; i < r.history.size(); ++i) {
        EXPECT_EQ(r.history[i].iteration, a.history[i].iteration);
        EXPECT_EQ(r.history[i].residual, a.history[i].residual) << "iteration " << i + 1;
        EXPECT_GT(a.history[i].data_term + a.history[i].penalty_term, 0.0);
        if (i + 1 < r.history.size()) EXPECT_EQ(r.history[i].cost(), 0.0) << "iteration " << i + 1;
    }
    EXPECT_EQ(r.history.back().data_term, a.history.back().data_term);
    EXPECT_EQ(r.history.back().penalty_term, a.history.back().penalty_term);
    // Cancelled after 4 of 30: the 4th record is whole.
    auto cancelled = smallSolve(*b, rhs);
    std::atomic<bool> cancel{false};
    CountingMonitor m(&cancel, 4);
    o.iterations = 30;
    const RunResult c = runIterations(*cancelled, o, m);
    ASSERT_EQ(c.history.size(), 4u);
    EXPECT_EQ(c.history.back().data_term, a.history[3].data_term);
    EXPECT_EQ(c.history.back().penalty_term, a.history[3].penalty_term);
    EXPECT_GT(c.history.back().seconds, 0.0);
}

TEST(Runner, StopsAtTheToleranceAndSaysSo) {
    auto b = createCpuBackend(Precision::Double);
    auto cg = smallSolve(*b, randomComplex(30, 3));
    Monitor quiet;
    RunOptions o;
    o.iterations = 500;
    o.tolerance = 1e-8;
    const RunResult r = runIterations(*cg, o, quiet);
    EXPECT_EQ(r.reason, StopReason::Converged);
    EXPECT_LT(r.history.back().residual, 1e-8);
    EXPECT_LT(r.history.size(), 500u);
}

TEST(Runner, NonFiniteNumbersAreAnErrorNotConvergence) {
    auto b = createCpuBackend(Precision::Single);
    ComplexArray rhs = randomComplex(30, 4);
    rhs[7] = cdouble(3e38, 3e38);  // ||b||^2 overflows float32 arithmetic
    Monitor quiet;
    RunOptions o;
    o.iterations = 5;
    auto huge = smallSolve(*b, rhs);
    EXPECT_THROW(runIterations(*huge, o, quiet), NumericalError);
    rhs[7] = cdouble(std::numeric_limits<double>::quiet_NaN(), 0);
    auto nan = smallSolve(*b, rhs);
    EXPECT_THROW(runIterations(*nan, o, quiet), NumericalError);
}

TEST(NormalEquationsCg, WeightChangeKeepsTheIterateAndMatchesAColdSolve) {
    auto b = createCpuBackend(Precision::Double);
    const ComplexArray rhs = randomComplex(50, 5);
    auto warm = smallSolve(*b, rhs);
    Monitor quiet;
    RunOptions o;
    o.iterations = 200;
    o.tolerance = 1e-12;
    runIterations(*warm, o, quiet);
    warm->setWeight(1, 0.13);  // restarts from the current iterate, rebuilds nothing
    EXPECT_EQ(warm->record().iteration, 0);
    EXPECT_LT(warm->record().residual, 0.5);  // it starts near the new solution; a cold start starts at 1
    const RunResult a = runIterations(*warm, o, quiet);
    auto cold = smallSolve(*b, rhs);
    cold->setWeight(1, 0.13);
    const RunResult c = runIterations(*cold, o, quiet);
    EXPECT_EQ(c.history.front().iteration, 1);
    EXPECT_LT(relativeError(a.image, c.image), 1e-9);
}

// The CPU backend's elementwise product (SENSE's map products) against the complex product in
// float64, both precisions, with and without the conjugate, short and past the threaded length,
// with the output in place of either input.
TEST(VectorSpace, MultiplyIsTheElementwiseComplexProduct) {
    for (Precision p : {Precision::Double, Precision::Single})
        for (std::size_t n : {std::size_t(7), std::size_t(70001)}) {
            auto b = createCpuBackend(p);
            const ComplexArray d = randomComplex(n, 31), x = randomComplex(n, 32);
            const double tol = p == Precision::Double ? 1e-15 : 1e-6;
            for (bool conjugate : {false, true}) {
                ComplexArray expected(n);
                for (std::size_t i = 0; i < n; ++i) expected[i] = (conjugate ? std::conj(d[i]) : d[i]) * x[i];
                const Vector dv = b->fromHost(d);
                Vector xv = b->fromHost(x), yv = b->make(n);
                b->multiply(dv, xv, yv, conjugate);
                EXPECT_LT(relativeError(b->toHost(yv), expected), tol) << n << (conjugate ? " conj" : "");
                b->multiply(dv, xv, xv, conjugate);  // in place of x
                EXPECT_LT(relativeError(b->toHost(xv), expected), tol) << n << " in place of x";
                Vector dv2 = b->fromHost(d);
                b->multiply(dv2, b->fromHost(x), dv2, conjugate);  // in place of d
                const ComplexArray y = b->toHost(dv2);
                EXPECT_LT(relativeError(y, expected), tol) << n << " in place of d";
            }
        }
}

}  // namespace
