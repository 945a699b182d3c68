// The reconstruction session end to end on a small 2D case.
#include <gtest/gtest.h>
#include <malloc.h>

#include <fstream>

#include "../../support/sanitizer.hpp"
#include "../test_support.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/trajectory/trajectories.hpp"

using namespace recon;
using namespace recon::test;

namespace {

std::shared_ptr<Dataset> smallCase() { return simulate(demoCase("small-2d")); }

}  // namespace

TEST(Session, IterativeBeatsGriddingOnTheSmall2DCase) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    auto d = smallCase();
    s.setDataset(d);
    const Quality tri = measureQuality(s.gridTrilinear().image, d->truth, true);
    const Quality kb = measureQuality(s.gridKaiserBessel().image, d->truth, true);
    SolveOptions o;
    o.iterations = 40;
    o.lambda = demoCase("small-2d").lambda;
    std::vector<IterationRecord> seen;
    int snapshots = 0;
    SolveResult r = s.solve(o, [&](int, const IterationRecord& rec, const ComplexArray* snap) {
        seen.push_back(rec);
        snapshots += snap != nullptr;
    });
    const Quality it = measureQuality(r.image, d->truth, false);
    EXPECT_GT(it.psnr_db, tri.psnr_db + 3) << "iterative " << it.psnr_db << " trilinear " << tri.psnr_db;
    EXPECT_GT(it.psnr_db, kb.psnr_db) << "iterative " << it.psnr_db << " KB " << kb.psnr_db;
    ASSERT_EQ(seen.size(), 40u);
    EXPECT_EQ(snapshots, 40 / o.snapshot_every);
    // The solver's own readout agrees with measuring the final image.
    EXPECT_NEAR(seen.back().psnr_db, it.psnr_db, 0.01);
    EXPECT_LT(seen.back().residual, seen.front().residual);
    // The cost falls (CG minimises it monotonically) in CG's own expanded form; the last record's data
    // term is exact (the direct ||F x - d||^2 where the expanded form is below its accuracy,
    // recon/solvers/data_term.hpp), another evaluation of the same value: within 1 % there.
    for (std::size_t i = 1; i + 1 < seen.size(); ++i) EXPECT_LE(seen[i].cost(), seen[i - 1].cost() * (1 + 1e-5));
    EXPECT_LE(seen.back().cost(), seen[seen.size() - 2].cost() * (1 + 1e-2));
}

TEST(Session, LambdaScaleIsQZeroAndCachesAreReused) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallCase();
    s.setDataset(d);
    double sum = 0;
    for (std::size_t m = 0; m < d->samples(); ++m) {
        double p = basisTransform(d->basis, d->grid, d->trajectory.kx(m), d->trajectory.ky(m), 0);
        sum += p * p;
    }
    EXPECT_NEAR(s.lambdaScale(), sum, 1e-9 * sum);
    auto q1 = s.toeplitz({"nufft", 1e-6});
    auto q2 = s.toeplitz({"nufft", 1e-6});
    EXPECT_EQ(q1.get(), q2.get());
    // Q(0) on the 2N grid equals s.
    const ComplexArray q = q1->q();
    const Grid big = d->grid.doubled();
    EXPECT_NEAR(q[big.index(d->grid.n[0], d->grid.n[1], 0)].real(), sum, 1e-5 * sum);
    EXPECT_NE(s.cacheStatus().find("Q"), std::string::npos);
}

// The session's penalty operators (fd and anatomical matrix-free, Tikhonov a sparse identity)
// apply makeRegularizer's W^T W with the data set's reference and the options' edge rule.
TEST(Session, PenaltyOperatorsApplyTheRegularizersNormalMatrix) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallCase();
    ASSERT_TRUE(d->hasReference());
    s.setDataset(d);
    const ComplexArray x = randomComplex(d->grid.voxels(), 31);
    for (RegularizerKind kind : {RegularizerKind::FiniteDifference, RegularizerKind::AnatomicalFiniteDifference,
                                 RegularizerKind::Tikhonov}) {
        SolveOptions o;
        o.regularizer = kind;
        o.anatomical.edge_weight = 0.2;
        const LinearOperatorPtr w = s.regularizerOperator(o);
        EXPECT_EQ(w.get(), s.regularizerOperator(o).get()) << toString(kind);  // cached
        const Regularizer csr = makeRegularizer(kind, d->grid, &d->reference, o.anatomical);
        ComplexArray expect(x.size());
        csr.normal.multiply(x.data(), expect.data());
        EXPECT_LT(relativeError(applyNormal(*w, x), expect), 1e-13) << toString(kind);
    }
}

