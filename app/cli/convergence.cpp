#include "convergence.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <cstdio>
#include <sstream>
#include <vector>

#include "arguments.hpp"
#include "json_text.hpp"
#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/io/file_util.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kLambdaChangeTolerance = 1e-4;  // 1e-3 is met in 1-5 iterations on every demo case
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

CaseSpec caseOf(const std::string& text) {
    const auto at = text.find('@');
    CaseSpec spec = demoCase(text.substr(0, at));
    if (at == std::string::npos) return spec;
    int n = 0;
    try {
        n = std::stoi(text.substr(at + 1));
    } catch (const std::exception&) {
        throw UsageError("--convergence: '" + text + "' is not NAME@N");
    }
    if (n < 16 || n > 512) throw UsageError("--convergence: grid sizes must be 16..512");
    const int dims = dimsOf(spec.trajectory.kind);
    const double f = double(n) / spec.trajectory.n;
    // Radial readouts scale as N^(d-1) at a fixed undersampling; spiral interleaves (per partition) as N.
    const bool radial = spec.trajectory.kind == TrajectoryKind::Radial3D || spec.trajectory.kind == TrajectoryKind::GoldenAngleRadial2D;
    spec.trajectory.readouts = std::max(1, int(std::lround(spec.trajectory.readouts * std::pow(f, radial ? dims - 1 : 1))));
    spec.trajectory.n = n;
    spec.name = text;
    return spec;
}

struct Reach {
    int iterations = 0;   // CG iterations run (to the target, or the cap)
    double seconds = 0;   // wall time of the solve() call
    double cpu_seconds = 0;  // the process's CPU time (all threads) in it: steadier on a shared machine
    double psnr = 0;      // at the last iteration
    double first_psnr = 0;  // at the first iteration
    double setup_seconds = 0;  // from the call to the first iteration's record (Q, F^H d, ... built)
    bool reached = false;
    // Each setup phase's first and last progress report, seconds from the call (-1: none): where the setup goes.
    std::array<double, 4> phase_from{-1, -1, -1, -1}, phase_to{-1, -1, -1, -1};
};

// "density weights 0.001-0.052 s, Q 0.052-0.101 s, ...": the setup phases that reported, in order.
std::string setupStages(const Reach& r) {
    std::string out;
    char buf[96];
    for (Phase p : {Phase::DensityWeights, Phase::Gridding, Phase::ToeplitzKernel, Phase::AdjointData}) {
        const std::size_t i = std::size_t(p);
        if (r.phase_to[i] < 0) continue;
        std::snprintf(buf, sizeof buf, "%s%s %.3f-%.3f s", out.empty() ? "" : ", ", toString(p), r.phase_from[i], r.phase_to[i]);
        out += buf;
    }
    std::snprintf(buf, sizeof buf, "%sfirst step %.3f s", out.empty() ? "" : ", ", r.setup_seconds);
    return out + buf;
}

// A Reach as a JSON object: every figure, whichever study wrote it.
std::string reachJson(const Reach& r) {
    std::ostringstream js;
    js << "{\"iterations\":" << r.iterations << ",\"seconds\":" << jsonNumber(r.seconds) << ",\"cpu_seconds\":" << jsonNumber(r.cpu_seconds)
       << ",\"setup_seconds\":" << jsonNumber(r.setup_seconds) << ",\"psnr_db\":" << jsonNumber(r.psnr)
       << ",\"first_psnr_db\":" << jsonNumber(r.first_psnr) << ",\"reached\":" << (r.reached ? "true" : "false") << "}";
    return js.str();
}

