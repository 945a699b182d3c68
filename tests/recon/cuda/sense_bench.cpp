// Where the time of one SENSE reconstruction goes (issue 14's speed targets; not a test: prints figures).
//   sense_bench [--size 128] [--coils 8] [--iterations 60] [--repeats 3] [--cpu] [--no-maps] [--demo NAME] [--preconditioner-only]
//               [--data-weighting density] [--lambda-change-only] [--session-change-only] [--sense-maps espirit|walsh|ring]
//               [--whole-only]
// The reference paper's 3D radial case (M = 284,592 per coil at 128^3, scaled as N^3), smooth
// synthetic coil maps, data from the backend's NUFFT plus a correlated noise scan; data on the host
// in, image on the host out, in a warm process (one untimed run first, as a workstation that has
// reconstructed before). Each row is a fresh session on the same backend, stepped through the
// session's stages in the order a solve takes them, each timed on its own:
//   prewhiten (setDataset with the noise scan), compress (PCA to coils-2 virtual coils: reported,
//   not part of the whole), Q (Toeplitz kernel), F^H d of every coil, W (the prior), the solve
//   (its SENSE operator, right-hand side, CG, image to host; records without cost terms, as
//   `recon --quiet` writing an image), the λ change (warm re-solve), and
//   the coil maps (Walsh, ESPIRiT: their stages from the progress they report; one untimed estimate
//   of each first, then --repeats rows). On a GPU the whole rows run twice: every buffer through
//   cudaMalloc/cudaFree ("cudaMalloc"), then from the stream-ordered pool ("pool", the default). Between them: the normal product alone (per coil against
//   batched) and the λ change to convergence (its definition printed: PSNR against the truth by iteration).
// Then the preconditioner's rows (plain CG against SENSE's preconditioner: residuals and PSNR by
// iteration, iterations to plain CG's PSNR and to a converged image, cold and after a λ change, timed)
// and the λ change to a converged image (lambdaChangeRows: uniform and density-weighted data term, plain CG and
// preconditioned; after a cold budget solve at λ 0.02 the first change to 0.04, back to 0.02, onward to 0.01,
// each warm and recycled as the session does it). "Converged" there: the first iterate within 1 % (relative l2,
// complex) of a long solve's image at the new λ and data term (the preconditioned CG from zero, 8x the
// budget), or, the looser mark, with a PSNR within 0.1 dB of that long solve's; iterations, then the wall
// seconds of each change's solve call replayed to that count from a fresh session.
// Those rows solve with the maps a user's session has: estimated by the session from the bench's own data
// (--sense-maps espirit, the default, or walsh; the PSNR against the truth times the whitened true maps' root
// sum of squares inside the maps' mask, the image such maps give); --sense-maps ring: the true ring maps
// whitened (weak in the corners: in float32 no solve converges there to 1 %, docs/SENSE.md).
// sessionChangeRows: the λ change as the session makes it by default, to the cold solve's residual, against a cold
// solve's distance to the long solve.
// --preconditioner-only: those rows alone (--lambda-change-only: the λ change's alone; --session-change-only: the
// session's change alone); --demo NAME: both
// on a demo case with its ESPIRiT maps.
// --whole-only: the whole rows, the stages' before/after and the normal product's rows, then stop.
// --cpu: the same on the CPU backend (for a small --size; checks the program without a GPU).
// --data-weighting density: the whole rows alone (from the pool), each uniform and then with the density-weighted
// data term (its weights a stage of their own, "D"), in turns.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/cuda/cuda_backend.hpp"
#include "tests/recon/cuda/bench_data.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/sense/espirit.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/trajectory/trajectories.hpp"

using namespace recon;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::shared_ptr<const Dataset> makeData(Backend& b, int n, int coils, ComplexArray& maps) {
    const Grid grid = Grid::cube(3, n);
    const Trajectory traj = paperTrajectory(n);
    auto data = std::make_shared<Dataset>();
    data->name = "sense-bench";
    data->grid = grid;
    data->trajectory = traj;
    data->coils = coils;
    data->basis = BasisFunction::Point;
    data->truth = Phantom::sheppLogan3D().image(grid, 2);
    maps = ringMaps(grid, coils);
    data->kspace.resize(std::size_t(coils) * traj.samples());
    for (int c = 0; c < coils; ++c) {
        ComplexArray weighted(grid.voxels()), out;
        for (std::size_t i = 0; i < weighted.size(); ++i) weighted[i] = maps[std::size_t(c) * grid.voxels() + i] * data->truth[i];
        b.forwardSum(traj, weighted, SampleGrid::image(grid), out, {"nufft", 1e-6});
        std::copy(out.begin(), out.end(), data->kspace.begin() + std::ptrdiff_t(std::size_t(c) * traj.samples()));
    }
    // A noise scan with coupled coils (each coil's noise leaks 30 % into the next), 1024 samples per coil.
    const std::size_t noise = 1024;
    std::mt19937 rng(7);
    std::normal_distribution<double> gauss(0, 1e-3);
    ComplexArray white(std::size_t(coils) * noise);
    for (auto& v : white) v = cdouble(gauss(rng), gauss(rng));
    data->noise.resize(white.size());
    for (int c = 0; c < coils; ++c)
        for (std::size_t i = 0; i < noise; ++i)
            data->noise[std::size_t(c) * noise + i] =
                white[std::size_t(c) * noise + i] + (c > 0 ? 0.3 * white[std::size_t(c - 1) * noise + i] : cdouble(0));
    return data;
}

