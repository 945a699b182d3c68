// reconstudio-cli: the engine on the command line. Subcommands glue the layers
// of recon/ together; no science lives here.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>

#include "arguments.hpp"
#include "json_text.hpp"
#include "batch.hpp"
#include "ct_commands.hpp"
#include "recipe_options.hpp"
#include "recon/backend/backend.hpp"
#include "recon/core/host_memory.hpp"
#include "recon/core/metrics.hpp"
#include "recon/core/version.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/output_guard.hpp"
#include "recon/io/dicom_io.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#ifdef RECONSTUDIO_HAVE_BENCHMARK
#include "benchmark.hpp"
#endif

namespace recon::cli {
namespace {

std::atomic<bool> g_cancel{false};
// Set while a stage runs that holds nothing a user could lose and cannot poll (simulating a
// demo case: the analytic phantom's k-space, seconds at 128^3): Ctrl-C then leaves at once.
std::atomic<const char*> g_abortable_stage{nullptr};
extern "C" void onInterrupt(int) {
    if (const char* stage = g_abortable_stage.load()) {
        // write(2) and _Exit are async-signal-safe; the message says what happened.
        const char head[] = "\nreconstudio-cli: cancelled while ";
        const char tail[] = "; nothing written\n";
        (void)!write(STDERR_FILENO, head, sizeof head - 1);
        (void)!write(STDERR_FILENO, stage, std::strlen(stage));
        (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
        std::_Exit(130);
    }
    if (g_cancel.exchange(true)) std::_Exit(130);  // a second Ctrl-C leaves at once
}

}  // namespace

AbortableStage::AbortableStage(const char* what) { g_abortable_stage.store(what); }
AbortableStage::~AbortableStage() { g_abortable_stage.store(nullptr); }

namespace {

// "a, b, c": the files a cancelled run wrote, or did not.
std::string commaList(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& x : items) s += (s.empty() ? "" : ", ") + x;
    return s;
}

const char* kUsage = R"(reconstudio-cli — non-Cartesian MRI and cone-beam CT reconstruction (gridding/FDK and iterative CG)

Usage: reconstudio-cli COMMAND [options]

Commands:
  compare     run gridding (trilinear, Kaiser-Bessel) and the iterative method on one
              data set and print method, seconds, PSNR, percent error (--json: JSON too)
  recon       reconstruct and write the result (format from --output's extension)
  simulate    make a data set (analytic phantom + trajectory + noise) and write it
  cases       list the built-in demo cases
  benchmark   time the backends (F^H d, Q, CG; paper's Figure 9); --help for options
  batch       one recipe over many data sets, locally or on Slurm (docs/BATCH.md)

Data (compare, recon):
  --case NAME            a built-in demo case (default: "default", 3D 64^3 radial)
  --input FILE           HDF5 (ReconStudio layout or ISMRMRD)
  --trajectory T --kspace K [--truth I] [--reference R] [--density W]
                         BART .cfl/.hdr arrays (names with or without .cfl)
  --units U              trajectory units: cycles-per-fov (default), cycles-per-voxel, radians
  --matrix NxN[xN]       grid size (overrides the file's)
  --basis B              voxel basis phi: box (default: sinc) | point (phi = 1; BART's phantom data)
  --frame K              a file of several frames (ISMRMRD slices, stack-of-stars partitions, contrasts,
                         repetitions): only frame K. Without it recon reconstructs every frame into one
                         stacked output (slices/partitions along z, contrasts x repetitions as NIfTI's 4th
                         dimension); compare takes frame 0 and says so
  --input F --trajectory T  an ISMRMRD file that stores no trajectory: one frame's k-space positions
                         (BART (3, readout, readouts), cycles per FOV)

Reconstruction:
  --lambda L|auto        regularisation weight, multiplies s = Q(0) (default: the case's, else 0.02;
                         sparse priors: tv 0.1, wavelet 0.2, anatomical-tv 1); auto: chosen from the
                         data (sparse: a fraction of the image's magnitude; quadratic: the
                         discrepancy principle with the noise of the outer k-space or a noise scan)
  --regularizer R        quadratic (CG): tikhonov | fd | anatomical (default fd);
                         sparse: tv | wavelet | anatomical-tv
  --priors LIST          instead of --regularizer and --lambda: a sum of sparse priors, each with its
                         own lambda (x s), e.g. tv:0.3,wavelet:0.02; kinds tv, tv-anisotropic,
                         wavelet, anatomical-tv (ADMM solves every sum)
  --wavelet W            wavelet of --regularizer wavelet: haar (default) | db4
  --sparse-solver S      auto (default: pogm for wavelet, admm otherwise) | admm | fista | pogm |
                         pdhg (ADMM's problem by primal-dual steps with a k-space preconditioner)
  --pdhg-sigma S         PDHG's dual steps against its primal one, in units of s (default 3; speed only)
  --pdhg-preconditioner P  PDHG's k-space preconditioner: density (default) | none
  --wavelet-shifts on|off|average  FISTA/POGM: a random cyclic shift of the wavelet grid per step (on, the
                     default), none, or each step's prox averaged over a fixed set of shifts (converges)
  --admm-inner N         CG iterations per ADMM step (default 5)
  --admm-threshold T     ADMM's shrinkage per step, a fraction of the image's magnitude: sets rho
                         (default 0.005; convergence speed only, not the solution)
  --admm-rho R           balanced (default: rho follows the primal and dual residuals) | spectral
                         (rho from spectral estimates where trusted, else balanced) | fixed
  --admm-relaxation A    ADMM's over-relaxation, in (0, 2) (default 1.6; 1: none)
  --admm-preconditioner P  ADMM's inner CG: circulant (default) | none
  --iterations N         CG iterations (default 60; ADMM: inner CG iterations in all;
                         FISTA: steps, one F^H F each)
  --tolerance T          stop when the relative residual < T (default 0: run all)
  --preconditioner P     quadratic CG: auto (default) | none | circulant (the inverse of F^H F + lambda s W^H W's
                         circulant approximation: fewer iterations, same solution; SENSE: corrected by the
                         maps' energy); auto: circulant for SENSE and for the anatomical prior on a GPU,
                         else none
  --start S              quadratic CG's and ADMM's start: zero (default) | gridding (F^H (w d) with
                         gridding's density weights, least-squares scaled: the same solution)
  --data-weighting W     the data term: uniform (least squares; default) | density
                         (weighted by gridding's density weights: another problem, whose early
                         iterates are good images; lambda's s = Q_D(0); quadratic and sparse priors)
  --precision P          float32 (default) | float64
  --backend B            auto (default) | cpu | cuda
  --method M             Fourier method: nufft (CPU default), direct, or a GPU kernel
  --nufft-tolerance E    NUFFT accuracy (default 1e-4)
  --coil-combine C       multi-coil data: sos (each coil solved, sum of squares; default) | sense
  --coil-maps M          SENSE coil maps: espirit (default; Uecker et al. 2014) | walsh (adaptive
                         combination, Walsh et al. 2000) | lowres (low-resolution images / their
                         root sum of squares) | FILE (BART cfl [x,y,z,coils], e.g. from bart ecalib)
  --virtual-coils K      compress the coils to K virtual coils (PCA) before reconstructing
  --gpus N|all|LIST      CUDA devices to split over: SENSE's coils (--coil-combine sense; CG stays
                         on the first) and GPU.Multi's voxels (--method multi|multi-exact-fast).
                         N: the first N GPUs; all: every visible GPU; LIST: device indices, e.g.
                         0,1,2,3 (one given GPU: 3,); a repeated index is a logical device of that
                         GPU on its own stream
  --threads N            CPU threads
  --json                 (compare) also print one JSON object as the last line
  --quiet                no progress bar

Output (recon):
  --output FILE          iterative image: .h5 (results), .cfl, .nii[.gz], .png
  --gridding-output FILE Kaiser-Bessel gridding image, same formats
  --coil-maps-output FILE  (--coil-combine sense) the coil maps the solve used, BART cfl
                         [x,y,z,coils] (zero outside their mask; --coil-maps FILE reads it back)
  --only M               gridding-trilinear | gridding-kb | iterative (default: all)
  --exact-records        every record's data term ||F x - d||^2 exact in the saved history, also where
                         the cheap expanded form falls below its accuracy (one forward NUFFT per such
                         record); without it only the last record's is
  --recipe FILE          settings from a recipe (docs/RECIPE.md); options typed here win
  --report FILE          (recon) device, iterations, PSNR/error as JSON
  --format dicom         --output is a new folder with one DICOM MR series per image

Simulate:
  --case NAME | --kind radial-3d|stack-of-spirals|radial-2d|spiral-2d --n N
  [--readouts R] [--readout L] [--undersampling U] [--snr DB] [--seed S] --output FILE

CT (cone-beam and fan-beam; docs/CONVENTIONS.md "Cone-beam CT"):
  --modality M           mr (default) | ct; a ct-* --case or a CT scan as --input implies ct
  simulate --modality ct [--case ct-2d|ct-2d-sparse|ct-2d-lowdose|ct-2d-short|ct-3d]
        [--volume NxN[xN]] [--voxel MM] [--views N] [--short-scan] [--detector COLS[xROWS]]
        [--pixel MM] [--sod MM] [--sdd MM] [--photons N] [--seed S] --output FILE.h5
                         Shepp-Logan with exact line integrals; --sod/--sdd: source to isocentre /
                         to detector; --photons: Poisson noise at N incident photons per pixel
  recon|compare --case ct-... | --input SCAN.h5: FDK and iterative weighted least squares
  --window W             FDK's ramp window: ram-lak (default) | shepp-logan | cosine | hamming | hann
  --ct-solver S          auto (default: os-sart for a noiseless scan, cg for one with counts)
                         | cg (penalised WLS: CG, ADMM for tv; 100 iterations)
                         | os-sart (no prior, x >= 0; 20 passes over all subsets)
  --regularizer R        CT (cg): tv (default; ADMM from the FDK image) | fd | tikhonov (CG);
                         --lambda multiplies s = trace(A^T W A)/voxels (defaults: tv auto:
                         0.25/sqrt(s n) + 0.0005 /mm, n the mean count; fd 0.1 (a case's own
                         when tuned), tikhonov 0.001)
  --subsets N            (os-sart) ordered subsets of the views (default 10; 1 = SART)
  --relaxation W         (os-sart) relaxation in (0, 2) (default 1)
  --unweighted           W = I even when the scan has counts (default: W = counts)
  --only M               (recon) fdk | iterative (default: both)
  --fdk-output FILE      (recon) the FDK volume (.nii[.gz] real part in 1/mm, .h5, .cfl, .png)

Batch (docs/BATCH.md):
  batch --recipe R --manifest M --output-dir D [--engine local|slurm] [-j N] [--gpus 0,1]
        [--partition P] [--time T] [--mem M] [--gpus-per-task G] [--max-parallel K]
        [--rows-per-task R]
                         M: a folder, a glob or a CSV (input + per-row overrides);
                         writes D/NAME.EXT per data set and D/summary.csv, D/summary.json;
                         a re-run skips rows complete for the same recipe
  batch status D         each row's state (Slurm's too); rewrites the summary
  batch retry D [-j N]   runs or resubmits only the failed and missing rows

Ctrl-C cancels within about a second at any stage (exit 130): recon writes what is complete
(finished gridding images; the last complete CG iterate) and names what it wrote and what not;
a second Ctrl-C leaves at once, writing nothing.
  --help, --version
)";

// Terminal progress, the engine's Monitor on the command line: one bar per CG
// iteration on a TTY, a line every 10 iterations otherwise; Ctrl-C cancels.
class ProgressBar final : public Monitor {
public:
    explicit ProgressBar(bool quiet) : Monitor(&g_cancel), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
    void expect(int coils, int iterations) {
        coils_ = coils;
        total_ = iterations;
    }
    void phase(Phase p, double f) override {
        if (quiet_ || !tty_ || p == Phase::Iterating) return;  // iterations have their own bar
        std::fprintf(stderr, "\r  %-8s %3.0f%%   ", toString(p), 100 * f);
        std::fflush(stderr);
    }
    void iteration(int coil, const IterationRecord& r, const ComplexArray*) override {
        const int coils = coils_, total = total_;
        if (quiet_) return;
        const double eta = r.iteration > 0 ? r.seconds / r.iteration * (total - r.iteration) : 0;
        char metrics[96] = "";
        if (r.has_truth) std::snprintf(metrics, sizeof metrics, "  PSNR %5.2f dB  err %5.2f%%", r.psnr_db, r.error_percent);
        char coilmsg[32] = "";
        if (coils > 1) std::snprintf(coilmsg, sizeof coilmsg, " coil %d/%d", coil + 1, coils);
        if (tty_) {
            const int width = 24, filled = total > 0 ? width * r.iteration / total : width;
            std::string bar(std::size_t(filled), '#');
            bar.resize(width, '.');
            std::fprintf(stderr, "\r  CG%s [%s] %3d/%d  res %.2e%s  ETA %.1fs ", coilmsg, bar.c_str(), r.iteration, total,
                         r.residual, metrics, eta);
            if (r.iteration == total) std::fprintf(stderr, "\n");
        } else if (r.iteration % 10 == 0 || r.iteration == total) {
            char outer[32] = "";
            if (r.outer_iteration > 0) std::snprintf(outer, sizeof outer, " (ADMM step %d)", r.outer_iteration);
            std::fprintf(stderr, "  CG%s %3d/%d%s  res %.2e%s\n", coilmsg, r.iteration, total, outer, r.residual, metrics);
        }
        std::fflush(stderr);
    }
    void done() {
        if (!quiet_ && tty_) std::fprintf(stderr, "\r%80s\r", "");
    }

private:
    bool quiet_, tty_;
    int coils_ = 1, total_ = 0;
};

std::array<int, 3> parseMatrix(const std::string& s) {
    std::array<int, 3> m{1, 1, 1};
    std::stringstream in(s);
    std::string part;
    int i = 0;
    while (std::getline(in, part, 'x')) {
        if (i >= 3) throw UsageError("--matrix expects NxN or NxNxN");
        if (part.empty() || part.size() > 5 || part.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("--matrix expects NxN or NxNxN with whole numbers, got '" + s + "'");
        m[i++] = std::stoi(part);
        if (m[i - 1] < 1 || m[i - 1] > 4096) throw UsageError("--matrix sizes must be between 1 and 4096, got '" + s + "'");
    }
    if (i < 2) throw UsageError("--matrix expects NxN or NxNxN");
    return m;
}

struct Loaded {
    std::shared_ptr<Dataset> data;
    std::optional<CaseSpec> spec;  // when it is a built-in case
    int frames = 1;                // in the input; data is frame `frame` of them
    int frame = 0;
    std::string frame_name;
};

// The data files named on the command line (none for a demo case).
InputSpec inputFiles(const Arguments& a) {
    InputSpec in;
    in.input = a.get("input");
    in.trajectory = a.get("trajectory");
    in.kspace = a.get("kspace");
    in.truth = a.get("truth");
    in.reference = a.get("reference");
    in.density = a.get("density");
    return in;
}

// What the data options name, read: one frame (--frame K, else frame 0 of a multi-frame input
// when `frame_zero` is set) or, without either, every frame.
Frames readInput(const Arguments& a, bool frame_zero) {
    InputSpec in = inputFiles(a);
    if (in.input.empty() && (in.trajectory.empty() || in.kspace.empty()))
        throw UsageError("BART data needs both --trajectory and --kspace");
    if (a.has("units")) in.units = parseTrajectoryUnits(a.get("units"));
    if (a.has("matrix")) in.matrix = parseMatrix(a.get("matrix"));
    if (a.has("basis")) in.basis = parseBasis(a.get("basis"));
    if (a.has("frame")) in.frame = a.integerIn("frame", 0, 0, 1 << 20);
    else if (frame_zero) in.frame = 0;
    return readFrames(in);
}

bool hasDataFiles(const Arguments& a) { return a.has("input") || a.has("trajectory") || a.has("kspace"); }

// `preloaded`: one frame read already (recon reads a file's frames first).
Loaded loadData(const Arguments& a, std::optional<Frames> preloaded = std::nullopt) {
    Loaded l;
    if (hasDataFiles(a)) {
        if (a.has("case")) throw UsageError("give either --case or a data file, not both");
        // compare (and recon of one frame) works on one frame: --frame K, else the first.
        Frames f = preloaded ? std::move(*preloaded) : readInput(a, true);
        l.data = std::move(f.frames.front().data);
        l.frames = f.total;
        l.frame = f.frames.front().number;
        l.frame_name = f.frames.front().name;
    } else {
        if (a.has("frame")) throw UsageError("--frame applies to data files; a demo case has one frame");
        if (a.has("matrix")) throw UsageError("--matrix applies to data files; a demo case has its own grid");
        l.spec = demoCase(a.get("case", "default"));
        const AbortableStage stage("simulating the demo case");
        l.data = simulate(*l.spec);
        if (a.has("basis")) l.data->basis = parseBasis(a.get("basis"));
    }
    return l;
}

std::vector<int> parseGpus(const std::string& v);

std::shared_ptr<Backend> makeBackend(const Arguments& a, bool quiet) {
    if (a.has("threads")) {  // more than a few per hardware thread only slows a run down
        const int most = std::max(64, 4 * int(std::thread::hardware_concurrency()));
        setCpuThreads(a.integerIn("threads", 0, 1, most));
    }
    std::string note;
    if (a.has("gpus")) {
        if (parseBackendChoice(a.get("backend", "auto")) == BackendChoice::Cpu)
            throw UsageError("--gpus needs the CUDA backend (--backend cuda or auto), not --backend cpu");
        const int first = parseGpus(a.get("gpus")).front();
        std::shared_ptr<Backend> b = createCudaBackend(parsePrecision(a.get("precision", "float32")), first, &note);
        if (!b) throw Error("--gpus: CUDA backend unavailable: " + note);
        if (!quiet) std::fprintf(stderr, "using %s (GPU %d)\n", b->info().describe().c_str(), first);
        return b;
    }
    std::shared_ptr<Backend> b = createBackend(parseBackendChoice(a.get("backend", "auto")),
                                               parsePrecision(a.get("precision", "float32")), &note);
    if (!quiet) std::fprintf(stderr, "%s\n", note.c_str());
    return b;
}

// --priors: KIND:LAMBDA terms joined by commas; tv-anisotropic is TV with the anisotropic norm.
std::vector<SolveOptions::PriorTerm> parsePriors(const std::string& list) {
    std::vector<SolveOptions::PriorTerm> terms;
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos)
            throw UsageError("--priors: '" + item + "' is not KIND:LAMBDA (e.g. tv:0.3,wavelet:0.02)");
        std::string kind = item.substr(0, colon);
        const std::string value = item.substr(colon + 1);
        SolveOptions::PriorTerm t{};
        t.anisotropic = kind == "tv-anisotropic";
        if (t.anisotropic) kind = "tv";
        t.kind = parseRegularizer(kind);
        if (!isSparse(t.kind))
            throw UsageError("--priors: '" + kind + "' is not a sparse prior (tv, tv-anisotropic, wavelet, anatomical-tv)");
        char* end = nullptr;
        t.lambda = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(t.lambda >= 0) || t.lambda > 1e6)
            throw UsageError("--priors: the lambda of '" + item + "' must be a number in [0, 1e6]");
        terms.push_back(t);
    }
    if (terms.empty()) throw UsageError("--priors: no prior given");
    return terms;
}

SolveOptions solveOptions(const Arguments& a, const std::optional<CaseSpec>& spec) {
    SolveOptions o;
    // λ multiplies s = Q(0): beyond 1e6 the penalty alone decides and the image is zero.
    o.regularizer = parseRegularizer(a.get("regularizer", spec ? spec->regularizer : "fd"));
    // A case's lambda is tuned for its quadratic prior; a sparse prior's lambda is a threshold in image units.
    const double default_lambda = isSparse(o.regularizer) ? defaultSparseLambda(o.regularizer) : spec ? spec->lambda : 0.02;
    // "auto": the session chooses (prepareJob); the default stands in until then.
    o.lambda = a.get("lambda", "") == "auto" ? default_lambda : a.numberIn("lambda", default_lambda, 0, 1e6);
    if (a.has("priors")) {
        if (a.has("regularizer") || a.has("lambda"))
            throw UsageError("--priors gives each prior its lambda: use it instead of --regularizer and --lambda");
        o.priors = parsePriors(a.get("priors"));
        o.regularizer = o.priors.front().kind;
        o.lambda = o.priors.front().lambda;
    }
    o.wavelet = parseWavelet(a.get("wavelet", toString(SolveOptions{}.wavelet)));
    o.admm_inner_iterations = a.integerIn("admm-inner", 5, 1, 1000);
    o.admm_threshold_scale = a.numberIn("admm-threshold", AdmmDefaults::threshold_scale, 1e-6, 10);
    const std::string rho = a.get("admm-rho", !SolveOptions{}.admm_balance_rho ? "fixed" : SolveOptions{}.admm_spectral_rho ? "spectral" : "balanced");
    if (rho != "spectral" && rho != "balanced" && rho != "fixed")
        throw UsageError("--admm-rho takes spectral, balanced or fixed, not '" + rho + "'");
    o.admm_balance_rho = rho != "fixed";
    o.admm_spectral_rho = rho == "spectral";
    o.admm_relaxation = a.numberIn("admm-relaxation", SolveOptions{}.admm_relaxation, 0.01, 1.99);
    o.admm_preconditioner = parsePreconditioner(a.get("admm-preconditioner", toString(SolveOptions{}.admm_preconditioner)));
    if (o.admm_preconditioner == PreconditionerKind::Auto) throw UsageError("--admm-preconditioner expects circulant or none");
    o.sparse_solver = parseSparseSolver(a.get("sparse-solver", "auto"));
    o.pdhg_dual_scale = a.numberIn("pdhg-sigma", SolveOptions{}.pdhg_dual_scale, 1e-6, 1e6);
    const std::string pdhg_p = a.get("pdhg-preconditioner", "density");
    if (pdhg_p != "density" && pdhg_p != "none") throw UsageError("--pdhg-preconditioner takes density or none, not '" + pdhg_p + "'");
    o.pdhg_density_weights = pdhg_p == "density";
    const std::string shifts = a.get("wavelet-shifts", "on");
    if (shifts != "on" && shifts != "off" && shifts != "average")
        throw UsageError("--wavelet-shifts takes on, off or average, not '" + shifts + "'");
    o.wavelet_shifts = parseWaveletShifts(shifts);
    o.iterations = a.integer("iterations", SolveOptions{}.iterations);
    o.tolerance = a.numberIn("tolerance", 0, 0, 1);
    o.method.name = a.get("method", "");
    // Below 1e-14 double precision cannot deliver; above 1e-2 the NUFFT is no longer the model.
    o.method.tolerance = a.numberIn("nufft-tolerance", kDefaultNufftTolerance, 1e-14, 1e-2);
    o.snapshot_every = 0;
    o.coil_combination = parseCoilCombination(a.get("coil-combine", "sos"));
    o.preconditioner = parsePreconditioner(a.get("preconditioner", toString(SolveOptions{}.preconditioner)));
    o.start = parseStartImage(a.get("start", toString(SolveOptions{}.start)));
    o.weighting = parseDataWeighting(a.get("data-weighting", toString(SolveOptions{}.weighting)));
    if (o.iterations < 0 || o.iterations > 100000) throw UsageError("--iterations must be between 0 and 100000");
    return o;
}

// --gpus: N (the first N GPUs), all, or a comma-separated list of device indices (repeats allowed).
std::vector<int> parseGpus(const std::string& v) {
    const int visible = cudaDeviceCount();
    if (visible == 0) throw UsageError("--gpus " + v + ": no CUDA GPU is visible to this program");
    std::vector<int> gpus;
    auto number = [&](const std::string& item) {
        if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("--gpus takes N, all, or device indices like 0,1 (got '" + v + "')");
        return std::stoi(item);
    };
    if (v == "all") {
        for (int i = 0; i < visible; ++i) gpus.push_back(i);
    } else if (v.find(',') == std::string::npos) {
        const int n = number(v);
        if (n < 1) throw UsageError("--gpus " + v + ": at least one GPU");
        if (n > visible) throw UsageError("--gpus " + v + ": " + std::to_string(visible) + " GPU(s) visible");
        for (int i = 0; i < n; ++i) gpus.push_back(i);
    } else {
        std::stringstream in(v);
        std::string item;
        while (std::getline(in, item, ',')) {
            const int g = number(item);
            if (g >= visible)
                throw UsageError("--gpus " + v + ": device " + item + " does not exist (" + std::to_string(visible) + " visible)");
            gpus.push_back(g);
        }
    }
    if (gpus.empty()) throw UsageError("--gpus " + v + ": no GPU visible");
    return gpus;
}

const std::set<std::string> kDataOptions = {"case", "input", "trajectory", "kspace", "truth", "reference", "density",
                                            "units", "matrix", "basis", "frame"};
const std::set<std::string> kSolveOptions = {"lambda", "regularizer", "priors", "wavelet", "admm-inner", "admm-threshold", "admm-rho",
                                             "admm-relaxation", "admm-preconditioner", "sparse-solver", "pdhg-sigma", "pdhg-preconditioner",
                                             "wavelet-shifts", "iterations",
                                             "tolerance", "precision", "backend", "method", "nufft-tolerance", "threads",
                                             "coil-combine", "coil-maps", "virtual-coils", "preconditioner", "start", "data-weighting", "gpus"};

std::set<std::string> merged(std::initializer_list<std::set<std::string>> sets) {
    std::set<std::string> out;
    for (const auto& s : sets) out.insert(s.begin(), s.end());
    return out;
}

// What compare and recon share: the backend, the data, a session on them, the options.
struct Job {
    std::shared_ptr<Backend> backend;
    Loaded loaded;
    std::unique_ptr<ReconstructionSession> session;
    SolveOptions opts;
    std::optional<LambdaChoice> auto_lambda;  // --lambda auto: what was chosen and why
    const Dataset& data() const { return *loaded.data; }
};

// `preloaded`: the frame to reconstruct, read already; `backend`: one made already (recon's frames share it).
Job prepareJob(const Arguments& a, bool quiet, std::optional<Frames> preloaded = std::nullopt,
               std::shared_ptr<Backend> backend = nullptr) {
    Job j;
    j.backend = backend ? std::move(backend) : makeBackend(a, quiet);
    j.loaded = loadData(a, std::move(preloaded));
    {
        // The file's noise scan whitens the coils before they are compressed (prepareCoils: that order).
        // The session would whiten too (setDataset); here it must come before the compression.
        Dataset& d = *j.loaded.data;
        const int k = a.has("virtual-coils") ? a.integerIn("virtual-coils", 0, 1, std::max(1, d.coils)) : 0;
        const CoilPreparation prep = prepareCoils(d, k);
        if (prep.noise_samples > 0 && !quiet)
            std::fprintf(stderr, "noise prewhitening: %d coils from %zu noise samples each\n", prep.coils, prep.noise_samples);
        if (prep.virtual_coils > 0 && !quiet)
            std::fprintf(stderr, "coil compression: %d coils -> %d virtual coils, %.4f%% of the energy kept\n", prep.coils,
                         prep.virtual_coils, 100 * prep.kept_energy);
    }
    j.session = std::make_unique<ReconstructionSession>(j.backend);
    j.session->setDataset(j.loaded.data);
    j.opts = solveOptions(a, j.loaded.spec);
    if (a.has("gpus")) {
        // The first device is the session's backend (CG runs there); each further entry is a
        // backend of its own: another GPU, or the same GPU again on a stream of its own.
        const std::vector<int> gpus = parseGpus(a.get("gpus"));
        std::vector<SplitDevice> devices{{j.backend, "GPU " + std::to_string(gpus[0])}};
        for (std::size_t i = 1; i < gpus.size(); ++i) {
            std::string why;
            std::shared_ptr<Backend> b = createCudaBackend(j.backend->info().precision, gpus[i], &why);
            if (!b) throw Error("--gpus: GPU " + std::to_string(gpus[i]) + ": " + why);
            const auto repeats = std::count(gpus.begin(), gpus.begin() + std::ptrdiff_t(i), gpus[i]);
            devices.push_back({b, "GPU " + std::to_string(gpus[i]) + (repeats ? " (stream " + std::to_string(repeats + 1) + ")" : "")});
        }
        j.session->setSenseDevices(std::move(devices));
        j.opts.method.devices = gpus;
        if (!quiet && gpus.size() > 1)
            std::fprintf(stderr, "--gpus: SENSE's coils and GPU.Multi split over %zu devices\n", gpus.size());
    }
    const std::string maps = a.get("coil-maps", toString(SolveOptions{}.coil_maps));
    std::optional<CoilMapMethod> method;
    try {
        method = parseCoilMapMethod(maps);
    } catch (const InputError&) {  // not a method's name: a file of maps
    }
    if (method) {
        j.opts.coil_maps = *method;
    } else {
        if (a.has("virtual-coils")) throw UsageError("--coil-maps FILE gives maps of the physical coils; it cannot be combined with --virtual-coils");
        const Dataset& d = *j.loaded.data;
        io::CflArray arr;
        try {
            arr = io::readCfl(maps, "coil maps");
        } catch (const InputError& e) {
            throw InputError(std::string(e.what()) + " (--coil-maps takes espirit, walsh, lowres or a BART cfl file)");
        }
        ComplexArray values(arr.data.size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = {arr.data[i].real(), arr.data[i].imag()};
        j.session->setCoilMaps(coilMapsFromArray(arr.dims, values, d.grid, d.coils, maps));
    }
    if (a.get("lambda", "") == "auto") {
        CallbackMonitor cancel_only({}, &g_cancel);
        j.auto_lambda = j.session->suggestLambda(j.opts, cancel_only);
        j.opts.lambda = j.auto_lambda->lambda;
        // The choice is a result, not progress: printed even with --quiet.
        std::fprintf(stderr, "lambda auto: %.4g x s (%s)\n", j.opts.lambda, j.auto_lambda->rule.c_str());
    }
    return j;
}

struct MethodRow {
    std::string name;
    double seconds = 0;
    std::optional<Quality> quality;
    std::optional<double> lambda;  // the iterative row's
};

SolveResult runIterative(ReconstructionSession& session, const SolveOptions& opts, ProgressBar& bar) {
    bar.expect(opts.coil_combination == CoilCombination::Sense ? 1 : session.dataset().coils, opts.iterations);
    return session.solve(opts, bar);
}

int cmdCompare(const std::vector<std::string>& args) {
    Arguments a(args, merged({kDataOptions, kSolveOptions}), {"json", "quiet", "no-floor"});
    const bool quiet = a.flag("quiet");
    Job job = prepareJob(a, quiet);
    const Dataset& d = job.data();
    ReconstructionSession& session = *job.session;
    const SolveOptions& opts = job.opts;
    Backend* backend = job.backend.get();
    const Loaded& l = job.loaded;
    ProgressBar bar(quiet);

    std::vector<MethodRow> rows;
    auto measure = [&](const ComplexArray& img, bool rescale) -> std::optional<Quality> {
        if (!d.hasTruth()) return std::nullopt;
        return measureQuality(img, d.truth, rescale);
    };
    // Each gridding row is charged its own density weights, even when the other computed them.
    GriddingResult tri = session.gridTrilinear(bar.progress(Phase::Gridding));
    rows.push_back({tri.name, tri.seconds, measure(tri.image, true), std::nullopt});
    GriddingResult kb = session.gridKaiserBessel(kaiserBesselGridding(), bar.progress(Phase::Gridding));
    rows.push_back({kb.name, kb.seconds, measure(kb.image, true), std::nullopt});
    const auto t0 = std::chrono::steady_clock::now();
    SolveResult it = runIterative(session, opts, bar);
    bar.done();
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The quadratic priors keep the row name "iterative" (tools/bart and scripts read it); multi-coil data
    // name the coil combination, and a sparse prior names itself after it (iterative-sense-tv).
    const std::string prior_suffix = isSparse(opts.regularizer) ? "-" + toString(opts.regularizer) : "";
    const std::string iterative_name =
        (d.coils > 1 ? "iterative-" + toString(opts.coil_combination) : std::string("iterative")) + prior_suffix;
    rows.push_back({iterative_name, total, measure(it.image, false), opts.lambda});
    if (d.coils > 1) {
        // Multi-coil data: SENSE and coil-by-coil sum of squares side by side.
        SolveOptions other = opts;
        other.coil_combination = opts.coil_combination == CoilCombination::Sense ? CoilCombination::SumOfSquares
                                                                                 : CoilCombination::Sense;
        const auto t1 = std::chrono::steady_clock::now();
        SolveResult alt = runIterative(session, other, bar);
        bar.done();
        const double alt_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        rows.push_back({"iterative-" + toString(other.coil_combination) + prior_suffix, alt_total, measure(alt.image, false), opts.lambda});
    }
    std::optional<Quality> floor;
    if (l.spec && d.hasTruth() && !a.flag("no-floor")) floor = cartesianFloor(*l.spec, d, *backend);

    std::printf("ReconStudio %s — %s\n", RECONSTUDIO_VERSION, d.name.c_str());
    if (l.frames > 1)
        std::printf("  frame %d of %d (%s); --frame K compares another\n", l.frame, l.frames, l.frame_name.c_str());
    std::printf("  grid %s, %zu samples (%s), %d coil(s), %s\n", d.grid.describe().c_str(), d.samples(),
                d.trajectory.kind.c_str(), d.coils, backend->info().describe().c_str());
    // Which density weights each gridding used (they differ by trajectory: docs/CONVENTIONS.md).
    auto weights = [&](DensityMethod m) { return d.density.empty() ? toString(m) : std::string("the data set's own"); };
    const std::string triWeights = weights(session.trilinearDensityMethod());
    const std::string kbWeights = weights(session.kaiserBesselDensityMethod());
    std::printf("  gridding density weights: trilinear %s (%.3f s), Kaiser-Bessel %s (%.3f s)\n", triWeights.c_str(),
                tri.density_seconds, kbWeights.c_str(), kb.density_seconds);
    std::printf("  %s: %s, lambda %.4g x s (s = Q(0) = %.4g), %d %s iterations, %s%s\n", iterative_name.c_str(),
                toString(opts.regularizer).c_str(), opts.lambda, it.lambda_scale, int(it.history.size()),
                it.solver == "fista" ? "FISTA" : it.solver == "pogm" ? "POGM" : "CG", it.method.c_str(), it.cancelled ? " (cancelled)" : "");
    std::printf("\n  %-20s %10s %10s %10s\n", "method", "seconds", "PSNR dB", "error %");
    for (const auto& r : rows) {
        if (r.quality)
            std::printf("  %-20s %10.3f %10.2f %10.2f\n", r.name.c_str(), r.seconds, r.quality->psnr_db, r.quality->error_percent);
        else
            std::printf("  %-20s %10.3f %10s %10s\n", r.name.c_str(), r.seconds, "-", "-");
    }
    if (floor) std::printf("  %-20s %10s %10.2f %10.2f   (full Cartesian data: the Gibbs floor)\n", "cartesian-floor", "-", floor->psnr_db, floor->error_percent);
    if (!d.hasTruth()) std::printf("  (no true image in this data set: PSNR and error need one)\n");

    if (a.flag("json")) {
        std::ostringstream j;
        j << "{\"version\":" << jsonString(RECONSTUDIO_VERSION) << ",\"case\":{\"name\":" << jsonString(d.name)
          << ",\"grid\":" << jsonString(d.grid.describe()) << ",\"dims\":" << d.grid.dims << ",\"samples\":" << d.samples()
          << ",\"trajectory\":" << jsonString(d.trajectory.kind) << ",\"coils\":" << d.coils
          << ",\"source\":" << jsonString(d.source) << ",\"frame\":" << l.frame << ",\"frames\":" << l.frames
          << "},\"backend\":" << jsonString(backend->info().describe())
          << ",\"lambda\":" << jsonNumber(opts.lambda) << ",\"lambda_scale\":" << jsonNumber(it.lambda_scale)
          << ",\"lambda_rule\":" << (job.auto_lambda ? jsonString(job.auto_lambda->rule) : std::string("null"))
          << ",\"regularizer\":" << jsonString(toString(opts.regularizer)) << ",\"solver\":" << jsonString(it.solver) << ",\"iterations\":" << it.history.size()
          << ",\"fourier_method\":" << jsonString(it.method) << ",\"cancelled\":" << (it.cancelled ? "true" : "false")
          << ",\"density_weights\":{\"gridding-trilinear\":" << jsonString(triWeights)
          << ",\"gridding-kb\":" << jsonString(kbWeights) << "}"
          << ",\"methods\":[";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& r = rows[i];
            j << (i ? "," : "") << "{\"name\":" << jsonString(r.name) << ",\"seconds\":" << jsonNumber(r.seconds)
              << ",\"psnr_db\":" << (r.quality ? jsonNumber(r.quality->psnr_db) : "null")
              << ",\"error_percent\":" << (r.quality ? jsonNumber(r.quality->error_percent) : "null");
            if (r.lambda) j << ",\"lambda\":" << jsonNumber(*r.lambda);
            j << "}";
        }
        j << "]";
        if (floor) j << ",\"floor\":{\"psnr_db\":" << jsonNumber(floor->psnr_db) << ",\"error_percent\":" << jsonNumber(floor->error_percent) << "}";
        j << "}";
        std::printf("%s\n", j.str().c_str());
    }
    return it.cancelled ? 130 : 0;
}

// Every image `recon` computed, one DICOM series each (recon/io/dicom_io.hpp).
DicomExportSpec dicomExportSpec(const Dataset& d, const ReconstructionRecord& rec, const SolveOptions& opts) {
    DicomExportSpec spec;
    spec.grid = d.grid;
    spec.study_description = "ReconStudio " + d.name;
    if (!rec.gridding_trilinear.empty())
        spec.series.push_back({&rec.gridding_trilinear, dicomGriddingDescription(false), "", "gridding-trilinear"});
    if (!rec.gridding_kb.empty())
        spec.series.push_back({&rec.gridding_kb, dicomGriddingDescription(true), "", "gridding-kb"});
    if (!rec.iterative.empty())
        spec.series.push_back({&rec.iterative, dicomIterativeDescription(rec.regularizer, rec.lambda, rec.iterations),
                               "lambda " + std::to_string(opts.lambda) + " x s (s = Q(0) = " +
                                   std::to_string(rec.lambda_scale) + "), regularizer " + rec.regularizer +
                                   ", method " + rec.method + ", " + std::to_string(rec.iterations) + " CG iterations",
                               "iterative"});
    return spec;
}

// recon's stages on one data set (one frame): gridding and the iterative solve as --only asks.
// Each stage runs unless Ctrl-C stopped an earlier one; what completed before it is kept.
struct ReconRun {
    ReconstructionRecord rec;
    std::string stopped_in;  // the stage a cancel interrupted
    bool cancelled = false;
    std::shared_ptr<const CoilMaps> coil_maps;  // SENSE: the maps the solve used
};

// `frame`: one of several frames, whose incomplete iterate is not written (no message about it).
ReconRun runRecon(Job& job, const std::string& only, bool gridding_output, ProgressBar& bar, bool frame = false) {
    const Dataset& d = job.data();
    ReconstructionSession& session = *job.session;
    const SolveOptions& opts = job.opts;
    ReconRun run;
    ReconstructionRecord& rec = run.rec;
    std::string& stopped_in = run.stopped_in;
    rec.grid = d.grid;
    rec.backend = job.backend->info().describe();
    auto stage = [&](const char* name, const auto& work) {
        if (!stopped_in.empty()) return;
        try {
            work();
        } catch (const Cancelled&) {
            stopped_in = name;
        }
    };
    auto gridding = [&](DensityMethod density, bool kb) {
        session.densityWeights(density, bar.progress(Phase::DensityWeights));
        const Progress p = bar.progress(Phase::Gridding);
        return kb ? session.gridKaiserBessel(kaiserBesselGridding(), p).image : session.gridTrilinear(p).image;
    };
    if (only == "all" || only == "gridding-trilinear")
        stage("trilinear gridding", [&] { rec.gridding_trilinear = gridding(session.trilinearDensityMethod(), false); });
    if (only == "all" || only == "gridding-kb" || gridding_output)
        stage("Kaiser-Bessel gridding", [&] { rec.gridding_kb = gridding(session.kaiserBesselDensityMethod(), true); });
    bool cancelled = !stopped_in.empty();
    if (only == "all" || only == "iterative") {
        stage("the iterative reconstruction, before its first iteration", [&] {
            SolveResult it = runIterative(session, opts, bar);
            bar.done();
            cancelled = it.cancelled;
            run.coil_maps = it.coil_maps;
            // Cancelled before one iteration finished: the zero start is no result.
            if (!it.history.empty()) rec.iterative = std::move(it.image);
            rec.lambda = opts.lambda;
            rec.lambda_scale = it.lambda_scale;
            rec.regularizer = toString(opts.regularizer);
            rec.method = it.method;
            rec.data_weighting = toString(opts.weighting);
            rec.iterations = int(it.history.size());
            rec.history = std::move(it.history);
            if (cancelled && rec.iterations > 0 && !frame)
                std::fprintf(stderr, "cancelled after %d iterations: writing the last complete iterate\n", rec.iterations);
            else if (cancelled)
                stopped_in = "the iterative reconstruction, before its first iteration";
        });
        bar.done();
    }
    run.cancelled = cancelled || !stopped_in.empty();
    return run;
}

// recon of an input with several frames (docs/FILE_FORMAT.md, "Frames"): each frame reconstructed
// in turn on one backend, the images stacked into one output per option: slices and partitions
// along z, contrasts and repetitions as NIfTI's 4th dimension. A cancel keeps only complete
// frames: the outputs hold the volumes whose frames all finished.
int reconFrames(const Arguments& a, Frames frames, const std::string& only, bool quiet) {
    const int total = int(frames.frames.size());
    const std::string input = a.get("input");
    if (a.get("format", "") == "dicom")
        throw UsageError("--format dicom writes one frame: input '" + input + "' holds " + std::to_string(total) +
                         " (" + frames.counts.describe() + "); choose one with --frame K");
    if (!frames.complete())
        throw InputError("input '" + input + "': its " + std::to_string(total) + " frames are not every combination of " +
                         frames.counts.describe() + ", so they do not stack into volumes; choose one with --frame K");
    const Grid frame_grid = frames.frames.front().data->grid;
    for (const Frame& f : frames.frames)
        if (f.data->grid != frame_grid)
            throw InputError("input '" + input + "': frame " + std::to_string(f.number) + " (" + f.name + ") is " +
                             f.data->grid.describe() + ", frame 0 " + frame_grid.describe() + ": they do not stack");
    // z: slices x partitions of a 2D frame; volumes: contrasts x repetitions (every frame, for 3D frames).
    const int along_z = frame_grid.dims == 2 ? frames.counts.slices * frames.counts.partitions : 1;
    if (frame_grid.dims == 3 && frames.counts.slices * frames.counts.partitions > 1)
        throw InputError("input '" + input + "': 3D frames of several slices or partitions do not stack; choose one with --frame K");
    const int volumes = total / along_z;
    Grid stacked = frame_grid;
    if (along_z > 1) {
        stacked = Grid::make3D(frame_grid.n[0], frame_grid.n[1], along_z);
        stacked.fov_mm = {frame_grid.fov_mm[0], frame_grid.fov_mm[1], frame_grid.fov_mm[2] * along_z};
    }
    for (const char* option : {"output", "gridding-output"}) {
        if (!a.has(option)) continue;
        const std::string path = a.get(option);
        const bool nifti = io::hasExtension(path, {".nii", ".nii.gz"});
        if (!nifti && (volumes > 1 || !io::hasExtension(path, {".cfl", ".mrd", ".ismrmrd"})))
            throw UsageError("--" + std::string(option) + " '" + path + "': input '" + input + "' holds " +
                             std::to_string(total) + " frames (" + frames.counts.describe() + "), written as one stack: " +
                             (volumes > 1 ? "NIfTI (.nii, .nii.gz) holds them" : "NIfTI (.nii, .nii.gz), .cfl or .mrd hold them") +
                             "; or choose one frame with --frame K");
    }
    if (!quiet)
        std::fprintf(stderr, "%s: %d frames (%s): stacked as %s%s\n", input.c_str(), total, frames.counts.describe().c_str(),
                     stacked.describe().c_str(), volumes > 1 ? (" x " + std::to_string(volumes) + " volumes").c_str() : "");
    std::shared_ptr<Backend> backend = makeBackend(a, quiet);
    ProgressBar bar(quiet);
    std::vector<ComplexArray> chosen, kb;  // per complete frame
    std::string stopped;                   // the frame a cancel interrupted, and where
    int iterations = 0;
    for (int k = 0; k < total; ++k) {
        Frame& f = frames.frames[std::size_t(k)];
        if (!quiet) std::fprintf(stderr, "frame %d/%d (%s)\n", k + 1, total, f.name.c_str());
        Frames one;
        one.frames.push_back(std::move(f));
        one.counts = frames.counts;
        one.total = total;
        Job job = prepareJob(a, true, std::move(one), backend);
        ReconRun run = runRecon(job, only, a.has("gridding-output"), bar, true);
        if (run.cancelled || g_cancel.load()) {
            stopped = "frame " + std::to_string(k) + " (" + job.loaded.frame_name + ")" +
                      (run.stopped_in.empty() ? std::string() : ", " + run.stopped_in);
            break;
        }
        iterations = run.rec.iterations;
        chosen.push_back(only == "gridding-trilinear" ? std::move(run.rec.gridding_trilinear)
                         : only == "gridding-kb"      ? std::move(run.rec.gridding_kb)
                                                      : std::move(run.rec.iterative));
        if (a.has("gridding-output")) kb.push_back(std::move(run.rec.gridding_kb));
    }
    const int complete_volumes = int(chosen.size()) / along_z;
    const int written_frames = complete_volumes * along_z;
    std::vector<std::string> written, skipped;
    auto write = [&](const char* option, const std::vector<ComplexArray>& images, const char* what) {
        const std::string path = a.get(option);
        if (complete_volumes == 0) {
            skipped.push_back(path + " (--" + option + ": no volume's frames were all complete)");
            return;
        }
        ComplexArray image;
        image.reserve(stacked.voxels() * std::size_t(complete_volumes));
        for (int k = 0; k < written_frames; ++k) image.insert(image.end(), images[std::size_t(k)].begin(), images[std::size_t(k)].end());
        ImageWriteOptions o;
        o.description = std::string(what) + ", " + std::to_string(written_frames) + " frames";
        o.volumes = complete_volumes;
        writeImage(path, stacked, image, o);
        written.push_back(path + (written_frames < total ? " (frames 0 to " + std::to_string(written_frames - 1) + ")" : ""));
        if (!quiet && stopped.empty()) std::fprintf(stderr, "wrote %s\n", path.c_str());
    };
    const char* chosen_name = only == "gridding-trilinear" ? "gridding-trilinear" : only == "gridding-kb" ? "gridding-kb" : "iterative";
    if (a.has("output")) write("output", chosen, chosen_name);
    if (a.has("gridding-output")) write("gridding-output", kb, "gridding-kb");
    const bool cancelled = !stopped.empty();
    if (a.has("report")) {
        std::ostringstream j;
        j << "{\"device\":" << jsonString(backend->info().describe()) << ",\"iterations\":" << iterations
          << ",\"cancelled\":" << (cancelled ? "true" : "false") << ",\"frames\":" << total
          << ",\"frames_written\":" << written_frames << ",\"psnr_db\":null,\"error_percent\":null}\n";
        io::writeTextAtomically(a.get("report"), j.str());
        written.push_back(a.get("report"));
    }
    if (cancelled) {
        std::fprintf(stderr, "cancelled during %s: %s; frames %d to %d not written%s\n", stopped.c_str(),
                     written.empty() ? "nothing written" : ("wrote " + commaList(written)).c_str(), written_frames, total - 1,
                     skipped.empty() ? "" : ("; not written: " + commaList(skipped)).c_str());
    }
    return cancelled ? 130 : 0;
}

// An HDF5 results file, which holds the iterations' history (every other format: an image).
bool isResultsFile(const std::string& path) { return path.size() > 3 && (path.ends_with(".h5") || path.ends_with(".hdf5")); }

int cmdRecon(const std::vector<std::string>& typed) {
    const std::vector<std::string> args = expandRecipe(typed);
    Arguments a(args, merged({kDataOptions, kSolveOptions, {"output", "gridding-output", "coil-maps-output", "only", "report", "format"}}),
                {"quiet", "exact-records"});
    const std::string format = a.get("format", "");
    if (!format.empty() && format != "dicom") throw UsageError("--format expects dicom (other formats follow --output's extension)");
    if (format == "dicom" && (!a.has("output") || a.has("gridding-output")))
        throw UsageError("--format dicom needs --output DIR (a new folder; every image computed becomes a series)");
    const bool quiet = a.flag("quiet");
    const std::string only = a.get("only", "all");
    if (only != "all" && only != "iterative" && only != "gridding-kb" && only != "gridding-trilinear")
        throw UsageError("--only expects gridding-trilinear, gridding-kb or iterative");
    if (!a.has("output") && !a.has("gridding-output")) throw UsageError("recon needs --output FILE (and/or --gridding-output FILE)");
    if (a.has("coil-maps-output") && (a.get("coil-combine", "sos") != "sense" || only == "gridding-kb" || only == "gridding-trilinear"))
        throw UsageError("--coil-maps-output needs --coil-combine sense and the iterative solve (sum of squares and gridding use no maps)");
    for (const char* option : {"output", "gridding-output", "coil-maps-output"}) a.nonEmpty(option);
    for (const char* option : {"output", "gridding-output", "coil-maps-output"})  // before any work: never write over the data
        if (a.has(option)) io::refuseOverwritingInputs(inputFiles(a), a.get(option), std::string("--") + option);
    std::optional<Frames> frames;
    if (hasDataFiles(a) && !a.has("case")) {
        frames = readInput(a, false);  // every frame, or the one --frame names
        if (frames->frames.size() > 1 && a.has("coil-maps-output"))
            throw UsageError("--coil-maps-output writes one frame's maps, but the input holds " +
                             std::to_string(frames->frames.size()) + " frames: choose one with --frame K");
        if (frames->frames.size() > 1) return reconFrames(a, std::move(*frames), only, quiet);
    }
    Job job = prepareJob(a, quiet, std::move(frames));
    // Quiet, without a results file, the iterations' cost terms go unused: formed for the last only.
    const bool saves_history = (a.has("output") && isResultsFile(a.get("output"))) ||
                               (a.has("gridding-output") && isResultsFile(a.get("gridding-output")));
    job.opts.record_costs = !quiet || saves_history;
    // Every record's data term exact costs a forward application per record on a good fit (2.4x the
    // iterations' time at 64^3): asked for, never implied; the last record is exact either way.
    job.opts.exact_records = a.flag("exact-records");
    const Dataset& d = job.data();
    const SolveOptions& opts = job.opts;
    ProgressBar bar(quiet);
    ReconRun run = runRecon(job, only, a.has("gridding-output"), bar);
    ReconstructionRecord& rec = run.rec;
    const std::string& stopped_in = run.stopped_in;
    const bool cancelled = run.cancelled;
    // What each output holds; an output whose image is not complete is not written.
    const ComplexArray& chosen = only == "gridding-trilinear" ? rec.gridding_trilinear
                                 : only == "gridding-kb"      ? rec.gridding_kb
                                                              : rec.iterative;
    const bool any_image = !rec.gridding_trilinear.empty() || !rec.gridding_kb.empty() || !rec.iterative.empty();
    std::vector<std::string> written, skipped;
    auto missing = [](const ComplexArray& img, const char* what) {
        return img.empty() ? std::optional<std::string>(std::string("the ") + what + " image was not complete") : std::nullopt;
    };
    auto write = [&](const std::string& option, const ComplexArray& img, const char* what) {
        const std::string path = a.get(option);
        const bool h5 = isResultsFile(path);
        // A results file holds every complete image; other formats the one image they are for.
        const std::optional<std::string> why = h5 ? (any_image ? std::nullopt : std::optional<std::string>("no image was complete"))
                                                  : missing(img, what);
        if (why) {
            skipped.push_back(path + " (--" + option + ": " + *why + ")");
            return;
        }
        if (h5)
            writeReconstruction(path, rec);
        else
            writeImage(path, d.grid, img, ImageWriteOptions{false, -1, 2, what});
        written.push_back(path);
        if (!quiet && !cancelled) std::fprintf(stderr, "wrote %s\n", path.c_str());
    };
    const char* chosen_name = only == "gridding-trilinear" ? "gridding-trilinear" : only == "gridding-kb" ? "gridding-kb" : "iterative";
    if (format == "dicom") {
        if (any_image) {
            writeDicomSeries(a.get("output"), dicomExportSpec(d, rec, opts));
            written.push_back(a.get("output") + " (DICOM)");
            if (!quiet && !cancelled) std::fprintf(stderr, "wrote DICOM series to %s\n", a.get("output").c_str());
        } else {
            skipped.push_back(a.get("output") + " (--output: no image was complete)");
        }
    } else {
        if (a.has("output")) write("output", chosen, chosen_name);
        if (a.has("gridding-output")) write("gridding-output", rec.gridding_kb, "gridding-kb");
    }
    if (a.has("coil-maps-output")) {
        const std::string path = a.get("coil-maps-output");
        if (const auto& coil_maps = run.coil_maps) {
            std::vector<cfloat> values(coil_maps->maps.size());
            for (std::size_t i = 0; i < values.size(); ++i) values[i] = cfloat(coil_maps->maps[i]);
            io::writeCfl(path, {long(d.grid.n[0]), long(d.grid.n[1]), long(d.grid.n[2]), long(coil_maps->coils)}, values);
            written.push_back(path);
            if (!quiet) std::fprintf(stderr, "wrote %s (%d coil maps, %s)\n", path.c_str(), coil_maps->coils, coil_maps->source.c_str());
        } else {
            skipped.push_back(path + " (--coil-maps-output: the solve stopped before its maps were made)");
        }
    }
    std::optional<Quality> quality;
    if (d.hasTruth() && !rec.iterative.empty()) quality = measureQuality(rec.iterative, d.truth, false);
    if (quality && !quiet) std::fprintf(stderr, "iterative: PSNR %.2f dB, error %.2f %%\n", quality->psnr_db, quality->error_percent);
    if (a.has("report")) {
        // What a batch row records (app/cli/batch.cpp): device, iterations, quality.
        std::ostringstream j;
        j << "{\"device\":" << jsonString(rec.backend) << ",\"iterations\":" << rec.iterations
          << ",\"cancelled\":" << (cancelled ? "true" : "false")
          << ",\"lambda\":" << (rec.iterative.empty() ? "null" : jsonNumber(rec.lambda))
          << ",\"psnr_db\":" << (quality ? jsonNumber(quality->psnr_db) : "null")
          << ",\"error_percent\":" << (quality ? jsonNumber(quality->error_percent) : "null") << "}\n";
        io::writeTextAtomically(a.get("report"), j.str());
        written.push_back(a.get("report"));
    }
    if (cancelled) {
        // Said even with --quiet: the user must know which files hold results and which do not.
        std::fprintf(stderr, "cancelled%s: %s%s\n", stopped_in.empty() ? "" : (" during " + stopped_in).c_str(),
                     written.empty() ? "nothing written" : ("wrote " + commaList(written)).c_str(),
                     skipped.empty() ? "" : ("; not written: " + commaList(skipped)).c_str());
    }
    return cancelled ? 130 : 0;
}

int cmdSimulate(const std::vector<std::string>& args) {
    Arguments a(args, {"case", "kind", "n", "readouts", "readout", "undersampling", "snr", "seed", "output"}, {"quiet"});
    if (!a.has("output")) throw UsageError("simulate needs --output FILE");
    a.nonEmpty("output");
    CaseSpec spec;
    if (a.has("case")) {
        spec = demoCase(a.get("case"));
    } else {
        spec.name = "simulated";
        spec.trajectory.kind = parseTrajectoryKind(a.get("kind", "radial-3d"));
    }
    spec.trajectory.n = a.integer("n", spec.trajectory.n);
    // 0 keeps the trajectory's own choice (fully sampled readouts, a readout of n samples).
    spec.trajectory.readouts = a.integerIn("readouts", spec.trajectory.readouts, 0, 1000000);
    spec.trajectory.readout = a.integerIn("readout", spec.trajectory.readout, 0, 65536);
    if (a.has("readout") && spec.trajectory.readout == 1) throw UsageError("--readout must be 0 (automatic) or at least 2");
    spec.trajectory.undersampling = a.numberIn("undersampling", spec.trajectory.undersampling, 0.01, 1000);
    spec.snr_db = a.numberIn("snr", spec.snr_db, -40, 200);
    spec.seed = std::uint64_t(a.integerIn("seed", int(spec.seed), 0, 2147483647));
    if (spec.trajectory.n < 2 || spec.trajectory.n > 1024) throw UsageError("--n must be between 2 and 1024");
    std::shared_ptr<Dataset> d;
    {
        const AbortableStage stage("simulating the data set");
        d = simulate(spec);
    }
    writeDataset(a.get("output"), *d);
    if (!a.flag("quiet"))
        std::fprintf(stderr, "wrote %s: %s grid, %zu samples (%s)\n", a.get("output").c_str(), d->grid.describe().c_str(),
                     d->samples(), d->source.c_str());
    return 0;
}

int cmdCases() {
    std::printf("%-18s %-18s %6s %9s %8s %8s\n", "case", "trajectory", "grid", "readouts", "SNR dB", "lambda");
    for (const auto& c : demoCases())
        std::printf("%-18s %-18s %6d %9d %8s %8.3g\n", c.name.c_str(), toString(c.trajectory.kind).c_str(), c.trajectory.n,
                    c.trajectory.readouts, c.snr_db > 0 ? std::to_string(int(c.snr_db)).c_str() : "-", c.lambda);
    return 0;
}

}  // namespace

std::unique_ptr<Monitor> makeProgressMonitor(bool quiet, int iterations) {
    auto bar = std::make_unique<ProgressBar>(quiet);
    bar->expect(1, iterations);
    return bar;
}

}  // namespace recon::cli

int main(int argc, char** argv) {
    using namespace recon::cli;
    recon::retainLargeHostAllocations();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::fputs(kUsage, stdout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
        std::printf("reconstudio-cli %s (CUDA backend %s)\n", RECONSTUDIO_VERSION,
                    recon::cudaCompiledIn() ? "built in" : "not built");
        return 0;
    }
    std::signal(SIGINT, onInterrupt);
    const std::string cmd = args[0];
    args.erase(args.begin());
    for (const auto& s : args)
        if (s == "--help" || s == "-h") {
            if (cmd != "benchmark") {
                std::fputs(kUsage, stdout);
                return 0;
            }
        }
    try {
        // CT (--modality ct, a ct-* case, a CT scan as --input): app/cli/ct_commands.cpp.
        const std::string modality = takeModality(args);
        const bool data_command = cmd == "simulate" || cmd == "recon" || cmd == "compare";
        if (modality == "ct" || (modality.empty() && data_command && looksLikeCt(args))) return runCtCommand(cmd, args);
        if (cmd == "compare") return cmdCompare(args);
        if (cmd == "recon") return cmdRecon(args);
        if (cmd == "simulate") return cmdSimulate(args);
        if (cmd == "cases") return cmdCases();
        if (cmd == "batch") return runBatchCommand(args);
        if (cmd == "benchmark") {
#ifdef RECONSTUDIO_HAVE_BENCHMARK
            return runBenchmark(args);
#else
            std::fprintf(stderr, "reconstudio-cli: this build has no benchmark\n");
            return 2;
#endif
        }
        std::fprintf(stderr, "reconstudio-cli: unknown command '%s' (try --help)\n", cmd.c_str());
        return 2;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "reconstudio-cli %s: %s (try --help)\n", cmd.c_str(), e.what());
        return 2;
    } catch (const recon::Cancelled&) {
        std::fprintf(stderr, "reconstudio-cli %s: cancelled; nothing written\n", cmd.c_str());
        return 130;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reconstudio-cli %s: error: %s\n", cmd.c_str(), e.what());
        return 1;
    }
}