// Solves until the record's PSNR reaches `target` (with `band` > 0: comes within `band` of it from
// either side), or its relative residual o.tolerance (or `cap` iterations): the monitor cancels the
// run at the next iteration.
Reach solveTo(ReconstructionSession& s, SolveOptions o, double target, int cap, double band = 0, ComplexArray* image = nullptr) {
    std::atomic<bool> stop{false};
    Reach r;
    o.iterations = cap;
    o.snapshot_every = 0;
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    CallbackMonitor monitor(
        [&](int, const IterationRecord& rec, const ComplexArray*) {
            if (r.iterations == 0) {
                r.first_psnr = rec.psnr_db;
                r.setup_seconds = since(t0);
            }
            ++r.iterations;  // of this run (a warm run's records count on from the last)
            r.psnr = rec.psnr_db;
            const bool close = band > 0 ? std::abs(rec.psnr_db - target) <= band : rec.psnr_db >= target;
            if (close || (o.tolerance > 0 && rec.residual < o.tolerance)) {
                r.reached = true;
                stop = true;
            }
        },
        &stop,
        [&](Phase p, double) {
            const std::size_t i = std::size_t(p);
            if (i >= r.phase_to.size()) return;
            const double t = since(t0);
            if (r.phase_from[i] < 0) r.phase_from[i] = t;
            r.phase_to[i] = t;
        });
    SolveResult result = s.solve(o, monitor);
    r.seconds = since(t0);
    r.cpu_seconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
    // SENSE's complex image: what its snapshots (warmChange's distances) are.
    if (image) *image = std::move(result.complex_image.empty() ? result.image : result.complex_image);
    return r;
}

// ||x - ref|| / ||ref|| (NaN when the sizes differ or ref is zero).
double relativeDistance(const ComplexArray& x, const ComplexArray& ref) {
    if (x.size() != ref.size() || ref.empty()) return std::numeric_limits<double>::quiet_NaN();
    double d = 0, r = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        d += std::norm(x[i] - ref[i]);
        r += std::norm(ref[i]);
    }
    return r > 0 ? std::sqrt(d / r) : std::numeric_limits<double>::quiet_NaN();
}

// A warm lambda change to two marks: the PSNR within `band` dB of the converged image's, and the
// image within `distance` of it (relative; every iterate is compared, on the host, the comparison's
// own time left out of the seconds). Runs until both are met or `cap` iterations.
struct ChangeReach {
    Reach band, close;
    double distance = 0;  // at the last iteration
};
ChangeReach warmChange(ReconstructionSession& s, SolveOptions o, double target_psnr, double band, const ComplexArray& ref,
                       double distance, int cap) {
    std::atomic<bool> stop{false};
    ChangeReach r;
    o.iterations = cap;
    o.snapshot_every = 1;
    o.warm_start = true;
    o.lambda_change_to_cold_accuracy = false;  // to this study's marks, not the session's stop
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    double aside = 0, aside_cpu = 0;  // the comparisons' own time
    int it = 0;
    CallbackMonitor monitor(
        [&](int, const IterationRecord& rec, const ComplexArray* image) {
            const double t = since(t0) - aside, c = double(std::clock() - c0) / CLOCKS_PER_SEC - aside_cpu;
            const auto a0 = Clock::now();
            const std::clock_t ac0 = std::clock();
            ++it;
            for (Reach* x : {&r.band, &r.close}) {
                if (x->reached) continue;
                x->iterations = it;
                x->psnr = rec.psnr_db;
                x->seconds = t;
                x->cpu_seconds = c;
            }
            if (std::abs(rec.psnr_db - target_psnr) <= band) r.band.reached = true;
            if (image) r.distance = relativeDistance(*image, ref);
            if (r.distance <= distance) r.close.reached = true;
            if (r.band.reached && r.close.reached) stop = true;
            aside += since(a0);
            aside_cpu += double(std::clock() - ac0) / CLOCKS_PER_SEC;
        },
        &stop);
    s.solve(o, monitor);
    return r;
}