// Times at which a Progress passes the given fractions (a stage's boundaries).
struct StageClock {
    Clock::time_point t0 = Clock::now();
    std::vector<double> marks;  // fractions
    std::vector<double> at;     // seconds since t0, when first passed
    explicit StageClock(std::vector<double> m) : marks(std::move(m)), at(marks.size(), -1) {}
    Progress progress() {
        return Progress{[this](double f) {
            for (std::size_t i = 0; i < marks.size(); ++i)
                if (at[i] < 0 && f >= marks[i] - 1e-9) at[i] = since(t0);
        }};
    }
};

struct Row {
    std::map<std::string, double> t;
    SolveResult solve, relambda;
};

Row run(const std::shared_ptr<Backend>& b, const std::shared_ptr<const Dataset>& data, const ComplexArray& maps, int iterations,
        PreconditionerKind pk, DataWeighting weighting = DataWeighting::Uniform) {
    Row row;
    SolveOptions o;
    o.preconditioner = pk;
    o.weighting = weighting;
    o.iterations = iterations;
    o.lambda = 0.02;
    o.snapshot_every = 0;
    // The image alone, as `recon --quiet --output image.cfl` asks for it: no cost terms in the records,
    // so no exact final data term either (on this good fit one forward E and d's upload, about 20 ms).
    o.record_costs = false;
    o.method = {"nufft", kDefaultNufftTolerance};
    o.coil_combination = CoilCombination::Sense;
    CoilMaps given;  // the maps as an estimate would hand them over (not timed)
    given.maps = maps;
    given.coils = data->coils;
    given.mask.assign(data->grid.voxels(), 1);
    given.source = "ring of Gaussian bumps";
    const Clock::time_point whole = Clock::now();
    ReconstructionSession session(b);
    auto t0 = Clock::now();
    session.setDataset(data);
    row.t["prewhiten"] = since(t0);
    session.setCoilMaps(std::move(given));
    t0 = Clock::now();
    if (weighting == DataWeighting::Density) session.densityWeights(session.weightingDensityMethod());
    row.t["D"] = since(t0);
    t0 = Clock::now();
    session.toeplitz(o.method, {}, weighting);
    row.t["Q"] = since(t0);
    t0 = Clock::now();
    session.coilAdjoints(o.method, {}, weighting);
    row.t["F^H d"] = since(t0);
    t0 = Clock::now();
    session.regularizerOperator(o);
    row.t["W"] = since(t0);
    t0 = Clock::now();
    row.solve = session.solve(o);
    row.t["solve"] = since(t0);
    row.t["whole"] = since(whole);
    o.lambda = 0.05;
    o.warm_start = true;  // as the session changes λ: to the cold solve's residual
    t0 = Clock::now();
    row.relambda = session.solve(o);
    row.t["lambda change"] = since(t0);
    o.iterations = std::max(1, iterations / 3);
    o.lambda = 0.03;
    o.lambda_change_to_cold_accuracy = false;  // a fixed count, the earlier tables' row
    t0 = Clock::now();
    session.solve(o);
    row.t["lambda change short"] = since(t0);
    return row;
}

// PSNR of |x| against |truth|: estimated maps fix the image's phase only up to a smooth factor.
double magnitudePsnr(const ComplexArray& x, const ComplexArray& truth) {
    ComplexArray m(x.size()), t(truth.size());
    for (std::size_t i = 0; i < x.size(); ++i) m[i] = std::abs(x[i]);
    for (std::size_t i = 0; i < truth.size(); ++i) t[i] = std::abs(truth[i]);
    return measureQuality(m, t, false).psnr_db;
}

// ||x - ref|| / ||ref|| (complex images).
double relativeDistance(const ComplexArray& x, const ComplexArray& ref) { return measureQuality(x, ref, false).error_percent / 100; }

// A monitor that keeps each iterate's PSNR against the truth (magnitudes; snapshots every iteration).
struct PsnrMonitor final : Monitor {
    const ComplexArray* truth = nullptr;
    std::vector<double> psnr, residual;
    void iteration(int, const IterationRecord& r, const ComplexArray* snapshot) override {
        if (!snapshot) return;
        psnr.push_back(magnitudePsnr(*snapshot, *truth));
        residual.push_back(r.residual);
    }
};

// What the preconditioner's and the λ change's rows solve with: every session is given the same maps (estimated
// once, as a user's session holds them), and the image those maps should give (`truth`, in the maps' units).
struct SenseCase {
    std::shared_ptr<const Dataset> data;
    CoilMaps maps;
    ComplexArray truth;
};

SolveOptions senseOptions(PreconditionerKind pk, double lambda, int iterations, DataWeighting weighting = DataWeighting::Uniform) {
    SolveOptions o;
    o.iterations = iterations;
    o.lambda = lambda;
    o.snapshot_every = 0;
    o.method = {"nufft", kDefaultNufftTolerance};
    o.coil_combination = CoilCombination::Sense;
    o.preconditioner = pk;
    o.weighting = weighting;
    return o;
}

void startSession(ReconstructionSession& s, const SenseCase& sc) {
    s.setDataset(sc.data);
    s.setCoilMaps(sc.maps);
}

