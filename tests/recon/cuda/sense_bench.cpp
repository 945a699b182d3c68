// Where the time of one SENSE reconstruction goes (issue 14's speed targets; not a test: prints figures).
//   sense_bench [--size 128] [--coils 8] [--iterations 60] [--repeats 3] [--cpu] [--no-maps] [--demo NAME] [--preconditioner-only]
//               [--data-weighting density] [--lambda-change-only]
// The reference paper's 3D radial case (M = 284,592 per coil at 128^3, scaled as N^3), smooth
// synthetic coil maps, data from the backend's NUFFT plus a correlated noise scan; data on the host
// in, image on the host out, in a warm process (one untimed run first, as a workstation that has
// reconstructed before). Each row is a fresh session on the same backend, stepped through the
// session's stages in the order a solve takes them, each timed on its own:
//   prewhiten (setDataset with the noise scan), compress (PCA to coils-2 virtual coils: reported,
//   not part of the whole), Q (Toeplitz kernel), F^H d of every coil, W (the prior), the solve
//   (its SENSE operator, right-hand side, CG, image to host), the λ change (warm re-solve), and
//   the coil maps (Walsh, ESPIRiT: their stages from the progress they report; one untimed estimate
//   of each first, then --repeats rows). On a GPU the whole rows run twice: every buffer through
//   cudaMalloc/cudaFree ("cudaMalloc"), then from the stream-ordered pool ("pool", the default). Between them: the normal product alone (per coil against
//   batched) and the λ change to convergence (its definition printed: PSNR against the truth by iteration).
// Then the preconditioner's rows (plain CG against SENSE's preconditioner: residuals and PSNR by
// iteration, iterations to plain CG's PSNR and to a converged image, cold and after a λ change, timed).
// --preconditioner-only: those rows alone (--lambda-change-only: of them the long solves and the λ change
// to 1 % of their image); --demo NAME: those rows on a demo case with its ESPIRiT maps.
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
    o.warm_start = true;
    t0 = Clock::now();
    row.relambda = session.solve(o);
    row.t["lambda change"] = since(t0);
    o.iterations = std::max(1, iterations / 3);
    o.lambda = 0.03;
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

// A monitor that keeps each iterate's PSNR against the truth (magnitudes; snapshots every iteration).
// ||x - ref|| / ||ref|| (complex images).
double relativeDistance(const ComplexArray& x, const ComplexArray& ref) { return measureQuality(x, ref, false).error_percent / 100; }

// With a reference image, also relativeDistance to it.
struct PsnrMonitor final : Monitor {
    const ComplexArray* truth = nullptr;
    const ComplexArray* reference = nullptr;
    std::vector<double> psnr, residual, distance;
    void iteration(int, const IterationRecord& r, const ComplexArray* snapshot) override {
        if (!snapshot) return;
        psnr.push_back(magnitudePsnr(*snapshot, *truth));
        residual.push_back(r.residual);
        if (reference) distance.push_back(relativeDistance(*snapshot, *reference));
    }
};