// Median wall seconds of `repeats` applications of `op` to a random-ish vector.
double applySeconds(const LinearOperator& op, int repeats = 7) {
    ComplexArray host(op.inSize());
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = cdouble(std::sin(0.1 * double(i)), std::cos(0.37 * double(i)));
    Vector x = op.space().fromHost(host), y = op.space().make(op.outSize());
    op.forward(x, y);  // plans, scratch
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        op.space().synchronize();
        const auto t0 = Clock::now();
        op.forward(x, y);
        op.space().synchronize();
        t.push_back(since(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::string cell(const Reach& r) {
    char b[64];
    std::snprintf(b, sizeof b, "%s%3d it %8.3f s", r.reached ? " " : ">", r.iterations, r.seconds);
    return b;
}

// Iterations, wall seconds and CPU seconds.
std::string cellWithCpu(const Reach& r) {
    char b[64];
    std::snprintf(b, sizeof b, "%s%3d it %7.3f %7.3f", r.reached ? " " : ">", r.iterations, r.seconds, r.cpu_seconds);
    return b;
}

}  // namespace

void runConvergenceStudy(const std::string& cases, const std::string& regularizers, BackendChoice choice,
                         Precision precision, int iterations, const std::string& json_path) {
    std::string note;
    std::shared_ptr<Backend> backend = createBackend(choice, precision, &note);
    const std::string device = backend->info().describe();
    // What is compared with plain CG from zero: the circulant preconditioner, the gridding start, both,
    // and density-weighted least squares (another problem: its iterates chase the same PSNR).
    struct Variant {
        const char* name;
        PreconditionerKind preconditioner;
        StartImage start;
        DataWeighting weighting = DataWeighting::Uniform;
    };
    const std::vector<Variant> variants = {{"circulant", PreconditionerKind::Circulant, StartImage::Zero},
                                           {"gridding start", PreconditionerKind::None, StartImage::Gridding},
                                           {"gridding+circulant", PreconditionerKind::Circulant, StartImage::Gridding},
                                           {"density-weighted", PreconditionerKind::None, StartImage::Zero, DataWeighting::Density}};
    std::printf("Convergence with and without the circulant preconditioner and the gridding start, %s\n", device.c_str());
    std::printf("target: plain CG's PSNR after %d iterations from zero; times are whole reconstructions (Q, F^H d, the\n"
                "preconditioner's eigenvalues and M^{-1}, the density weights and F^H (w d) of the gridding start, CG) from\n"
                "a fresh session; lambda x2: warm iterations and time (M^{-1}'s rebuild included) to a relative residual\n"
                "of %g at the new lambda ('>': not reached); each cell: iterations, wall s, CPU s (all threads)\n\n",
                iterations, kLambdaChangeTolerance);
    std::printf("%-22s %-10s %-11s %8s %8s | %-22s", "case", "grid", "prior", "lambda", "PSNR", "plain");
    for (const Variant& v : variants) std::printf(" | %-22s", v.name);
    std::printf(" | %-22s | %-22s | %-22s\n", "lambda x2 plain", "lambda x2 circulant", "lambda x2 weighted");
    std::ostringstream json;
    json << "[";
    bool first = true;
    for (const std::string& name : split(cases)) {
        const CaseSpec spec = caseOf(name);
        std::fprintf(stderr, "simulating %s ...\n", name.c_str());
        const auto data = simulate(spec);
        {
            // One application of F^H F and of M^{-p} both ways (the eigenvalues' values do not matter
            // to the time): what a preconditioned iteration adds, on the N grid (the solve's) against
            // the same operator as a Toeplitz product on the 2N grid.
            ReconstructionSession s(backend);
            s.setDataset(data);
            const Grid& g = data->grid;
            std::vector<double> eig(g.voxels());
            for (std::size_t i = 0; i < eig.size(); ++i) eig[i] = 1.0 + double(i % 17);
            const double fhf = applySeconds(*s.toeplitz({"", kDefaultNufftTolerance}));
            const double toep = applySeconds(*backend->toeplitzFromQ(g, inverseCirculantKernel(g, eig, {}, 0, 0.5)));
            const double ngrid = applySeconds(*inverseCirculant(*backend, g, eig, {}, 0, 0.5));
            std::printf("%s, one application (median of 7): F^H F %.2f ms; M^-p through the Toeplitz product %.2f ms, "
                        "on the N grid %.2f ms\n", name.c_str(), 1e3 * fhf, 1e3 * toep, 1e3 * ngrid);
        }
        const std::vector<std::string> regs = regularizers == "case" ? std::vector<std::string>{spec.regularizer} : split(regularizers);
        for (const std::string& reg : regs) {
            SolveOptions o;
            o.preconditioner = PreconditionerKind::None;  // the baseline is plain CG, whatever auto would pick
            o.regularizer = parseRegularizer(reg);
            if (isSparse(o.regularizer)) throw UsageError("--convergence: the preconditioner is for the quadratic priors");
            o.lambda = reg == spec.regularizer ? spec.lambda : (o.regularizer == RegularizerKind::AnatomicalFiniteDifference ? 30 : 0.2);
            const double lambda2 = 2 * o.lambda;
            // Plain CG, whole reconstruction from a fresh session; then the targets.
            ReconstructionSession plain(backend);
            plain.setDataset(data);
            Reach p = solveTo(plain, o, 1e300, iterations);
            p.reached = true;
            const double target = p.psnr;
            // The lambda change: warm from each method's image above until the relative residual at
            // the new lambda is below kLambdaChangeTolerance (a PSNR target is met at once there).
            SolveOptions warm = o;
            warm.lambda = lambda2;
            warm.warm_start = true;
            warm.tolerance = kLambdaChangeTolerance;
            const Reach p2 = solveTo(plain, warm, 1e300, 4 * iterations);

            std::vector<Reach> reached;
            Reach c2, w2;
            for (const Variant& v : variants) {
                ReconstructionSession s(backend);
                s.setDataset(data);
                SolveOptions ov = o;
                ov.preconditioner = v.preconditioner;
                ov.start = v.start;
                ov.weighting = v.weighting;
                reached.push_back(solveTo(s, ov, target, 2 * iterations));
                if (v.preconditioner == PreconditionerKind::Circulant && v.start == StartImage::Zero) {
                    SolveOptions warmc = warm;
                    warmc.preconditioner = PreconditionerKind::Circulant;
                    c2 = solveTo(s, warmc, 1e300, 4 * iterations);
                }
                if (v.weighting == DataWeighting::Density) {
                    SolveOptions warmw = warm;
                    warmw.weighting = DataWeighting::Density;
                    w2 = solveTo(s, warmw, 1e300, 4 * iterations);
                }
            }

            std::printf("%-22s %-10s %-11s %8.3g %8.2f | %s", name.c_str(), data->grid.describe().c_str(), reg.c_str(), o.lambda,
                        target, cellWithCpu(p).c_str());
            for (const Reach& r : reached) std::printf(" | %s", cellWithCpu(r).c_str());
            std::printf(" | %s | %s | %s\n", cellWithCpu(p2).c_str(), cellWithCpu(c2).c_str(), cellWithCpu(w2).c_str());
            std::fflush(stdout);
            json << (first ? "" : ",") << "{\"case\":" << jsonString(name) << ",\"grid\":" << jsonString(data->grid.describe())
                 << ",\"regularizer\":" << jsonString(reg) << ",\"lambda\":" << jsonNumber(o.lambda)
                 << ",\"target_psnr_db\":" << jsonNumber(target) << ",\"plain\":" << reachJson(p);
            for (std::size_t i = 0; i < variants.size(); ++i) json << "," << jsonString(variants[i].name) << ":" << reachJson(reached[i]);
            json << ",\"lambda2_tolerance\":" << jsonNumber(kLambdaChangeTolerance) << ",\"lambda2_plain\":" << reachJson(p2)
                 << ",\"lambda2_circulant\":" << reachJson(c2) << ",\"lambda2_weighted\":" << reachJson(w2) << ",\"device\":" << jsonString(device) << "}";
            first = false;
        }
    }
    json << "]\n";
    if (!json_path.empty()) io::writeTextAtomically(json_path, json.str());  // never a half-written file
}

void runLambdaChangeStudy(const std::string& cases, const std::string& regularizers, BackendChoice choice, Precision precision,
                          int iterations, DataWeighting weighting, int kept_directions, CoilCombination coils,
                          const std::string& json_path) {
    constexpr double kBand = 0.1;         // dB from the converged image's PSNR: "converged" (issue 17)
    constexpr double kConverged = 1e-4;   // the references' relative residual
    constexpr double kDistance = 1e-2;    // ||x - x_ref|| / ||x_ref||: "converged" by the image itself
    std::string note;
    std::shared_ptr<Backend> backend = createBackend(choice, precision, &note);
    const std::string device = backend->info().describe();
    std::printf("A lambda change, warm, %s, data term %s, %d kept directions, coils by %s\n", device.c_str(),
                toString(weighting).c_str(), kept_directions, toString(coils).c_str());
    std::printf("cold: a fresh session's %d iterations (whole: Q, F^H d, weights, CG); references: cold solves to a\n"
                "relative residual of %g at lambda/2, 2 lambda and lambda, the last left resident; then lambda x2, back\n"
                "(x0.5) and on to lambda/2 (x0.5 again), warm, until the PSNR is within %.1f dB of the reference's\n"
                "('>': not reached in %d iterations);\n"
                "each cell: iterations, wall s, CPU s (all threads; M^{-1}'s rebuild included where there is one); 'close':\n"
                "until ||x - x_ref|| / ||x_ref|| <= %g, x_ref the converged image at the new lambda ('refs': the two\n"
                "references' distance, what the change moves)\n\n",
                iterations, kConverged, kBand, 2 * iterations, kDistance);
    std::printf("%-14s %-11s %7s | %-22s %7s | %7s %7s %7s %8s | %-22s | %-22s | %-22s | %-22s | %-22s | %-22s\n", "case", "prior",
                "lambda", "cold", "PSNR", "ref 2x", "ref 1x", "ref .5x", "refs", "lambda x2, 0.1 dB", "lambda x2, close",
                "lambda x0.5, 0.1 dB", "lambda x0.5, close", "on to x0.5, 0.1 dB", "on to x0.5, close");
    std::ostringstream json;
    json << "[";
    bool first = true;
    for (const std::string& name : split(cases)) {
        const CaseSpec spec = caseOf(name);
        std::fprintf(stderr, "simulating %s ...\n", name.c_str());
        const auto data = simulate(spec);
        const std::vector<std::string> regs = regularizers == "case" ? std::vector<std::string>{spec.regularizer} : split(regularizers);
        for (const std::string& reg : regs) {
            SolveOptions o;
            o.regularizer = parseRegularizer(reg);
            if (isSparse(o.regularizer)) throw UsageError("--lambda-change: for the quadratic priors (--sparse measures the others)");
            o.lambda = reg == spec.regularizer ? spec.lambda : (o.regularizer == RegularizerKind::AnatomicalFiniteDifference ? 30 : 0.2);
            o.weighting = weighting;
            o.kept_directions = kept_directions;
            o.coil_combination = coils;
            ReconstructionSession s(backend);
            s.setDataset(data);
            Reach cold = solveTo(s, o, 1e300, iterations);
            cold.reached = true;
            SolveOptions ref = o;
            ref.tolerance = kConverged;
            ref.lambda = 2 * o.lambda;
            ComplexArray x_ref2, x_ref1, x_refh;
            ref.lambda = 0.5 * o.lambda;
            const Reach refh = solveTo(s, ref, 1e300, 20 * iterations, 0, &x_refh);
            ref.lambda = 2 * o.lambda;
            const Reach ref2 = solveTo(s, ref, 1e300, 20 * iterations, 0, &x_ref2);
            ref.lambda = o.lambda;
            const Reach ref1 = solveTo(s, ref, 1e300, 20 * iterations, 0, &x_ref1);  // resident: the converged image at lambda
            SolveOptions warm = o;
            warm.lambda = 2 * o.lambda;
            const ChangeReach up = warmChange(s, warm, ref2.psnr, kBand, x_ref2, kDistance, 2 * iterations);
            warm.lambda = o.lambda;
            const ChangeReach down = warmChange(s, warm, ref1.psnr, kBand, x_ref1, kDistance, 2 * iterations);
            warm.lambda = 0.5 * o.lambda;  // on to a lambda not solved in this session's warm path
            const ChangeReach on = warmChange(s, warm, refh.psnr, kBand, x_refh, kDistance, 2 * iterations);
            // The session's own change (SolveOptions::lambda_change_to_cold_accuracy): after a fresh cold solve of the
            // budget at lambda, to 2 lambda until the cold solve's residual; its distance to the converged image against
            // that of a cold budget solve at 2 lambda (what a user would otherwise wait for).
            ComplexArray x_change, x_cold2;
            ReconstructionSession u(backend), c2(backend), v(backend);
            u.setDataset(data);
            c2.setDataset(data);
            v.setDataset(data);
            SolveOptions change_opts = o;
            change_opts.lambda = 2 * o.lambda;
            // Measured against a solve converged further than the references above (relative residual 1e-7 or the
            // precision's floor): a cold solve to 1e-4 shares the cold path's missing components and favours it.
            ComplexArray x_conv2;
            SolveOptions tight = change_opts;
            tight.tolerance = 1e-7;
            solveTo(c2, tight, 1e300, 20 * iterations, 0, &x_conv2);
            solveTo(c2, change_opts, 1e300, iterations, 0, &x_cold2);
            const double cold_distance = relativeDistance(x_cold2, x_conv2);
            solveTo(u, o, 1e300, iterations);
            change_opts.warm_start = true;
            Reach change = solveTo(u, change_opts, 1e300, iterations, 0, &x_change);
            change.reached = true;  // the session's own stop, not a mark of this study
            const double change_distance = relativeDistance(x_change, x_conv2);
            // How many warm iterations the cold budget's distance itself takes (this study's mark, not a rule).
            solveTo(v, o, 1e300, iterations);
            const ChangeReach as_cold = warmChange(v, change_opts, ref2.psnr, kBand, x_conv2, cold_distance, 2 * iterations);
            std::printf("%-14s %-11s %7.3g | %s %7.2f | %7.2f %7.2f %7.2f %8.2e | %s | %s | %s | %s | %s | %s\n", name.c_str(), reg.c_str(),
                        o.lambda, cellWithCpu(cold).c_str(), cold.psnr, ref2.psnr, ref1.psnr, refh.psnr, relativeDistance(x_ref1, x_ref2),
                        cellWithCpu(up.band).c_str(), cellWithCpu(up.close).c_str(), cellWithCpu(down.band).c_str(),
                        cellWithCpu(down.close).c_str(), cellWithCpu(on.band).c_str(), cellWithCpu(on.close).c_str());
            std::printf("  the session's lambda x2 after a cold %d (to that solve's residual): %s, %.2e from the solve to 1e-7;"
                        " a cold %d at 2 lambda: %.2e, reached warm in %s\n", iterations, cellWithCpu(change).c_str(), change_distance,
                        iterations, cold_distance, cellWithCpu(as_cold.close).c_str());
            std::fflush(stdout);
            json << (first ? "" : ",") << "{\"case\":" << jsonString(name) << ",\"grid\":" << jsonString(data->grid.describe())
                 << ",\"regularizer\":" << jsonString(reg) << ",\"lambda\":" << jsonNumber(o.lambda)
                 << ",\"weighting\":" << jsonString(toString(weighting)) << ",\"band_db\":" << jsonNumber(kBand)
                 << ",\"cold\":" << reachJson(cold) << ",\"reference_2x\":" << reachJson(ref2) << ",\"reference_1x\":" << reachJson(ref1)
                 << ",\"kept_directions\":" << kept_directions << ",\"coil_combination\":" << jsonString(toString(coils))
                 << ",\"distance_target\":" << jsonNumber(kDistance)
                 << ",\"references_distance\":" << jsonNumber(relativeDistance(x_ref1, x_ref2)) << ",\"lambda_x2\":" << reachJson(up.band)
                 << ",\"lambda_x2_close\":" << reachJson(up.close) << ",\"lambda_x05\":" << reachJson(down.band)
                 << ",\"lambda_x05_close\":" << reachJson(down.close) << ",\"reference_05x\":" << reachJson(refh)
                 << ",\"lambda_x2_session\":" << reachJson(change) << ",\"lambda_x2_session_distance\":" << jsonNumber(change_distance)
                 << ",\"cold_2x_distance\":" << jsonNumber(cold_distance) << ",\"lambda_x2_to_cold_distance\":" << reachJson(as_cold.close)
                 << ",\"lambda_x05_on\":" << reachJson(on.band) << ",\"lambda_x05_on_close\":" << reachJson(on.close) << ",\"device\":" << jsonString(device) << "}";
            first = false;
        }
    }
    json << "]\n";
    if (!json_path.empty()) io::writeTextAtomically(json_path, json.str());  // never a half-written file
}

void runSparseConvergenceStudy(const std::string& cases, const std::string& priors, const std::string& weightings,
                               const std::string& solver_list, const std::vector<double>& lambda_factors, BackendChoice choice, Precision precision, int reference,
                               const std::string& json_path) {
    constexpr double kBand = 0.1;  // dB: "converged" (issue 13's speed target)
    std::string note;
    std::shared_ptr<Backend> backend = createBackend(choice, precision, &note);
    const std::string device = backend->info().describe();
    std::printf("Sparse priors to convergence, %s\n", device.c_str());
    std::printf("target: within %.1f dB of the PSNR after %d iterations (a fresh session's cold solve); whole: a fresh\n"
                "session, Q, F^H d, ||F^H F|| (FISTA/POGM) and the solve, data on the host to image on the host;\n"
                "lambda x2: warm from the image above until within %.1f dB of a cold %d-iteration solve at 2 lambda\n"
                "('>': not reached in %d iterations; setup: the whole run's time to its first iteration; 'start': the\n"
                "PSNR of the warm run's first iteration); data: the data term, uniform least squares or density-weighted\n"
                "(another problem: its lambda is the uniform one's times r_D / r, densityWeightedSparseLambda)\n\n",
                kBand, reference, kBand, reference, reference);
    std::printf("%-14s %-12s %-8s %-8s %7s %8s %8s | %-20s %8s | %8s %8s %-20s\n", "case", "prior", "solver", "data", "lambda", "PSNR",
                "ref s", "whole to target", "setup s", "PSNR 2x", "start", "lambda x2 warm");
    std::ostringstream json;
    json << "[";
    bool first = true;
    std::vector<DataWeighting> data_terms;
    for (const std::string& w : split(weightings)) data_terms.push_back(parseDataWeighting(w));
    if (data_terms.empty()) throw UsageError("--data-weighting: expected uniform, density or both (uniform,density)");
    for (const std::string& name : split(cases)) {
        const CaseSpec spec = caseOf(name);
        std::fprintf(stderr, "simulating %s ...\n", name.c_str());
        const auto data = simulate(spec);
        // The weights the weighted rows' lambda is carried over with (a session of its own: the measured ones start empty).
        std::vector<double> weights;
        if (std::find(data_terms.begin(), data_terms.end(), DataWeighting::Density) != data_terms.end()) {
            // Three fresh sessions: the first in the process also pays the device's one-time costs.
            std::string seconds;
            DensityMethod method{};
            for (int run = 0; run < 3; ++run) {
                ReconstructionSession w(backend);
                w.setDataset(data);
                const auto t0 = Clock::now();
                method = w.weightingDensityMethod();
                weights = w.densityWeights(method);
                char buf[32];
                std::snprintf(buf, sizeof buf, "%s%.3f", run ? " / " : "", since(t0));
                seconds += buf;
            }
            std::printf("%s: the weighted rows' density weights, %s: %s s (first in the process / two more fresh sessions; inside their whole times)\n",
                        name.c_str(), toString(method).c_str(), seconds.c_str());
        }
        for (const std::string& prior : split(priors))
        for (const DataWeighting weighting : data_terms) {
            const RegularizerKind kind = parseRegularizer(prior);
            if (!isSparse(kind)) throw UsageError("--sparse: '" + prior + "' is not a sparse prior (tv, wavelet, anatomical-tv)");
            // The wavelet's rows: FISTA and POGM with random shifts, FISTA with the averaged rule (POGM refuses it).
            std::vector<std::pair<SparseSolver, WaveletShifts>> solvers = {{SparseSolver::Admm, WaveletShifts::Random}};
            if (kind == RegularizerKind::Wavelet)
                solvers = {{SparseSolver::Fista, WaveletShifts::Random}, {SparseSolver::Pogm, WaveletShifts::Random},
                           {SparseSolver::Fista, WaveletShifts::Averaged}};
            if (!solver_list.empty()) {
                solvers.clear();
                for (const std::string& s : split(solver_list)) solvers.push_back({parseSparseSolver(s), WaveletShifts::Random});
            }
            for (const auto& [solver, shifts] : solvers)
            for (const double factor : lambda_factors) {
                SolveOptions o;
                o.regularizer = kind;
                o.weighting = weighting;
                o.lambda = factor * (weighting == DataWeighting::Density ? densityWeightedSparseLambda(defaultSparseLambda(kind), *data, weights)
                                                                         : defaultSparseLambda(kind));
                o.sparse_solver = solver;
                o.wavelet_shifts = shifts;
                const std::string label = toString(solver) + (shifts == WaveletShifts::Averaged ? "+avg" : "");
                SolveOptions o2 = o;
                o2.lambda = 2 * o.lambda;
                // The references: cold solves of `reference` iterations at lambda and 2 lambda.
                ReconstructionSession ref(backend);
                ref.setDataset(data);
                Reach r1 = solveTo(ref, o, 1e300, reference);
                Reach r2 = solveTo(ref, o2, 1e300, reference);
                // The measured runs: a fresh session to within kBand of r1, then lambda x2 warm.
                ReconstructionSession s(backend);
                s.setDataset(data);
                const Reach whole = solveTo(s, o, r1.psnr, reference, kBand);
                SolveOptions warm = o2;
                warm.warm_start = true;
                warm.lambda_change_to_cold_accuracy = false;  // to the band, not the session's stop
                const Reach change = solveTo(s, warm, r2.psnr, reference, kBand);
                std::printf("%-14s %-12s %-8s %-8s %7.3g %8.2f %8.3f | %s %8.3f | %8.2f %8.2f %s\n", name.c_str(), prior.c_str(),
                            label.c_str(), toString(weighting).c_str(), o.lambda, r1.psnr, r1.seconds, cell(whole).c_str(), whole.setup_seconds,
                            r2.psnr, change.first_psnr, cell(change).c_str());
                std::printf("  whole's setup: %s\n", setupStages(whole).c_str());
                std::fflush(stdout);
                json << (first ? "" : ",") << "{\"case\":" << jsonString(name) << ",\"grid\":" << jsonString(data->grid.describe())
                     << ",\"samples\":" << data->samples() << ",\"prior\":" << jsonString(prior)
                     << ",\"solver\":" << jsonString(toString(solver)) << ",\"data_weighting\":" << jsonString(toString(weighting))
                     << ",\"wavelet_shifts\":" << jsonString(toString(shifts))
                     << ",\"lambda\":" << jsonNumber(o.lambda)
                     << ",\"band_db\":" << jsonNumber(kBand) << ",\"reference\":" << reachJson(r1) << ",\"reference_2x\":" << reachJson(r2)
                     << ",\"whole\":" << reachJson(whole) << ",\"lambda_x2\":" << reachJson(change) << ",\"device\":" << jsonString(device)
                     << "}";
                first = false;
            }
        }
    }
    json << "]\n";
    if (!json_path.empty()) io::writeTextAtomically(json_path, json.str());  // never a half-written file
}

}  // namespace recon::cli