// The long solves the rows measure against, one per data term and λ, made when first asked for: the
// circulant-preconditioned CG from zero for `iterations` (8x the budget). `drift`: how far its image moved over
// the second half (||x_its - x_its/2|| / ||x_its||), the reference's own uncertainty.
struct LongSolve {
    ComplexArray image;
    double psnr = 0, residual = 0, drift = 0;
};
class LongSolves {
public:
    LongSolves(std::shared_ptr<Backend> b, const SenseCase& sc, int iterations) : b_(std::move(b)), sc_(sc), iterations_(iterations) {}
    const LongSolve& at(DataWeighting w, double lambda) {
        const auto key = std::make_pair(int(w), lambda);
        auto it = solves_.find(key);
        if (it != solves_.end()) return it->second;
        ReconstructionSession s(b_);
        startSession(s, sc_);
        struct Half final : Monitor {
            ComplexArray image;
            void iteration(int, const IterationRecord&, const ComplexArray* x) override {
                if (x && image.empty()) image = *x;
            }
        } half;
        SolveOptions o = senseOptions(PreconditionerKind::Circulant, lambda, iterations_, w);
        o.snapshot_every = iterations_ / 2;
        const SolveResult r = s.solve(o, half);
        LongSolve l{r.complex_image, magnitudePsnr(r.complex_image, sc_.truth), r.history.back().residual,
                    relativeDistance(half.image, r.complex_image)};
        std::printf("  long solve (%s, lambda %.3f, circulant, %d its from zero): relative residual %.2e, PSNR %.2f dB,"
                    " moved %.2e over its last %d its\n", toString(w).c_str(), lambda, iterations_, l.residual, l.psnr, l.drift,
                    iterations_ / 2);
        std::fflush(stdout);
        return solves_.emplace(key, std::move(l)).first->second;
    }

private:
    std::shared_ptr<Backend> b_;
    const SenseCase& sc_;
    int iterations_;
    std::map<std::pair<int, double>, LongSolve> solves_;
};

// The preconditioner's rows (SolveOptions::preconditioner none against circulant: SENSE's, with
// its diagonal correction). "Converged" here: every later iterate within 0.1 dB (PSNR against the truth)
// of a long solve's (LongSolves). Per kind:
//   cold  - iterations from zero to plain CG's budget-iteration PSNR (within 0.1 dB), and to converged;
//   λ     - after the λ = 0.02 solve (the budget), warm at λ = 0.04: iterations to converged;
// then timed, each from a fresh session: the whole reconstruction (setDataset to the image on the
// host, as `run` times it) to converged, and the λ change to converged (the warm solve's call).
void preconditionerRows(const std::shared_ptr<Backend>& b, const SenseCase& sc, LongSolves& references, int iterations, int repeats) {
    const double lambda0 = 0.02, lambda1 = 0.04;
    auto curve = [&](ReconstructionSession& s, SolveOptions o) {
        PsnrMonitor monitor;
        monitor.truth = &sc.truth;
        o.snapshot_every = 1;
        s.solve(o, monitor);
        std::printf("        %s lambda %.2f%s relative residual:", toString(o.preconditioner).c_str(), o.lambda, o.warm_start ? " warm" : "");
        for (std::size_t i : {1, 5, 10, 20, 30, 60, 120, 240})
            if (i <= monitor.residual.size()) std::printf(" %zu:%.2e/%.2fdB", i, monitor.residual[i - 1], monitor.psnr[i - 1]);
        std::printf("\n");
        return monitor.psnr;
    };
    // 1-based: the first iterate from which every later one lies within 0.1 dB of `target`; 0: none.
    auto converged = [](const std::vector<double>& p, double target) {
        std::size_t k = p.size();
        if (k == 0 || std::abs(p.back() - target) >= 0.1) return std::size_t(0);
        while (k > 1 && std::abs(p[k - 2] - target) < 0.1) --k;
        return k;
    };
    auto reached = [](const std::vector<double>& p, double target) {  // within 0.1 dB (CG's PSNR may overshoot its limit)
        for (std::size_t i = 0; i < p.size(); ++i)
            if (p[i] >= target - 0.1) return i + 1;
        return std::size_t(0);
    };
    const double reference[2] = {references.at(DataWeighting::Uniform, lambda0).psnr, references.at(DataWeighting::Uniform, lambda1).psnr};
    double plain_budget = 0;
    std::printf("preconditioner (%s maps): long solves PSNR %.2f dB at lambda %.2f, %.2f dB at %.2f\n", sc.maps.source.c_str(),
                reference[0], lambda0, reference[1], lambda1);
    for (PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
        std::vector<double> cold, warm;
        {
            ReconstructionSession s(b);
            startSession(s, sc);
            cold = curve(s, senseOptions(pk, lambda0, 4 * iterations));
            s.solve(senseOptions(pk, lambda0, iterations));
            SolveOptions o = senseOptions(pk, lambda1, 4 * iterations);
            o.warm_start = true;
            o.lambda_change_to_cold_accuracy = false;  // the whole curve
            warm = curve(s, o);
        }
        if (pk == PreconditionerKind::None) plain_budget = cold[std::size_t(iterations) - 1];
        const std::size_t to_budget = reached(cold, plain_budget), cold_conv = converged(cold, reference[0]),
                          warm_conv = converged(warm, reference[1]);
        std::printf("  %-5s cold: PSNR %.2f dB at %d its, plain CG's %.2f dB at its %zu, converged at its %zu (%d its: %.2f dB) |"
                    " lambda %.2f -> %.2f warm: converged at its %zu (%.2f dB at %d)\n",
                    toString(pk).c_str(), cold[std::size_t(iterations) - 1], iterations, plain_budget, to_budget, cold_conv,
                    4 * iterations, cold.back(), lambda0, lambda1, warm_conv, warm.back(), 4 * iterations);
        std::printf("        timed (%s):", toString(pk).c_str());
        for (int r = 0; r < repeats; ++r) {
            double whole = -1, whole_budget = -1, change = -1;
            if (to_budget > 0) {
                const auto t0 = Clock::now();
                ReconstructionSession s(b);
                startSession(s, sc);
                s.solve(senseOptions(pk, lambda0, int(to_budget)));
                whole_budget = since(t0);
            }
            if (cold_conv > 0) {
                const auto t0 = Clock::now();
                ReconstructionSession s(b);
                startSession(s, sc);
                s.solve(senseOptions(pk, lambda0, int(cold_conv)));
                whole = since(t0);
            }
            if (warm_conv > 0) {
                ReconstructionSession s(b);
                startSession(s, sc);
                s.solve(senseOptions(pk, lambda0, iterations));
                SolveOptions o = senseOptions(pk, lambda1, int(warm_conv));
                o.warm_start = true;
                o.lambda_change_to_cold_accuracy = false;
                const auto t0 = Clock::now();
                s.solve(o);
                change = since(t0);
            }
            auto seconds = [](double t) { return t < 0 ? std::string("- (not reached)") : std::to_string(t) + " s"; };
            std::printf(" | whole to plain's PSNR %s, to converged %s, lambda change to converged %s", seconds(whole_budget).c_str(),
                        seconds(whole).c_str(), seconds(change).c_str());
        }
        std::printf("\n");
        std::fflush(stdout);
    }
}