TEST(Session, CancelKeepsTheLastCompleteIterate) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(smallCase());
    std::atomic<bool> cancel{false};
    SolveOptions o;
    o.iterations = 50;
    SolveResult r = s.solve(o, [&](int, const IterationRecord& rec, const ComplexArray*) {
        if (rec.iteration == 3) cancel = true;
    }, &cancel);
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(r.history.size(), 3u);
    EXPECT_EQ(r.image.size(), s.dataset().grid.voxels());
}

TEST(Session, CancelDuringQThrowsCancelledAndLeavesNoHalfCache) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(smallCase());
    std::atomic<bool> cancel{true};
    SolveOptions o;
    o.method = {"direct", 0};
    EXPECT_THROW(s.solve(o, {}, &cancel), Cancelled);
    EXPECT_EQ(s.cacheStatus(), "nothing cached");
}

TEST(Session, WarmStartAfterLambdaChangeStartsCloser) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(smallCase());
    SolveOptions o;
    o.iterations = 30;
    o.lambda = 0.02;
    SolveResult a = s.solve(o);
    o.lambda = 0.03;
    o.iterations = 1;
    SolveResult cold = s.solve(o);
    SolveResult warm = s.solve(o, {}, nullptr, &a.image);
    EXPECT_LT(warm.history.front().residual, cold.history.front().residual);
    EXPECT_GT(warm.history.front().psnr_db, cold.history.front().psnr_db);
}

// The lambda-tuning path: the solve stays resident on the backend and continues
// with the new weight (no rebuild, no copy of the image); a plain solve is cold
// and so reproducible.
TEST(Session, LambdaChangeContinuesTheResidentSolveAndColdSolvesRepeat) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    s.setDataset(smallCase());
    SolveOptions o;
    o.iterations = 20;
    o.lambda = 0.02;
    const SolveResult first = s.solve(o);
    EXPECT_FALSE(first.warm_started);
    EXPECT_EQ(first.total_iterations, 20);
    const SolveResult again = s.solve(o);
    EXPECT_EQ(again.image, first.image);  // same settings, same data: the same image

    o.lambda = 0.03;
    o.iterations = 5;
    o.warm_start = true;
    o.kept_directions = -1;  // no recycling: the plain restart (recycled changes: test_density_weighted_solve.cpp)
    o.lambda_change_to_cold_accuracy = false;  // the whole budget, as by hand below (the stop: the next test)
    const SolveResult warm = s.solve(o);
    EXPECT_TRUE(warm.warm_started);
    EXPECT_EQ(warm.total_iterations, 25);
    EXPECT_EQ(warm.history.front().iteration, 1);
    // The same as restarting CG by hand from the previous image with the new lambda.
    o.warm_start = false;
    const SolveResult by_hand = s.solve(o, {}, nullptr, &again.image);
    EXPECT_LT(relativeError(warm.image, by_hand.image), 1e-10);
    EXPECT_NE(s.cacheStatus().find("solver"), std::string::npos) << s.cacheStatus();
    // A different regulariser cannot continue: it starts cold.
    o.warm_start = true;
    o.regularizer = RegularizerKind::Tikhonov;
    EXPECT_FALSE(s.solve(o).warm_started);
}

