// The records' data term ||F x - d||^2 against a brute-force double sum where the cheap expanded
// form x^H Q x - 2 Re x^H F^H d + ||d||^2 cancels below its own accuracy: F the exact Fourier sums
// in float64, its normal the Toeplitz kernel with Q 1e-4 off (the accuracy of the session's Q on a
// GPU), d noiseless data from the same grid, so the fit is far better than Q's error. CG, ADMM and FISTA; the direct value costs one forward per record that needs it and
// nothing per iteration unless every record is asked to be exact (RunOptions::exact_data_term).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../test_support.hpp"
#include "recon/priors/priors.hpp"
#include "recon/solvers/admm.hpp"
#include "recon/solvers/data_term.hpp"
#include "recon/solvers/fista.hpp"
#include "recon/solvers/normal_cg.hpp"
#include "recon/solvers/runner.hpp"

using namespace recon;
using namespace recon::test;

namespace {

// A forward counter around an operator (its normal and adjoint passed through).
class CountingForward final : public LinearOperator {
public:
    explicit CountingForward(LinearOperatorPtr a) : LinearOperator(a->space(), a->inSize(), a->outSize(), a->name()), a_(std::move(a)) {}
    mutable int forwards = 0;

protected:
    void applyForward(const Vector& x, Vector& y) const override {
        ++forwards;
        a_->forward(x, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override { a_->adjoint(y, x); }
    void applyNormal(const Vector& x, Vector& y) const override { a_->normal(x, y); }

private:
    LinearOperatorPtr a_;
};

struct Problem {
    std::unique_ptr<Backend> b = createCpuBackend(Precision::Double);
    Grid g = Grid::make2D(16, 16);
    Trajectory t;
    ComplexArray d, fhd;
    double dn = 0;
    std::shared_ptr<CountingForward> f;
    std::shared_ptr<const Vector> data;

    Problem() {
        t = randomTrajectory(g, 400, 3);
        d = bruteForward(t, randomComplex(g.voxels(), 4), SampleGrid::image(g));  // noiseless: in F's range
        for (const cdouble& v : d) dn += std::norm(v);
        fhd = bruteAdjoint(t, d, SampleGrid::image(g));
        const std::vector<double> ones(t.samples(), 1.0);
        // Q 1e-4 too small (a NUFFT- and float32-accurate Q's error, as a scale: the worst case for
        // the expanded form, which then lies below 0 at the minimiser and is clamped).
        ComplexArray q = b->makeToeplitz(g, t, ones, {"nufft", 1e-6})->q();
        for (cdouble& v : q) v *= 1 - 1e-4;
        std::shared_ptr<const ToeplitzOperator> tk = b->toeplitzFromQ(g, q);
        f = std::make_shared<CountingForward>(fourierOperator(*b, t, g, ones, {"direct"}, tk));
        data = std::make_shared<const Vector>(b->fromHost(d));
    }
    // ||F x - d||^2 by the plain double sums.
    double brute(const ComplexArray& x) const {
        const ComplexArray fx = bruteForward(t, x, SampleGrid::image(g));
        double r = 0;
        for (std::size_t m = 0; m < fx.size(); ++m) r += std::norm(fx[m] - d[m]);
        return r;
    }
};

// Steps `plain` (expanded form only) and `direct` (d set) side by side: the same iterates, the cheap
// records alike, and every exact record of `direct` within 1 % of the brute-force value (the expanded form's bound), within
// 1e-6 where the expanded form is off by more than that; returns how many records the expanded form
// got wrong by more than 10 % (clamped to 0, or noise).
template <class Alg>
int compareRecords(const Problem& p, Alg& plain, Alg& direct, int steps, const char* what) {
    int wrong = 0;
    ComplexArray x, y;
    for (int it = 0; it <= steps; ++it) {
        if (it > 0) {
            EXPECT_TRUE(plain.step());
            EXPECT_TRUE(direct.step());
        }
        plain.image(x);
        direct.image(y);
        EXPECT_EQ(x, y) << what << " iteration " << it;  // the records change nothing of the solve
        const double truth = p.brute(y), expanded = plain.exactRecord().data_term, recorded = direct.exactRecord().data_term;
        EXPECT_EQ(direct.record().data_term, std::max(0.0, expanded)) << what << " iteration " << it;  // the cheap record's
        const double expanded_error = std::abs(expanded - truth) / truth;
        EXPECT_LE(std::abs(recorded - truth), 1e-2 * truth) << what << " iteration " << it << ": expanded " << expanded;
        if (expanded_error > 1e-2) EXPECT_LE(std::abs(recorded - truth), 1e-6 * truth) << what << " iteration " << it;
        if (expanded_error > 0.1) ++wrong;
        if (it == steps)
            std::printf("  %s after %d steps: ||F x - d||^2 / ||d||^2 = %.3g (brute force), expanded form %.3g, recorded %.3g\n",
                        what, steps, truth / p.dn, expanded / p.dn, recorded / p.dn);
    }
    return wrong;
}

}  // namespace

TEST(RecordsDataTerm, CgRecordsTheDirectValueWhereTheExpandedFormCancels) {
    Problem p;
    auto plain = std::make_unique<NormalEquationsCg>(std::vector<NormalTerm>{{"data", 1.0, p.f}}, p.b->fromHost(p.fhd), p.dn);
    auto direct = std::make_unique<NormalEquationsCg>(std::vector<NormalTerm>{{"data", 1.0, p.f}}, p.b->fromHost(p.fhd), p.dn);
    direct->setData(p.data);
    const int wrong = compareRecords(p, *plain, *direct, 40, "CG");
    EXPECT_GE(wrong, 5);  // the defect this guards against: the expanded form alone is wrong at the end
}

TEST(RecordsDataTerm, AdmmAndFistaRecordTheDirectValue) {
    Problem p;
    const double weight = 1e-7 * double(p.t.samples());  // a prior too weak to spoil the fit
    auto admm = [&] {
        auto a = std::make_unique<Admm>(p.f, p.b->fromHost(p.fhd), p.dn, std::vector<SparseTerm>{totalVariation(*p.b, p.g, weight)});
        return a;
    };
    auto plain_admm = admm(), direct_admm = admm();
    direct_admm->setData(p.data);
    EXPECT_GE(compareRecords(p, *plain_admm, *direct_admm, 60, "ADMM (TV)"), 5);

    FistaOptions fo;
    fo.lipschitz = estimateNormalNorm(*p.f);
    fo.shifts = WaveletShifts::Fixed;
    auto fista = [&] {
        return std::make_unique<Fista>(p.f, p.b->fromHost(p.fhd), p.dn, waveletSparsity(*p.b, p.g, weight, WaveletKind::Haar), fo);
    };
    auto plain_fista = fista(), direct_fista = fista();
    direct_fista->setData(p.data);
    EXPECT_GE(compareRecords(p, *plain_fista, *direct_fista, 150, "FISTA (Haar)"), 5);
}

// The direct value is charged to the exact records that need it: none at the start (the expanded
// form is ||d||^2 there); one forward for the last record alone where costs are recorded, none
// without them (nobody reads that data term: `recon --quiet` writing an image), and d is not made
// until then; every record only when asked.
TEST(RecordsDataTerm, DirectValueOnlyForTheRecordsThatNeedIt) {
    Problem p;
    Monitor quiet;
    RunOptions o;
    o.iterations = 40;
    for (bool costs : {false, true}) {
        NormalEquationsCg cg({{"data", 1.0, p.f}}, p.b->fromHost(p.fhd), p.dn);
        int made = 0;
        cg.setData(DataSource([&] {
            ++made;
            return p.data;
        }));
        EXPECT_EQ(cg.exactRecord().data_term, p.dn);
        EXPECT_EQ(p.f->forwards, 0);
        EXPECT_EQ(made, 0);
        o.record_costs = costs;
        const RunResult r = runIterations(cg, o, quiet);
        EXPECT_EQ(p.f->forwards, costs ? 1 : 0) << "record_costs " << costs;
        EXPECT_EQ(made, costs ? 1 : 0) << "record_costs " << costs;
        const double truth = p.brute(r.image);
        if (costs) {
            EXPECT_NEAR(r.history.back().data_term, truth, 1e-6 * truth);
            EXPECT_EQ(r.history[r.history.size() - 2].data_term, 0.0);  // cheap and clamped before the last
        } else {
            EXPECT_EQ(r.history.back().data_term, 0.0);  // the cheap form, clamped: this fit is below its accuracy
        }
        p.f->forwards = 0;
    }
    // Every record exact: one forward per record past the expanded form's accuracy, no more. It is
    // kept above 1e-2 (|x^H Q x| + 2 |x^H F^H d| + ||d||^2), between 1e-2 and about 4e-2 ||d||^2
    // here (x^H Q x ~ Re x^H F^H d ~ ||d||^2 once the fit is good).
    NormalEquationsCg every({{"data", 1.0, p.f}}, p.b->fromHost(p.fhd), p.dn);
    every.setData(p.data);
    o.exact_data_term = true;
    const RunResult all = runIterations(every, o, quiet);
    int below_1 = 0, below_5 = 0;
    for (const IterationRecord& rec : all.history) {
        below_1 += rec.data_term < 1e-2 * p.dn ? 1 : 0;
        below_5 += rec.data_term < 5e-2 * p.dn ? 1 : 0;
    }
    EXPECT_GT(below_1, 10);
    EXPECT_GE(p.f->forwards, below_1);
    EXPECT_LE(p.f->forwards, below_5);
    EXPECT_LT(p.f->forwards, o.iterations);
}

TEST(RecordsDataTerm, DataOfTheWrongSizeIsRefused) {
    Problem p;
    NormalEquationsCg cg({{"data", 1.0, p.f}}, p.b->fromHost(p.fhd), p.dn);
    EXPECT_THROW(cg.setData(std::make_shared<const Vector>(p.b->make(p.t.samples() + 1))), InputError);
    DataTerm expanded_only(p.f, p.dn);
    EXPECT_THROW(expanded_only.direct(p.b->make(p.g.voxels())), InputError);
}