// Issue 14's λ change to a converged image. A warm λ change (recycled, the session's default) is "converged" at
// the first iterate that meets the mark: "1 %" - ||x - x_ref|| <= 1 % of ||x_ref|| (complex images), or
// "0.1 dB" - its PSNR (|x| against |truth|) within 0.1 dB of x_ref's; x_ref the long solve at the new λ and
// the same data term (LongSolves). CG is stopped there (the monitor cancels the next iteration), so the next
// change starts from the image a user who waited for convergence would have; changes that do not reach the mark
// run `cap` iterations (printed as >cap).
enum class Mark { Close, Psnr };
struct StopAtMark final : Monitor {
    std::atomic<bool> stop{false};
    Mark mark;
    const ComplexArray& truth;
    const LongSolve& reference;
    int count = 0, reached = 0;
    StopAtMark(Mark m, const ComplexArray& t, const LongSolve& ref) : Monitor(&stop), mark(m), truth(t), reference(ref) {}
    void iteration(int, const IterationRecord&, const ComplexArray* x) override {
        ++count;
        if (!x || reached) return;
        // Only the mark's own measure here (at 128^3 each costs tens of ms on the host).
        if (mark == Mark::Close ? relativeDistance(*x, reference.image) <= 1e-2 : std::abs(magnitudePsnr(*x, truth) - reference.psnr) < 0.1) {
            reached = count;
            stop = true;
        }
    }
};

// For each data term and preconditioner, after a cold `iterations` solve at λ0: the first change (λ0 -> 2 λ0),
// back (-> λ0), onward (-> λ0/2, a λ not solved on the warm path; docs/SCALING.md's sequence), each warm, to each
// mark: iterations (monitored), then the same chain replayed `repeats` times from fresh sessions, each change's
// solve call timed (the preconditioner's rebuild, the recycled start, CG, the image to the host).
void lambdaChangeRows(const std::shared_ptr<Backend>& b, const SenseCase& sc, LongSolves& references, int iterations, int repeats) {
    const double lambda0 = 0.02;
    const double to[3] = {2 * lambda0, lambda0, lambda0 / 2};
    const char* names[3] = {"first", "back", "onward"};
    const int cap = 2 * iterations;
    std::printf("lambda change to a converged image (%s maps; cold %d its at %.2f, then %.2f, %.2f, %.2f warm, recycled; cap %d its):\n",
                sc.maps.source.c_str(), iterations, lambda0, to[0], to[1], to[2], cap);
    for (DataWeighting w : {DataWeighting::Uniform, DataWeighting::Density}) {
        const LongSolve* ref[3];
        for (int i = 0; i < 3; ++i) ref[i] = &references.at(w, to[i]);
        std::printf("  references (%s) apart: %.3f (%.2f vs %.2f), %.3f (%.2f vs %.2f)\n", toString(w).c_str(),
                    relativeDistance(ref[1]->image, ref[0]->image), to[1], to[0], relativeDistance(ref[2]->image, ref[1]->image), to[2],
                    to[1]);
        for (PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
            for (Mark mark : {Mark::Close, Mark::Psnr}) {
                int its[3];
                bool ok[3];
                double distance[3], psnr[3];
                {
                    ReconstructionSession s(b);
                    startSession(s, sc);
                    s.solve(senseOptions(pk, lambda0, iterations, w));
                    for (int i = 0; i < 3; ++i) {
                        StopAtMark monitor(mark, sc.truth, *ref[i]);
                        SolveOptions o = senseOptions(pk, to[i], cap, w);
                        o.warm_start = true;
                        o.lambda_change_to_cold_accuracy = false;  // to the mark
                        o.snapshot_every = 1;
                        const SolveResult r = s.solve(o, monitor);
                        ok[i] = monitor.reached > 0;
                        its[i] = ok[i] ? monitor.reached : monitor.count;
                        distance[i] = relativeDistance(r.complex_image, ref[i]->image);  // both measures where it stopped
                        psnr[i] = magnitudePsnr(r.complex_image, sc.truth) - ref[i]->psnr;
                    }
                }
                std::vector<double> seconds[3];
                for (int r = 0; r < repeats; ++r) {
                    ReconstructionSession s(b);
                    startSession(s, sc);
                    s.solve(senseOptions(pk, lambda0, iterations, w));
                    for (int i = 0; i < 3; ++i) {
                        SolveOptions o = senseOptions(pk, to[i], its[i], w);
                        o.warm_start = true;
                        o.lambda_change_to_cold_accuracy = false;
                        const auto t0 = Clock::now();
                        s.solve(o);
                        seconds[i].push_back(since(t0));
                    }
                }
                std::printf("  %-7s %-9s to %-6s", toString(w).c_str(), toString(pk).c_str(), mark == Mark::Close ? "1 %" : "0.1 dB");
                for (int i = 0; i < 3; ++i) {
                    std::printf(" | %s %s%d its (%.1e, %+.2f dB)", names[i], ok[i] ? "" : ">", its[i], distance[i], psnr[i]);
                    for (double t : seconds[i]) std::printf(" %.3f", t);
                    std::printf(" s");
                }
                std::printf("\n");
                std::fflush(stdout);
            }
        }
    }
}