// A warm lambda change stops at the relative residual its cold solve ended at: an image as close to the new
// lambda's solution as a cold solve of the same budget gives, in fewer iterations. A continuation at the same
// lambda, an explicit tolerance, or the option off run as asked.
TEST(Session, LambdaChangeStopsAtTheColdSolvesAccuracy) {
    auto data = smallCase();
    auto backend = std::shared_ptr<Backend>(createCpuBackend(Precision::Double));
    const int budget = 20;
    auto converged = [&](double lambda) {
        ReconstructionSession r(backend);
        r.setDataset(data);
        SolveOptions o;
        o.lambda = lambda;
        o.iterations = 2000;
        o.tolerance = 1e-13;
        return r.solve(o).image;
    };
    ReconstructionSession s(backend);
    s.setDataset(data);
    SolveOptions o;
    o.iterations = budget;
    o.lambda = 0.02;
    const double cold_residual = s.solve(o).history.back().residual;
    o.warm_start = true;
    for (const double lambda : {0.04, 0.02, 0.01}) {
        o.lambda = lambda;
        const SolveResult warm = s.solve(o);
        ASSERT_TRUE(warm.warm_started);
        EXPECT_EQ(warm.cold_accuracy, cold_residual) << lambda;
        EXPECT_LT(warm.history.back().residual, cold_residual) << lambda;
        for (std::size_t i = 0; i + 1 < warm.history.size(); ++i) EXPECT_GE(warm.history[i].residual, cold_residual) << lambda;
        EXPECT_LT(warm.history.size(), std::size_t(budget)) << lambda;
        // As accurate as the cold budget at this lambda (measured: 0.93-1.02x its distance).
        ReconstructionSession c(backend);
        c.setDataset(data);
        SolveOptions cold = o;
        cold.warm_start = false;
        const ComplexArray ref = converged(lambda);
        const double change = relativeError(warm.image, ref), from_zero = relativeError(c.solve(cold).image, ref);
        std::printf("lambda %.2f: %zu warm iterations, %.2e from the converged image; cold %d: %.2e\n", lambda,
                    warm.history.size(), change, budget, from_zero);
        EXPECT_LT(change, 1.5 * from_zero) << lambda;
    }
    // The same lambda again continues for the whole budget; so do an explicit tolerance and the option off.
    const SolveResult more = s.solve(o);
    EXPECT_EQ(more.cold_accuracy, 0.0);
    EXPECT_EQ(more.history.size(), std::size_t(budget));
    o.lambda = 0.03;
    o.tolerance = 1e-9;
    o.iterations = 500;
    const SolveResult given = s.solve(o);
    EXPECT_EQ(given.cold_accuracy, 0.0);
    EXPECT_LT(given.history.back().residual, 1e-9);
    o.tolerance = 0;
    o.iterations = budget;
    o.lambda = 0.05;
    o.lambda_change_to_cold_accuracy = false;
    EXPECT_EQ(s.solve(o).history.size(), std::size_t(budget));
}

TEST(Session, MultiCoilCombinesBySumOfSquares) {
    auto one = smallCase();
    auto two = std::make_shared<Dataset>(*one);
    two->coils = 2;
    two->truth.clear();  // per-coil truth is not meaningful
    two->kspace.insert(two->kspace.end(), one->kspace.begin(), one->kspace.end());
    for (std::size_t m = one->samples(); m < two->kspace.size(); ++m) two->kspace[m] *= cdouble(0, 0.5);
    ReconstructionSession a(createCpuBackend(Precision::Double)), b(createCpuBackend(Precision::Double));
    one->truth.clear();
    a.setDataset(one);
    b.setDataset(two);
    SolveOptions o;
    o.iterations = 10;
    const ComplexArray x = a.solve(o).image, y = b.solve(o).image;
    ComplexArray expect(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) expect[i] = std::abs(x[i]) * std::sqrt(1.25);
    EXPECT_LT(relativeError(y, expect), 1e-6);
}

TEST(Session, ForwardModelAgreesWithDirectSumAndPhi) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    auto d = smallCase();
    s.setDataset(d);
    const ComplexArray x = randomComplex(d->grid.voxels(), 3);
    const ComplexArray a = s.forward(x, {"nufft", 1e-9}), b = s.forward(x, {"direct"});
    EXPECT_LT(relativeError(a, b), 1e-8);
}