// The preconditioner's rows (SolveOptions::preconditioner none against circulant: SENSE's, with
// its diagonal correction). "Converged": every later iterate within 0.1 dB (PSNR against the truth)
// of a long solve's, the reference being the preconditioned solve at 8x the budget from zero. Per kind:
//   cold  - iterations from zero to plain CG's budget-iteration PSNR (within 0.1 dB), and to converged;
//   λ     - after the λ = 0.02 solve (the budget), warm at λ = 0.05: iterations to converged;
// then timed, each from a fresh session: the whole reconstruction (setDataset to the image on the
// host, as `run` times it) to converged, and the λ change to converged (the warm solve's call).
struct Curve {
    std::vector<double> psnr;
};
void preconditionerRows(const std::shared_ptr<Backend>& b, const std::shared_ptr<const Dataset>& data, const ComplexArray& maps,
                        const std::string& maps_source, int iterations, int repeats, bool lambda_change_only = false) {
    const double lambda0 = 0.02, lambda1 = 0.05;
    auto session = [&](ReconstructionSession& s) {
        s.setDataset(data);
        CoilMaps given;
        given.maps = maps;
        given.coils = data->coils;
        given.mask.assign(data->grid.voxels(), 1);
        given.source = maps_source;
        s.setCoilMaps(std::move(given));
    };
    auto options = [&](PreconditionerKind pk, double lambda, int its) {
        SolveOptions o;
        o.iterations = its;
        o.lambda = lambda;
        o.snapshot_every = 0;
        o.method = {"nufft", kDefaultNufftTolerance};
        o.coil_combination = CoilCombination::Sense;
        o.preconditioner = pk;
        return o;
    };
    auto curve = [&](ReconstructionSession& s, SolveOptions o) {
        PsnrMonitor monitor;
        monitor.truth = &data->truth;
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
    double reference[2];
    ComplexArray reference_image[2];
    for (int i = 0; i < 2; ++i) {
        ReconstructionSession s(b);
        session(s);
        const SolveResult r = s.solve(options(PreconditionerKind::Circulant, i ? lambda1 : lambda0, 8 * iterations));
        std::printf("  long solve %d: relative residual %.2e\n", i, r.history.back().residual);
        reference[i] = magnitudePsnr(r.complex_image, data->truth);
        reference_image[i] = r.complex_image;
    }
    double plain_budget = 0;
    std::printf("preconditioner (%s maps): long solves (circulant, %d its from zero) PSNR %.2f dB at lambda %.2f, %.2f dB at %.2f\n",
                maps_source.c_str(), 8 * iterations, reference[0], lambda0, reference[1], lambda1);
    for (PreconditionerKind pk : {PreconditionerKind::None, PreconditionerKind::Circulant}) {
        if (lambda_change_only) break;
        std::vector<double> cold, warm;
        {
            ReconstructionSession s(b);
            session(s);
            cold = curve(s, options(pk, lambda0, 4 * iterations));
            s.solve(options(pk, lambda0, iterations));
            SolveOptions o = options(pk, lambda1, 4 * iterations);
            o.warm_start = true;
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
                session(s);
                s.solve(options(pk, lambda0, int(to_budget)));
                whole_budget = since(t0);
            }
            if (cold_conv > 0) {
                const auto t0 = Clock::now();
                ReconstructionSession s(b);
                session(s);
                s.solve(options(pk, lambda0, int(cold_conv)));
                whole = since(t0);
            }
            if (warm_conv > 0) {
                ReconstructionSession s(b);
                session(s);
                s.solve(options(pk, lambda0, iterations));
                SolveOptions o = options(pk, lambda1, int(warm_conv));
                o.warm_start = true;
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
    // The lambda change by the image itself (issue 14: a converged image): iterations until
    // ||x - x_ref|| <= 1 % of ||x_ref||, x_ref the long solve at the new lambda, after a budget-iteration
    // cold solve at lambda0: the first change to lambda1, then back; recycled (kept_directions 0, the
    // default: x, x_c) against the plain restart (-1); then each change timed alone to that count.
    constexpr double kClose = 1e-2;
    std::printf("  lambda change to %g of the long solve's image (circulant; ref distance %.3g):\n", kClose,
                relativeDistance(reference_image[1], reference_image[0]));
    for (const int kept : {0, -1}) {
        auto change = [&](ReconstructionSession& s, int to, int cap, PsnrMonitor* monitor) {
            SolveOptions o = options(PreconditionerKind::Circulant, to ? lambda1 : lambda0, cap);
            o.warm_start = true;
            o.kept_directions = kept;
            o.snapshot_every = monitor ? 1 : 0;
            Monitor none;
            s.solve(o, monitor ? static_cast<Monitor&>(*monitor) : none);
        };
        std::size_t its[2] = {0, 0};
        {
            ReconstructionSession s(b);
            session(s);
            SolveOptions o = options(PreconditionerKind::Circulant, lambda0, iterations);
            o.kept_directions = kept;
            s.solve(o);
            for (const int to : {1, 0}) {
                PsnrMonitor m;
                m.truth = &data->truth;
                m.reference = &reference_image[to];
                change(s, to, 4 * iterations, &m);
                for (std::size_t i = 0; i < m.distance.size() && !its[1 - to]; ++i)
                    if (m.distance[i] <= kClose) its[1 - to] = i + 1;
                std::printf("    kept %2d, lambda -> %.2f: distance", kept, to ? lambda1 : lambda0);
                for (std::size_t i : {1, 2, 3, 5, 10, 20, 40})
                    if (i <= m.distance.size()) std::printf(" %zu:%.2e", i, m.distance[i - 1]);
                std::printf(" | to %g at its %zu\n", kClose, its[1 - to]);
            }
        }
        std::printf("    kept %2d timed: first change (%zu its), back (%zu its):", kept, its[0], its[1]);
        for (int r = 0; r < repeats; ++r) {
            if (!its[0] || !its[1]) break;
            ReconstructionSession s(b);
            session(s);
            SolveOptions o = options(PreconditionerKind::Circulant, lambda0, iterations);
            o.kept_directions = kept;
            s.solve(o);
            auto t0 = Clock::now();
            change(s, 1, int(its[0]), nullptr);
            const double first = since(t0);
            t0 = Clock::now();
            change(s, 0, int(its[1]), nullptr);
            std::printf(" | %.4f s, %.4f s", first, since(t0));
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
    auto time = [&](const LinearOperator& op) {
        for (int i = 0; i < 3; ++i) op.normal(x, y);
        b->synchronize();
        const int reps = 20;
        const auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i) op.normal(x, y);
        b->synchronize();
        return 1e3 * since(t0) / reps;
    };
    const SenseOperator per_coil(fourier, maps), batched(fourier, maps, kernel);
    std::printf("normal product E^H E, %d coils: per coil %.3f ms", data->coils, time(per_coil));
    for (int chunk : {1, 4, data->coils}) {
        if (cuda_kernel) cuda_kernel->setCoilChunk(chunk);
        std::printf(" | batched %d: %.3f ms", chunk, time(batched));
        if (!cuda_kernel) break;
    }
    if (cuda_kernel) cuda_kernel->setCoilChunk(0);
    std::printf("\n");
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
        bool weighted_rows = false;        // only the whole rows, uniform and density-weighted
        std::string demo;  // a demo case instead (its ESPIRiT maps): the preconditioner's rows only
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
            else if (a == "--demo" && i + 1 < argc) demo = argv[++i];
            else if (a == "--preconditioner-only") preconditioner_only = true;
            else if (a == "--lambda-change-only") preconditioner_only = lambda_change_only = true;
            else if (a == "--data-weighting" && i + 1 < argc) weighted_rows = parseDataWeighting(argv[++i]) == DataWeighting::Density;
            else throw InputError("unknown option " + a + " (--size, --coils, --iterations, --repeats, --cpu, --no-maps, --demo NAME, --preconditioner-only, --lambda-change-only, --data-weighting W)");
        }
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
            const CoilMaps espirit = s.coilMaps(CoilMapMethod::Espirit);
            std::printf("%s; SENSE on %s (%s, %d coils, M = %zu per coil), %d CG iterations\n", b->info().describe().c_str(), demo.c_str(),
                        data->grid.describe().c_str(), data->coils, data->samples(), iterations);
            preconditionerRows(b, data, espirit.maps, "ESPIRiT", iterations, repeats, lambda_change_only);
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
        if (preconditioner_only) {
            preconditionerRows(b, data, whitened_maps, "ring of Gaussian bumps, whitened", iterations, repeats, lambda_change_only);
            return 0;
        }
        run(b, data, truth_maps, iterations, PreconditionerKind::Circulant);  // warm-up: plans, cuFFT, the tuning cache
        if (weighted_rows) {
            run(b, data, truth_maps, iterations, PreconditionerKind::Circulant, DataWeighting::Density);  // its warm-up
            for (int r = 0; r < 2 * repeats; ++r) {
                const DataWeighting w = r % 2 ? DataWeighting::Density : DataWeighting::Uniform;
                const Row row = run(b, data, truth_maps, iterations, PreconditionerKind::Circulant, w);
                std::printf("%-8s whole %.3f s = prewhiten %.3f + D %.3f + Q %.3f + F^H d %.3f + W %.3f + solve %.3f (CG %.3f = %.2f ms/it)"
                            " | lambda change (%d its) %.3f s, (%d its) %.3f s\n",
                            toString(w).c_str(), row.t.at("whole"), row.t.at("prewhiten"), row.t.at("D"), row.t.at("Q"), row.t.at("F^H d"),
                            row.t.at("W"), row.t.at("solve"), row.solve.seconds, 1e3 * row.solve.seconds / iterations, iterations,
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
                        " operator, rhs, image to host %.3f) + rest %.3f | lambda change (%d its) %.3f s (CG %.3f), (%d its) %.3f s\n",
                        cpu ? "" : r >= 2 * repeats ? "pool " : "cudaMalloc ", toString(pk).c_str(), row.t.at("whole"), row.t.at("prewhiten"), row.t.at("Q"), row.t.at("F^H d"), row.t.at("W"), row.t.at("solve"),
                        cg, 1e3 * cg / iterations, row.t.at("solve") - cg,
                        row.t.at("whole") - row.t.at("prewhiten") - row.t.at("Q") - row.t.at("F^H d") - row.t.at("W") - row.t.at("solve"),
                        iterations, row.t.at("lambda change"), row.relambda.seconds, std::max(1, iterations / 3),
                        row.t.at("lambda change short"));
            std::fflush(stdout);
        }
        beforeAfterRows(b, data);
        normalRows(b, data, truth_maps);
        // The maps that fit the whitened data: the image is the truth's estimate.
        preconditionerRows(b, data, whitened_maps, "ring of Gaussian bumps, whitened", iterations, repeats);
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