// The λ change as the session makes it (SolveOptions::lambda_change_to_cold_accuracy, the default): after a cold
// `iterations` solve at λ0, the same chain as lambdaChangeRows' (first, back, onward), each change warm and
// recycled until its relative residual falls below the cold solve's. Per change: the iterations it took, its
// distance to the long solve at the new λ against a cold `iterations` solve's there (the image a user would
// otherwise wait a whole reconstruction for), then the change's solve call timed in `repeats` fresh chains
// (M^{-1}'s rebuild, the recycled start, CG, the image to the host; records without cost terms, as the whole rows).
void sessionChangeRows(const std::shared_ptr<Backend>& b, const SenseCase& sc, LongSolves& references, int iterations, int repeats) {
    const double lambda0 = 0.02;
    const double to[3] = {2 * lambda0, lambda0, lambda0 / 2};
    const char* names[3] = {"first", "back", "onward"};
    const PreconditionerKind pk = PreconditionerKind::Auto;  // the session's choice for SENSE: SENSE's circulant
    std::printf("lambda change as the session makes it (%s maps; cold %d its at %.2f, then %.2f, %.2f, %.2f warm, each to the cold"
                " solve's residual):\n", sc.maps.source.c_str(), iterations, lambda0, to[0], to[1], to[2]);
    for (DataWeighting w : {DataWeighting::Uniform, DataWeighting::Density}) {
        auto options = [&](double lambda) {
            SolveOptions o = senseOptions(pk, lambda, iterations, w);
            o.record_costs = false;
            return o;
        };
        double cold_distance[3], change_distance[3];
        std::size_t its[3];
        double cold_residual = 0;
        for (int i = 0; i < 3; ++i) {
            ReconstructionSession c(b);
            startSession(c, sc);
            cold_distance[i] = relativeDistance(c.solve(options(to[i])).complex_image, references.at(w, to[i]).image);
        }
        std::vector<double> seconds[3];
        for (int r = 0; r <= repeats; ++r) {  // r = 0: the distances; then the timed chains
            ReconstructionSession s(b);
            startSession(s, sc);
            s.solve(options(lambda0));
            for (int i = 0; i < 3; ++i) {
                SolveOptions o = options(to[i]);
                o.warm_start = true;
                const auto t0 = Clock::now();
                const SolveResult res = s.solve(o);
                const double t = since(t0);
                if (r > 0) {
                    seconds[i].push_back(t);
                    continue;
                }
                its[i] = res.history.size();
                cold_residual = res.cold_accuracy;
                change_distance[i] = relativeDistance(res.complex_image, references.at(w, to[i]).image);
            }
        }
        std::printf("  %-7s (cold residual %.2e)", toString(w).c_str(), cold_residual);
        for (int i = 0; i < 3; ++i) {
            std::printf(" | %s %zu its, %.3f from the long solve (cold %d its: %.3f)", names[i], its[i], change_distance[i], iterations,
                        cold_distance[i]);
            for (double t : seconds[i]) std::printf(" %.3f", t);
            std::printf(" s");
        }
        std::printf("\n");
        std::fflush(stdout);
    }
}