// Kaiser-Bessel gridding weights: the radial ramp for spokes near Nyquist, Pipe-Menon
// for sparser spokes and other trajectories; the data set's own weights win over both.
TEST(Session, KaiserBesselDensityFollowsTheSampling) {
    ReconstructionSession s(createCpuBackend(Precision::Double));
    const Grid g = Grid::make2D(32, 32);
    auto radial = std::make_shared<Dataset>();
    radial->grid = g;
    radial->trajectory = goldenAngleRadial2D(32, 50, 32);  // pi 32 / 2 = 50.3 spokes: Nyquist
    radial->kspace = randomComplex(radial->samples(), 3);
    s.setDataset(radial);
    EXPECT_EQ(s.kaiserBesselDensityMethod(), DensityMethod::RadialRamp);
    const ComplexArray byDefault = s.gridKaiserBessel().image;
    EXPECT_EQ(byDefault, s.gridKaiserBessel(kaiserBesselGridding(), {}, DensityMethod::RadialRamp).image);
    const ComplexArray pipeMenon = s.gridKaiserBessel(kaiserBesselGridding(), {}, DensityMethod::PipeMenon).image;
    EXPECT_GT(relativeError(pipeMenon, byDefault), 1e-3);  // the two weightings differ

    auto sparse = std::make_shared<Dataset>(*radial);
    sparse->trajectory = goldenAngleRadial2D(32, 16, 32);  // 3x below Nyquist
    sparse->kspace.resize(sparse->samples());
    s.setDataset(sparse);
    EXPECT_EQ(s.kaiserBesselDensityMethod(), DensityMethod::PipeMenon);

    auto withWeights = std::make_shared<Dataset>(*radial);
    withWeights->density.assign(withWeights->samples(), 0.5);
    s.setDataset(withWeights);
    EXPECT_EQ(s.kaiserBesselDensityMethod(), DensityMethod::PipeMenon);
    EXPECT_EQ(s.densityWeights(), withWeights->density);

    s.setDataset(simulate(demoCase("spiral-2d")));
    EXPECT_EQ(s.kaiserBesselDensityMethod(), DensityMethod::PipeMenon);
}

namespace {
// `spokes` full-diameter spokes of n samples at equal angles over pi, at positions j - n/2 + shift
// (shift 1/2: k = 0 never sampled, as in `bart traj -r`; 0: k = 0 sampled, as `bart traj -r -c`).
Trajectory evenRadial2D(int n, int spokes, double shift) {
    Trajectory t;
    t.dims = 2;
    t.readout_length = n;
    for (int i = 0; i < spokes; ++i)
        for (int j = 0; j < n; ++j) {
            const double s = j - n / 2.0 + shift, a = kPi * i / spokes;
            t.k.insert(t.k.end(), {s * std::cos(a), s * std::sin(a), 0.0});
        }
    return t;
}
}  // namespace

// The analytic radial weights against Pipe-Menon's, where both apply (spokes at Nyquist): per position
// along the spoke (every spoke samples the same radii), Pipe-Menon's weights least-squares scaled to
// the analytic ones inside 3/4 of the band (beyond, Pipe-Menon's kernel overlaps the ball's edge).
TEST(Session, RadialDensityWeightsAgreeWithPipeMenonAtNyquist) {
    const auto backend = createCpuBackend(Precision::Double);
    struct Case {
        const char* name;
        Grid grid;
        Trajectory trajectory;
    };
    for (const Case& c : {Case{"2D", Grid::make2D(64, 64), goldenAngleRadial2D(64, 101, 64)},
                          Case{"2D, k = 0 sampled", Grid::make2D(64, 64), evenRadial2D(64, 101, 0.0)},
                          Case{"3D", Grid::cube(3, 24), radial3D(24, 905, 24)}}) {
        const int dims = c.grid.dims, n = c.grid.n[0];
        const std::vector<double> analytic = radialDensityWeights(c.trajectory, dims);
        const std::vector<double> pm =
            backend->densityCompensation(c.trajectory, c.grid, kaiserBesselGridding(2.0, 4), 20, {});
        std::vector<double> pmMean(n, 0), mean(n, 0);  // per position along the spoke
        const double spokes = double(c.trajectory.readouts());
        for (std::size_t m = 0; m < c.trajectory.samples(); ++m) {
            pmMean[m % n] += pm[m] / spokes;
            mean[m % n] += analytic[m] / spokes;
        }
        double ab = 0, bb = 0, err = 0, ref = 0;
        std::vector<int> band;
        for (int j = 0; j < n; ++j)
            if (std::abs(j - n / 2 + 0.5) < 0.375 * n) band.push_back(j);
        for (int j : band) ab += mean[j] * pmMean[j], bb += pmMean[j] * pmMean[j];
        const double scale = ab / bb;
        for (int j : band) err += std::pow(mean[j] - scale * pmMean[j], 2), ref += mean[j] * mean[j];
        // 1.1 %, 0.07 % and 1.8 % when written.
        EXPECT_LT(std::sqrt(err / ref), 0.03) << c.name;
        // Where k = 0 is sampled, its cell's exact share is Pipe-Menon's weight there to 1 % (the point
        // value |k|^(d-1) would give it 0).
        const Trajectory& t = c.trajectory;
        if (t.kx(n / 2) == 0 && t.ky(n / 2) == 0 && t.kz(n / 2) == 0)
            EXPECT_NEAR(mean[n / 2] / (scale * pmMean[n / 2]), 1.0, 0.03) << c.name;
    }
}