// SENSE's normal product alone, as the solve applies it: the maps coil by coil through F's normal (the
// operator without the kernel, as before), and coilSumNormal's batches of 1, 4 and all coils.
void normalRows(const std::shared_ptr<Backend>& b, const std::shared_ptr<const Dataset>& data, const ComplexArray& maps) {
    ReconstructionSession session(b);
    session.setDataset(data);
    const FourierMethod m{"nufft", kDefaultNufftTolerance};
    const auto kernel = session.toeplitz(m);
    const auto fourier = session.fourierOperator(m);
    auto* cuda_kernel = dynamic_cast<cuda::CudaToeplitz<float>*>(const_cast<ToeplitzOperator*>(kernel.get()));
    const Vector x = b->fromHost(data->truth);
    Vector y = b->make(x.size());
    auto timeApply = [&](auto&& apply) {  // ms per application
        for (int i = 0; i < 3; ++i) apply();
        b->synchronize();
        const int reps = 20;
        const auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i) apply();
        b->synchronize();
        return 1e3 * since(t0) / reps;
    };
    auto time = [&](const LinearOperator& op) { return timeApply([&] { op.normal(x, y); }); };
    const SenseOperator per_coil(fourier, maps), batched(fourier, maps, kernel);
    std::printf("normal product E^H E, %d coils: per coil %.3f ms", data->coils, time(per_coil));
    for (int chunk : {1, 4, data->coils}) {
        if (cuda_kernel) cuda_kernel->setCoilChunk(chunk);
        std::printf(" | batched %d: %.3f ms", chunk, time(batched));
        if (!cuda_kernel) break;
    }
    std::printf("\n");
    if (cuda_kernel && cuda_kernel->everyAxisPruned()) {
        // The line kernels on every axis against cuFFT on the faster axes between a pad and a crop, in turns
        // (the single-coil product F^H F too: the kernel's own forward).
        for (int r = 0; r < 3; ++r) {
            double t[2][2];
            for (int every = 1; every >= 0; --every) {
                cuda_kernel->setEveryAxisPruned(every == 1);
                t[every][0] = time(batched);
                t[every][1] = timeApply([&] { kernel->forward(x, y); });
            }
            std::printf("every axis pruned / cuFFT on the faster axes: E^H E (%d coils) %.3f / %.3f ms = %.3f, F^H F %.3f / %.3f ms = %.3f\n",
                        data->coils, t[1][0], t[0][0], t[1][0] / t[0][0], t[1][1], t[0][1], t[1][1] / t[0][1]);
        }
        cuda_kernel->setEveryAxisPruned(true);
    }
    if (cuda_kernel) cuda_kernel->setCoilChunk(0);
    std::fflush(stdout);
}

// The stages outside CG the old way and the new, in the same process: prewhitening as a copy of the data
// set whitened in place against straight into the copy; F^H d coil by coil against all coils at once.
void beforeAfterRows(const std::shared_ptr<Backend>& b, const std::shared_ptr<const Dataset>& data) {
    for (int r = 0; r < 2; ++r) {
        auto t0 = Clock::now();
        {
            auto copy = std::make_shared<Dataset>(*data);
            prewhitenWithNoiseScan(*copy);
        }
        const double copy_then_whiten = since(t0);
        t0 = Clock::now();
        { const auto copy = prewhitenedCopy(*data); }
        const double straight = since(t0);
        const FourierMethod m{"nufft", kDefaultNufftTolerance};
        ReconstructionSession each(b), all(b);
        each.setDataset(data);
        all.setDataset(data);
        each.toeplitz(m);  // both with the NUFFT plans made (Q's first, as the solve orders them)
        all.toeplitz(m);
        t0 = Clock::now();
        for (int c = 0; c < data->coils; ++c) each.adjointData(c, m);
        b->synchronize();
        const double per_coil = since(t0);
        t0 = Clock::now();
        all.coilAdjoints(m);
        const double batched = since(t0);
        std::printf("before/after: prewhitening copy then in place %.3f s, straight into the copy %.3f s | F^H d coil by coil %.3f s,"
                    " all coils at once %.3f s\n", copy_then_whiten, straight, per_coil, batched);
    }
    std::fflush(stdout);
}