namespace {
// A line of /proc/self/status in bytes ("VmHWM:  1234 kB"); 0 where it cannot be read.
std::size_t statusBytes(const std::string& key) {
    std::ifstream in("/proc/self/status");
    std::string word;
    std::size_t kb = 0;
    while (in >> word)
        if (word == key + ":") return (in >> kb) ? kb * 1024 : 0;
    return 0;
}
// A data set on `grid`: a few samples in the band, unit data (enough for the memory checks).
std::shared_ptr<Dataset> tinyDataOn(const Grid& grid) {
    auto d = std::make_shared<Dataset>();
    d->name = "huge grid";
    d->grid = grid;
    d->trajectory.dims = grid.dims;
    d->trajectory.k = {0, 0, 0, 1, 2, 3, -4, 5, -6};
    d->kspace.assign(3, cdouble(1, 0));
    d->validate();
    return d;
}
}  // namespace

// The estimate checked before allocating is an upper bound of what a reconstruction
// really holds at its peak, and not a loose one: the process's resident high-water mark
// around both griddings, a solve and a warm lambda change (Q by NUFFT on the 2N grid is the
// peak) on the default 64^3 case. ASan's shadow memory and quarantine inflate the resident size: skipped there.
TEST(Session, MemoryEstimateBoundsTheMeasuredPeak) {
#ifdef RECONSTUDIO_TEST_ASAN
    GTEST_SKIP() << "AddressSanitizer changes the resident size";
#endif
    auto d = simulate(demoCase("default"));
    for (Precision p : {Precision::Single, Precision::Double}) {
        ReconstructionSession s(createCpuBackend(p));
        s.setDataset(d);
        malloc_trim(0);  // freed blocks of earlier work back to the system, then the mark reset
        { std::ofstream("/proc/self/clear_refs") << "5"; }
        const std::size_t before = statusBytes("VmRSS");
        if (before == 0 || statusBytes("VmHWM") > before + (std::size_t(8) << 20)) GTEST_SKIP() << "no resettable VmHWM";
        const MemoryEstimate e =
            estimateReconstructionMemory(d->grid, d->samples(), d->coils, p, s.backend().info().q_oversampling);
        s.gridTrilinear();
        s.gridKaiserBessel();
        const std::size_t gridding = statusBytes("VmHWM") - before;
        SolveOptions o;
        o.iterations = 2;
        s.solve(o);
        o.warm_start = true;  // a lambda change keeps the recycled iterate and its products
        o.lambda *= 2;
        s.solve(o);
        const std::size_t all = statusBytes("VmHWM") - before;
        std::printf("%s: gridding %zu MB, estimate %zu MB; all %zu MB, estimate %zu MB\n", toString(p).c_str(),
                    gridding >> 20, e.gridding >> 20, all >> 20, e.peak() >> 20);
        EXPECT_GE(e.gridding, gridding) << toString(p);
        EXPECT_LE(e.gridding, 2 * gridding) << toString(p);
        EXPECT_GE(e.peak(), all) << toString(p);
        EXPECT_LE(e.peak(), 2 * all) << toString(p);
    }
}

// A grid far beyond any machine's memory is refused before anything is allocated, with the
// estimate and the available memory named (issue 15, item 5): gridding and the solve alike.
TEST(Session, RefusesWhatDoesNotFitInMemoryWithTheNumbers) {
    ReconstructionSession s(createCpuBackend(Precision::Single));
    s.setDataset(tinyDataOn(Grid::make3D(2048, 2048, 256)));  // 2^30 voxels: Q's grid alone is 550 GB
    for (int stage = 0; stage < 3; ++stage) {
        try {
            if (stage == 0)
                s.densityWeights(DensityMethod::PipeMenon);
            else if (stage == 1)
                s.gridKaiserBessel();
            else
                s.solve(SolveOptions{});
            ADD_FAILURE() << "stage " << stage << " was not refused";
        } catch (const InputError& e) {
            const std::string said = e.what();
            EXPECT_NE(said.find("2048x2048x256"), std::string::npos) << said;
            EXPECT_NE(said.find("of host memory; "), std::string::npos) << said;
            EXPECT_NE(said.find(" is available"), std::string::npos) << said;
        }
    }
    EXPECT_EQ(s.cacheStatus(), "nothing cached");
}