// One estimate of each method, its stages timed from the progress it reports; `print`: a row.
void mapsRows(const std::shared_ptr<Backend>& b, const std::shared_ptr<const Dataset>& data, const ComplexArray& truth,
              bool print) {
    for (CoilMapMethod method : {CoilMapMethod::Walsh, CoilMapMethod::Espirit}) {
        ReconstructionSession session(b);
        session.setDataset(data);
        // ESPIRiT: calibration fit 0-0.3 (its Toeplitz kernel to 0.03, then the coils' fits), the
        // calibration matrix to 0.35, A^H A's eigen-decomposition and the signal subspace's projection
        // to 0.5, G(x)'s kernels to 0.55, then the backend's coil field 0.55-1: coil images and object
        // to 0.595, the field to 0.64, eigenvectors to 0.955, their transfer to the host to 1.
        // Walsh: calibration fit 0-0.4 (kernel to 0.04), then the coil field 0.4-1: images and object
        // to 0.46, the covariance field to 0.52, eigenvectors to 0.94, their transfer to 1.
        const bool espirit = method == CoilMapMethod::Espirit;
        StageClock clock(espirit ? std::vector<double>{0.03, 0.3, 0.35, 0.5, 0.55, 0.595, 0.64, 0.955, 1.0}
                                 : std::vector<double>{0.04, 0.4, 0.46, 0.52, 0.94, 1.0});
        const Clock::time_point t0 = Clock::now();
        clock.t0 = t0;
        const CoilMaps& maps = session.coilMaps(method, clock.progress());
        const double total = since(t0);
        if (!print) continue;
        const CoilMapAgreement agree = compareCoilMaps(maps.maps, truth, maps.coils, maps.mask);
        std::printf("maps %-8s %8.3f s   stages:", toString(method).c_str(), total);
        const std::vector<const char*> names =
            espirit ? std::vector<const char*>{"Q", "fits", "A", "eig+projection", "kernels", "images+object", "G(x)",
                                               "eigenvectors", "to host"}
                    : std::vector<const char*>{"Q", "fits", "images+object", "covariance", "eigenvectors", "to host"};
        double prev = 0;
        for (std::size_t i = 0; i < clock.marks.size(); ++i) {
            const double at = clock.at[i] < 0 ? total : clock.at[i];
            std::printf(" %s %.3f", names[i], at - prev);
            prev = at;
        }
        std::printf("  (rest %.3f)   vs true maps in the mask: rms %.3f\n", total - prev, agree.rms_error);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        int n = 128, coils = 8, iterations = 60, repeats = 3;
        bool cpu = false, maps = true;
        bool preconditioner_only = false;  // only the preconditioner's rows
        bool lambda_change_only = false;   // of those, only the lambda change to 1 % of the long solve's image
        bool session_change_only = false;  // only the lambda change as the session makes it
        bool weighted_rows = false;        // only the whole rows, uniform and density-weighted
        bool whole_only = false;           // the whole rows and the normal product's, nothing after them
        std::string demo;  // a demo case instead (its ESPIRiT maps): the preconditioner's rows only
        std::string sense_maps = "espirit";  // the preconditioner's and the lambda change's maps: espirit, walsh, ring
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto value = [&]() -> int {
                if (i + 1 >= argc) throw InputError(a + " needs a value");
                return std::stoi(argv[++i]);
            };
            if (a == "--size") n = value();
            else if (a == "--coils") coils = value();
            else if (a == "--iterations") iterations = value();
            else if (a == "--repeats") repeats = value();
            else if (a == "--cpu") cpu = true;
            else if (a == "--no-maps") maps = false;
            else if (a == "--whole-only") whole_only = true;
            else if (a == "--demo" && i + 1 < argc) demo = argv[++i];
            else if (a == "--preconditioner-only") preconditioner_only = true;
            else if (a == "--lambda-change-only") preconditioner_only = lambda_change_only = true;
            else if (a == "--session-change-only") preconditioner_only = session_change_only = true;
            else if (a == "--data-weighting" && i + 1 < argc) weighted_rows = parseDataWeighting(argv[++i]) == DataWeighting::Density;
            else if (a == "--sense-maps" && i + 1 < argc) sense_maps = argv[++i];
            else throw InputError("unknown option " + a + " (--size, --coils, --iterations, --repeats, --cpu, --no-maps, --demo NAME, --preconditioner-only, --lambda-change-only, --session-change-only, --data-weighting W, --sense-maps espirit|walsh|ring, --whole-only)");
        }
        if (sense_maps != "ring") parseCoilMapMethod(sense_maps);  // bad names refused before any work
        std::shared_ptr<Backend> b;
        if (cpu) {
            b = createCpuBackend(Precision::Single);
        } else {
            std::string why;
            b = createCudaBackend(Precision::Single, 0, &why);
            if (!b) {
                std::printf("no GPU (%s): nothing to measure\n", why.c_str());
                return 0;
            }
        }
        if (!demo.empty()) {
            const std::shared_ptr<const Dataset> data = simulate(demoCase(demo));
            ReconstructionSession s(b);
            s.setDataset(data);
            const SenseCase sc{data, s.coilMaps(CoilMapMethod::Espirit), data->truth};
            std::printf("%s; SENSE on %s (%s, %d coils, M = %zu per coil), %d CG iterations\n", b->info().describe().c_str(), demo.c_str(),
                        data->grid.describe().c_str(), data->coils, data->samples(), iterations);
            LongSolves references(b, sc, 8 * iterations);
            if (!lambda_change_only) preconditionerRows(b, sc, references, iterations, repeats);
            sessionChangeRows(b, sc, references, iterations, repeats);
            lambdaChangeRows(b, sc, references, iterations, repeats);
            return 0;
        }
        ComplexArray truth_maps;
        const auto data = makeData(*b, n, coils, truth_maps);
        std::printf("%s; SENSE %d^3, %d coils, M = %zu per coil, %d CG iterations\n", b->info().describe().c_str(), n, coils,
                    data->samples(), iterations);
        {
            auto whitened = std::make_shared<Dataset>(*data);
            prewhitenWithNoiseScan(*whitened);
            const auto t0 = Clock::now();
            const CoilCompression plan = planCoilCompression(whitened->kspace, coils, std::max(1, coils - 2));
            const ComplexArray v = compressCoils(whitened->kspace, coils, plan);
            std::printf("compress to %d virtual coils (not in the whole): %.3f s\n", plan.virtual_coils, since(t0));
        }
        // The maps the estimates should find: the true ones whitened as the session whitens the data.
        ComplexArray whitened_maps = truth_maps;
        prewhiten(whitened_maps, coils, noiseCovariance(data->noise, coils));
        // The preconditioner's and the lambda change's maps: as a user's session has them, estimated from the data
        // (ESPIRiT: zero outside their mask, sum_c |S_c|^2 = 1 inside; Walsh: normalised), whose image is the
        // truth times the whitened true maps' root sum of squares (inside the mask) up to a phase; or the true
        // ring maps whitened (--sense-maps ring), whose image is the truth.
        SenseCase sc{data, {}, data->truth};
        if (sense_maps == "ring") {
            sc.maps = {whitened_maps, std::vector<std::uint8_t>(data->grid.voxels(), 1), coils, "ring of Gaussian bumps, whitened"};
        } else {
            ReconstructionSession s(b);
            s.setDataset(data);
            const auto t0 = Clock::now();
            sc.maps = s.coilMaps(parseCoilMapMethod(sense_maps));
            const std::size_t voxels = data->grid.voxels();
            std::size_t inside = 0;
            for (std::size_t v = 0; v < voxels; ++v) {
                double rss = 0;
                for (int c = 0; c < coils; ++c) rss += std::norm(whitened_maps[std::size_t(c) * voxels + v]);
                sc.truth[v] = sc.maps.mask[v] ? std::abs(data->truth[v]) * std::sqrt(rss) : 0.0;
                inside += sc.maps.mask[v] != 0;
            }
            const CoilMapAgreement agree = compareCoilMaps(sc.maps.maps, whitened_maps, coils, sc.maps.mask);
            std::printf("%s maps estimated by the session: %.3f s, mask %.1f %% of the grid, vs true maps in the mask rms %.3f\n",
                        sc.maps.source.c_str(), since(t0), 100.0 * double(inside) / double(voxels), agree.rms_error);
        }
        LongSolves references(b, sc, 8 * iterations);
        if (preconditioner_only) {
            if (!lambda_change_only && !session_change_only) preconditionerRows(b, sc, references, iterations, repeats);
            sessionChangeRows(b, sc, references, iterations, repeats);
            if (!session_change_only) lambdaChangeRows(b, sc, references, iterations, repeats);
            return 0;
        }
        run(b, data, truth_maps, iterations, PreconditionerKind::Circulant);  // warm-up: plans, cuFFT, the tuning cache
        if (weighted_rows) {
            run(b, data, truth_maps, iterations, PreconditionerKind::Circulant, DataWeighting::Density);  // its warm-up
            for (int r = 0; r < 2 * repeats; ++r) {
                const DataWeighting w = r % 2 ? DataWeighting::Density : DataWeighting::Uniform;
                const Row row = run(b, data, truth_maps, iterations, PreconditionerKind::Circulant, w);
                std::printf("%-8s whole %.3f s = prewhiten %.3f + D %.3f + Q %.3f + F^H d %.3f + W %.3f + solve %.3f (CG %.3f = %.2f ms/it)"
                            " | lambda change (to the cold residual: %zu its) %.3f s, (%d its) %.3f s\n",
                            toString(w).c_str(), row.t.at("whole"), row.t.at("prewhiten"), row.t.at("D"), row.t.at("Q"), row.t.at("F^H d"),
                            row.t.at("W"), row.t.at("solve"), row.solve.seconds, 1e3 * row.solve.seconds / iterations, row.relambda.history.size(),
                            row.t.at("lambda change"), std::max(1, iterations / 3), row.t.at("lambda change short"));
                std::fflush(stdout);
            }
            return 0;
        }
        // Before the stream-ordered pool (every buffer through cudaMalloc and cudaFree), then with it.
        for (int r = 0; r < 4 * repeats; ++r) {
            if (!cpu) cuda::setStreamOrderedAllocation(r >= 2 * repeats);
            const PreconditionerKind pk = r % 2 ? PreconditionerKind::Circulant : PreconditionerKind::None;
            const Row row = run(b, data, truth_maps, iterations, pk);
            const double cg = row.solve.seconds;
            std::printf("%s%-5s whole %.3f s = prewhiten %.3f + Q %.3f + F^H d %.3f + W %.3f + solve %.3f (CG %.3f = %.2f ms/it;"
                        " operator, rhs, image to host %.3f) + rest %.3f | lambda change (to the cold residual: %zu its) %.3f s (CG %.3f), (%d its) %.3f s\n",
                        cpu ? "" : r >= 2 * repeats ? "pool " : "cudaMalloc ", toString(pk).c_str(), row.t.at("whole"), row.t.at("prewhiten"), row.t.at("Q"), row.t.at("F^H d"), row.t.at("W"), row.t.at("solve"),
                        cg, 1e3 * cg / iterations, row.t.at("solve") - cg,
                        row.t.at("whole") - row.t.at("prewhiten") - row.t.at("Q") - row.t.at("F^H d") - row.t.at("W") - row.t.at("solve"),
                        row.relambda.history.size(), row.t.at("lambda change"), row.relambda.seconds, std::max(1, iterations / 3),
                        row.t.at("lambda change short"));
            std::fflush(stdout);
        }
        beforeAfterRows(b, data);
        normalRows(b, data, truth_maps);
        if (whole_only) return 0;
        // The maps that fit the whitened data: the image is the truth's estimate.
        preconditionerRows(b, sc, references, iterations, repeats);
        sessionChangeRows(b, sc, references, iterations, repeats);
        lambdaChangeRows(b, sc, references, iterations, repeats);
        if (maps) {
            mapsRows(b, data, whitened_maps, false);  // warm-up: the libraries' handles and kernels
            for (int r = 0; r < repeats; ++r) mapsRows(b, data, whitened_maps, true);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sense_bench: %s\n", e.what());
        return 1;
    }
}
