#include "benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "arguments.hpp"
#include "convergence.hpp"
#include "toeplitz_timing.hpp"
#include "json_text.hpp"
#include "recon/backend/backend.hpp"
#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/core/conventions.hpp"
#include "recon/core/metrics.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/operators/direct_sums.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/priors/priors.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/normal_cg.hpp"
#include "recon/trajectory/trajectories.hpp"
#ifdef RECONSTUDIO_HAVE_CUDA
#include "recon/cuda/cuda_backend.hpp"
#include "recon/cuda/direct_sums.hpp"
#include "recon/cuda/nufft_gpu.hpp"
#include "recon/cuda/tuning.hpp"
#endif

namespace recon::cli {
namespace {

constexpr const char* kUsage = R"(usage: reconstudio-cli benchmark [options]

Times F^H d for every version of the reference paper (Stone et al. 2008, Fig. 9)
and this program's faster methods, then Q, CG and whole reconstructions, on the
paper's case: a 3D radial trajectory, 128^3 voxels, M = 284,592, float32.

  --sizes LIST       grid sizes to run, comma separated (default 128; the paper's
                     case). M scales with N^3 (Nyquist radial). The full version
                     table runs at 128 and below; larger sizes run the fast methods.
  --samples M        samples at N = 128 (default 284592)
  --iterations K     CG iterations (default 60)
  --resolve K        CG iterations after a lambda change (default 30)
  --cpu-voxels V     voxels the CPU direct sums are timed on (default 8192; extrapolated)
  --json FILE        also write the results as JSON
  --skip-slow        leave out GPU.Base, RegAlloc, Coalesce and ConstMem
  --whole TOL        GPU only: instead of the tables, where the whole reconstruction's time goes
                     (each stage and its pieces), the NUFFT's oversampling and tolerance for Q and
                     F^H d (time, error, PSNR), and the whole rows with the NUFFT at TOL
  --repeats K        (--whole) runs of each whole row (default 5): each run's stages printed,
                     the row its median with the fastest and slowest
  --no-breakdown     (--whole) only the whole rows
  --retune           redo GPU.Tune's search instead of reading the cache
  --no-cpu           leave out the CPU rows
  --convergence LIST instead: the circulant preconditioner's study on demo cases (NAME or
                     NAME@N, comma separated; e.g. radial-2d@256,default,spiral-2d-noisy):
                     iterations and whole-reconstruction time to plain CG's PSNR after
                     --iterations, and after a lambda change
  --regularizers R   (--convergence, --lambda-change) case (each case's own, default) or a list:
                     tikhonov,fd,anatomical
  --lambda-change LIST  instead: a lambda change (x2 and back), warm, on demo cases: iterations and
                     time until within 0.1 dB of the converged image's PSNR at the new lambda
  --data-weighting W (--lambda-change) uniform (default) | density; (--sparse) a list: uniform (default),
                     density or uniform,density (the weighted rows at lambda x r_D / r)
  --kept-directions K  (--lambda-change) a lambda change starts from the best image in the span of
                     the last iterate, the last change's start and the last K search directions
                     (0: those two images only; -1: no recycling; default: the session's)
  --coil-combine C   (--lambda-change) sos (default) | sense: the multi-coil cases' solve (SENSE:
                     the records have no truth, so the 0.1 dB columns mean nothing; 'close' does)
  --toeplitz GRIDS   instead: the CPU Toeplitz product (F^H F x on the 2N grid), pruned and
                     fused against whole FFTs, and its planning time (comma separated grids:
                     256x256,64x64x64,...; --iterations products each, default 60); then
                     Q's spectrum and F^H d at each NUFFT oversampling and tolerance.
                     RECONSTUDIO_FFTW_WISDOM=0 plans by estimate, =DIR keeps wisdom there
  --sparse LIST      instead: the sparse priors' speed targets on demo cases (e.g. paper-128):
                     whole-reconstruction time to within 0.1 dB of the PSNR after --iterations
                     (default 1000), and after lambda x2 (warm); tv with ADMM, wavelet with FISTA and POGM
  --priors P         (--sparse) tv,wavelet (default) or any of tv, wavelet, anatomical-tv
  --lambda-factors L (--sparse) each row at its lambda times each of these (default 1; e.g. 0.5,1,2)
  --sparse-solver L (--sparse) the solvers of every prior's rows, e.g. admm,pdhg (default: admm for tv;
                    fista, pogm and fista with averaged shifts for wavelet)
  --backend B        (--convergence, --lambda-change, --sparse) auto (default) | cpu | cuda
)";

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The paper's Figure 9 and section 5 (Quadro FX 5600, 2008), seconds for F^H d.
struct PaperFigure {
    const char* name;
    double seconds;
};
const PaperFigure kPaper[] = {
    {"CPU.SP", 22.5 * 60},    {"GPU.Base", 53.9 * 60}, {"GPU.RegAlloc", 34.1 * 60},
    {"GPU.Coalesce", 34.1 * 60 / 1.2},  // "a speedup of nearly 20% over GPU.RegAlloc"
    {"GPU.ConstMem", 4.4 * 60}, {"GPU.FastTrig", 15.0 * 128 * 128 * 128 * 284592.0 / 127.5e9},  // 127.5 GFLOP/s
    {"GPU.Tune", 59},           {"GPU.Multi", 18},
};
double paperSeconds(const std::string& name) {
    for (const auto& p : kPaper)
        if (name == p.name) return p.seconds;
    return kNaN;
}

struct Row {
    std::string section;   // "F^H d", "Q", "CG", "reconstruction"
    std::string name;
    std::string note;
    double seconds = kNaN;
    double pairs = 0;            // (sample, voxel) pairs the exact sum has
    double flops_per_pair = 0;   // the paper's counting (0: not a direct-sum row)
    double rel_error = kNaN;     // against float64
    double paper_seconds = kNaN;
    double target_seconds = kNaN;  // the issues' targets on one H100
    double sfu_bound_pairs = 0;    // device's SFU bound, pairs/s
};

struct Problem {
    int n = 128;
    Grid grid;
    Trajectory traj;
    ComplexArray data;   // d
    ComplexArray c;      // conj(phi) d
    std::vector<double> phi, phi2;
    double scale = 0;    // s = Q(0)
    double dnorm2 = 0;
    ComplexArray truth;
};

// CG on (F^H F + lambda s W^T W) rho = F^H d with finite differences, as the session builds it.
// W (finite differences) on a backend, made once as the session caches it.
LinearOperatorPtr finiteDifferences(Backend& b, const Problem& p) {
    auto reg = std::make_shared<const Regularizer>(makeRegularizer(RegularizerKind::FiniteDifference, p.grid));
    return sparseMatrix(b, std::shared_ptr<const CsrMatrix>(reg, &reg->w), std::shared_ptr<const CsrMatrix>(reg, &reg->normal), "W");
}

// `fourier`: F = diag(phi) * sums, made once per trajectory and method as the session caches it.
std::unique_ptr<NormalEquationsCg> quadraticSolver(const LinearOperatorPtr& fourier, const Problem& p,
                                                   std::shared_ptr<const ToeplitzOperator> tk, const Vector& rhs,
                                                   double lambda, LinearOperatorPtr w) {
    std::vector<NormalTerm> terms{{"data", 1.0, withNormal(fourier, std::move(tk))},
                                  {"penalty", lambda * p.scale, std::move(w)}};
    return std::make_unique<NormalEquationsCg>(std::move(terms), rhs, p.dnorm2);
}

Problem makeProblem(int n, double samples128) {
    Problem p;
    p.n = n;
    p.grid = Grid::cube(3, n);
    const double f = n / 128.0;
    // The paper's M = 284,592 = 2541 spokes x 112 samples at 128^3; Nyquist radial scales as N^3.
    const double m = samples128 * f * f * f;
    const int readout = std::max(8, int(std::lround(112 * f)));
    const int spokes = std::max(1, int(std::ceil(m / readout)));
    p.traj = radial3D(n, spokes, readout);
    p.traj.k.resize(3 * std::size_t(std::llround(m)));
    const Phantom ph = Phantom::sheppLogan3D();
    p.data = ph.kspace(p.traj, p.grid);
    p.c.resize(p.data.size());
    p.phi2.resize(p.data.size());
    p.phi.resize(p.data.size());
    for (std::size_t i = 0; i < p.data.size(); ++i) {
        const double phi = basisTransform(BasisFunction::BoxVoxel, p.grid, p.traj.kx(i), p.traj.ky(i), p.traj.kz(i));
        p.c[i] = phi * p.data[i];
        p.phi2[i] = phi * phi;
        p.phi[i] = phi;
        p.scale += phi * phi;
        p.dnorm2 += std::norm(p.data[i]);
    }
    p.truth = ph.image(p.grid, 2);
    return p;
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time of `f` (which must synchronise), after one untimed run when it is fast.
double timeIt(const std::function<void()>& f, int repeat = 5) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    const double first = seconds(t0);
    if (first > 2.0) return first;  // slow versions: one run (its setup is a negligible share)
    std::vector<double> t;
    for (int i = 0; i < repeat; ++i) {
        t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(seconds(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

double relError(const std::complex<double>* a, const std::complex<double>* ref, std::size_t n) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
        num += std::norm(a[i] - ref[i]);
        den += std::norm(ref[i]);
    }
    return den > 0 ? std::sqrt(num / den) : kNaN;
}

std::string fmtTime(double s) {
    char b[32];
    if (std::isnan(s)) return "-";
    if (s < 1e-3) std::snprintf(b, sizeof b, "%.0f us", s * 1e6);
    else if (s < 1) std::snprintf(b, sizeof b, "%.2f ms", s * 1e3);
    else if (s < 600) std::snprintf(b, sizeof b, "%.2f s", s);
    else std::snprintf(b, sizeof b, "%.1f min", s / 60);
    return b;
}
std::string fmtNum(const char* f, double v) {
    if (std::isnan(v) || v == 0) return "-";
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

void printTable(const std::vector<Row>& rows, const std::string& device) {
    std::printf("\n%s\n", device.c_str());
    std::printf("%-28s %-33s %11s %10s %9s %7s %9s %11s %9s %9s  %s\n", "section", "method", "time", "pairs/s", "GFLOP/s",
                "SFU %", "err f64", "paper", "x paper", "target", "note");
    for (const Row& r : rows) {
        const double pps = r.pairs > 0 && r.seconds > 0 ? r.pairs / r.seconds : kNaN;
        const double gflops = r.flops_per_pair > 0 ? pps * r.flops_per_pair / 1e9 : kNaN;
        const double sfu = r.sfu_bound_pairs > 0 && r.pairs > 0 ? 100 * pps / r.sfu_bound_pairs : kNaN;
        std::printf("%-28s %-33s %11s %10s %9s %7s %9s %11s %9s %9s  %s\n", r.section.c_str(), r.name.c_str(),
                    fmtTime(r.seconds).c_str(), fmtNum("%.3g", pps).c_str(), fmtNum("%.1f", gflops).c_str(),
                    fmtNum("%.1f", sfu).c_str(), fmtNum("%.1e", r.rel_error).c_str(), fmtTime(r.paper_seconds).c_str(),
                    fmtNum("%.0f", r.paper_seconds / r.seconds).c_str(), fmtTime(r.target_seconds).c_str(), r.note.c_str());
    }
}

void writeJson(const std::string& path, const std::vector<Row>& rows, const std::string& device) {
    std::ofstream out(path);
    if (!out) throw Error("cannot write " + path);
    out << "{\n  \"device\": " << jsonString(device) << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const double pps = r.pairs > 0 && r.seconds > 0 ? r.pairs / r.seconds : kNaN;
        out << "    {\"section\": " << jsonString(r.section) << ", \"method\": " << jsonString(r.name)
            << ", \"seconds\": " << jsonNumber(r.seconds) << ", \"pairs_per_second\": " << jsonNumber(pps)
            << ", \"gflops_paper_counting\": " << jsonNumber(r.flops_per_pair > 0 ? pps * r.flops_per_pair / 1e9 : kNaN)
            << ", \"sfu_fraction\": " << jsonNumber(r.sfu_bound_pairs > 0 ? pps / r.sfu_bound_pairs : kNaN)
            << ", \"relative_error_vs_float64\": " << jsonNumber(r.rel_error)
            << ", \"paper_seconds\": " << jsonNumber(r.paper_seconds) << ", \"target_seconds\": " << jsonNumber(r.target_seconds)
            << ", \"note\": " << jsonString(r.note) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
}

// CPU direct sums timed on the first `voxels` voxels' worth of rows (a slab of the
// same grid), extrapolated to the whole grid: the full 128^3 sum takes hours.
template <class T>
Row cpuDirectRow(const Problem& p, int voxels, const char* name) {
    SampleGrid slab = SampleGrid::image(p.grid);
    const int rows = std::max(1, voxels / p.n);
    slab.size = {p.n, std::min(rows, p.n), 1};
    std::vector<std::complex<T>> c(p.c.begin(), p.c.end()), out(slab.points());
    auto t0 = std::chrono::steady_clock::now();
    directAdjointSum<T>(p.traj, c.data(), slab, out.data());
    const double part = seconds(t0);
    Row r;
    r.section = "F^H d";
    r.name = name;
    r.pairs = double(p.grid.voxels()) * double(p.traj.samples());
    r.seconds = part * double(p.grid.voxels()) / double(slab.points());
    r.flops_per_pair = 38;
    r.paper_seconds = p.n == 128 ? paperSeconds(name) : kNaN;
    r.note = "extrapolated from " + std::to_string(slab.points()) + " voxels, " + std::to_string(cpuThreads()) + " threads";
    return r;
}

// The CPU engine beyond F^H d's direct sums: the NUFFT for F^H d and Q with its
// error against the exact float64 sum on a slab of the same grid, one CG
// iteration, and both griddings (issue 2's CPU benchmark).
std::vector<Row> cpuEngineRows(const Problem& p, double tol, int voxels) {
    std::vector<Row> rows;
    auto cpu = createCpuBackend(Precision::Single);
    const double pairs = double(p.grid.voxels()) * double(p.traj.samples());
    const std::string threads = std::to_string(cpuThreads()) + " threads";
    // The NUFFT's relative error against the exact float64 sum, on the first
    // `subset` samples (the error is linear in the coefficients; the whole exact
    // sum is what takes hours).
    const std::size_t subset = std::min<std::size_t>(p.traj.samples(), 400);
    Trajectory part = p.traj;
    part.k.resize(3 * subset);
    auto nufftError = [&](const SampleGrid& g, const ComplexArray& coef) {
        ComplexArray c(coef.begin(), coef.begin() + std::ptrdiff_t(subset)), approx;
        std::vector<cdouble> exact(g.points());
        directAdjointSum<double>(part, c.data(), g, exact.data());
        cpu->adjointSum(part, c, g, approx, {"nufft", tol});
        return relError(approx.data(), exact.data(), exact.size());
    };
    const SampleGrid image = SampleGrid::image(p.grid), qgrid = SampleGrid::differences(p.grid);
    {
        ComplexArray out;
        Row r;
        r.section = "F^H d";
        r.name = "CPU nufft " + fmtNum("%.0e", tol);
        r.seconds = timeIt([&] { cpu->adjointSum(p.traj, p.c, image, out, {"nufft", tol}); }, 1);
        r.pairs = pairs;
        r.rel_error = nufftError(image, p.c);
        r.note = threads + ", error on " + std::to_string(subset) + " samples";
        rows.push_back(r);
    }
    ComplexArray q2(p.phi2.begin(), p.phi2.end());
    {
        ComplexArray out;
        Row r;
        r.section = "Q";
        r.name = "CPU nufft " + fmtNum("%.0e", tol);
        r.seconds = timeIt([&] { cpu->adjointSum(p.traj, q2, qgrid, out, {"nufft", tol}); }, 1);
        r.pairs = 8 * pairs;
        r.rel_error = nufftError(qgrid, q2);
        r.note = threads + ", 2N grid";
        rows.push_back(r);
    }
    {
        SampleGrid slab = qgrid;
        slab.size = {qgrid.size[0], std::max(1, voxels / qgrid.size[0]), 1};
        std::vector<cfloat> c(q2.begin(), q2.end()), out(slab.points());
        auto t0 = std::chrono::steady_clock::now();
        directAdjointSum<float>(p.traj, c.data(), slab, out.data());
        Row r;
        r.section = "Q";
        r.name = "CPU.SP";
        r.pairs = 8 * pairs;
        r.seconds = seconds(t0) * double(qgrid.points()) / double(slab.points());
        r.flops_per_pair = 38;
        r.note = "extrapolated from " + std::to_string(slab.points()) + " voxels, " + threads;
        rows.push_back(r);
    }
    {
        auto solver = quadraticSolver(fourierOperator(*cpu, p.traj, p.grid, p.phi, {"nufft", tol}, nullptr), p,
                                      cpu->makeToeplitz(p.grid, p.traj, p.phi2, {"nufft", tol}),
                                      *cpu->adjointOnBackend(p.traj, p.c, image, {"nufft", tol}), 0.02,
                                      finiteDifferences(*cpu, p));
        Row r;
        r.section = "CG";
        r.name = "CPU.SP 1 iteration";
        r.seconds = timeIt([&] { solver->step(); }, 3);
        r.note = threads + ", Toeplitz on the 2N grid (FFTW), fd";
        rows.push_back(r);
    }
    {
        std::vector<double> w;
        Row dcf;
        dcf.section = "gridding";
        dcf.name = "CPU Pipe-Menon (" + std::to_string(kPipeMenonIterations) + " it)";
        dcf.seconds = timeIt([&] { w = cpu->densityCompensation(p.traj, p.grid, kaiserBesselGridding(), kPipeMenonIterations); }, 1);
        rows.push_back(dcf);
        ComplexArray weighted(p.data.size()), img;
        for (std::size_t m = 0; m < w.size(); ++m) weighted[m] = w[m] * p.data[m];
        for (const auto& gridding : {std::pair{"CPU trilinear", trilinearGridding()},
                                     std::pair{"CPU Kaiser-Bessel", kaiserBesselGridding()}}) {
            Row r;
            r.section = "gridding";
            r.name = gridding.first;
            const GriddingOptions& opts = gridding.second;  // a plain reference: lambdas may capture it (clang 14)
            r.seconds = timeIt([&] { cpu->grid(p.traj, weighted, p.grid, opts, img); }, 3);
            r.note = threads + ", density weights given";
            rows.push_back(r);
        }
    }
    return rows;
}

#ifdef RECONSTUDIO_HAVE_CUDA
using namespace recon::cuda;

struct Events {
    cudaEvent_t a, b;
    Events() {
        check(cudaEventCreate(&a), "event");
        check(cudaEventCreate(&b), "event");
    }
    ~Events() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
};

// Median device time of `f` (enqueued on `s`), in seconds; one warm-up when fast.
double timeDevice(cudaStream_t s, const std::function<void()>& f, int repeat = 7) {
    Events e;
    auto once = [&] {
        check(cudaEventRecord(e.a, s), "event");
        f();
        check(cudaEventRecord(e.b, s), "event");
        check(cudaEventSynchronize(e.b), "event");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, e.a, e.b), "event");
        return ms * 1e-3;
    };
    const double first = once();
    if (first > 1.0) return first;
    std::vector<double> t;
    for (int i = 0; i < repeat; ++i) t.push_back(once());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <class T>
std::vector<cdouble> download(const DeviceBuffer<std::complex<T>>& d, std::size_t offset, std::size_t n) {
    std::vector<std::complex<T>> h(d.size());
    d.download(h.data(), h.size());
    return std::vector<cdouble>(h.begin() + offset, h.begin() + offset + n);
}

struct GpuBench {
    const Problem& p;
    DeviceProps props;
    cudaStream_t s;
    std::vector<Row>& rows;
    bool full;        // the whole version table (the paper's case)
    bool skipSlow;
    bool retune;
    double wholeTolerance = 0;  // > 0 (--whole TOL): only the stage breakdown and the whole reconstructions, at this tolerance
    int wholeRepeats = 5;       // --repeats: runs of each whole row
    bool breakdown = true;      // --no-breakdown: the whole rows alone

    void run(int iterations, int resolveIterations) {
        if (wholeTolerance > 0) {
            if (breakdown) breakdownRows(iterations, wholeTolerance);
            reconstructionRows(iterations, resolveIterations, wholeTolerance, true);
            return;
        }
        const SampleGrid img = SampleGrid::image(p.grid), dif = SampleGrid::differences(p.grid);
        const double pairs = double(img.points()) * double(p.traj.samples());
        const double qpairs = double(dif.points()) * double(p.traj.samples());

        // Float64 references: the exact-fast sum in float64 (tested against the plain
        // sum to 1e-9). The whole grid at N <= 128; a central slab above that.
        std::vector<std::complex<double>> c64(p.c.begin(), p.c.end()), q64(p.phi2.begin(), p.phi2.end());
        DeviceBuffer<std::complex<double>> dc64(c64.size(), "c"), dq64(q64.size(), "phi2");
        dc64.upload(c64.data(), c64.size(), s);
        dq64.upload(q64.data(), q64.size(), s);
        auto slab = [](const SampleGrid& g, int planes) {
            const std::size_t plane = std::size_t(g.size[0]) * g.size[1];
            const std::size_t b = plane * std::size_t(std::max(0, g.size[2] / 2 - planes / 2));
            return std::make_pair(b, std::min(g.points(), b + plane * std::size_t(planes)));
        };
        const auto refRange = p.n <= 128 ? std::make_pair(std::size_t(0), img.points()) : slab(img, 4);
        const auto qRange = slab(dif, p.n <= 128 ? 16 : 4);
        std::fprintf(stderr, "float64 references...\n");
        auto t0 = std::chrono::steady_clock::now();
        DeviceBuffer<std::complex<double>> ref(refRange.second - refRange.first, "reference"),
            qref(qRange.second - qRange.first, "Q reference");
        DirectSum<double>(p.traj, img, s).adjoint(DirectVersion::ExactFast, dc64.data(), ref.data(), {}, refRange.first,
                                                  refRange.second);
        DirectSum<double>(p.traj, dif, s).adjoint(DirectVersion::ExactFast, dq64.data(), qref.data(), {}, qRange.first,
                                                  qRange.second);
        const auto fhd64 = download(ref, 0, ref.size());
        const auto q64ref = download(qref, 0, qref.size());
        std::fprintf(stderr, "  %.2f s\n", seconds(t0));

        std::vector<std::complex<float>> c32(p.c.begin(), p.c.end()), w32(p.phi2.begin(), p.phi2.end());
        DeviceBuffer<std::complex<float>> dc(c32.size(), "c"), dw(w32.size(), "phi2");
        DeviceBuffer<std::complex<float>> out(img.points(), "F^H d"), qout(dif.points(), "Q");
        dc.upload(c32.data(), c32.size(), s);
        dw.upload(w32.data(), w32.size(), s);

        auto errFhd = [&] {
            const auto a = download(out, refRange.first, fhd64.size());
            return relError(a.data(), fhd64.data(), a.size());
        };
        auto errQ = [&] {
            const auto a = download(qout, qRange.first, q64ref.size());
            return relError(a.data(), q64ref.data(), a.size());
        };
        const std::string ref_note = p.n <= 128 ? "" : " (error on a central slab)";

        const TuneResult tune = tunedParams<float>(props.id, false, retune);
        std::fprintf(stderr, "GPU.Tune: %s (%s, %d configurations, %.1f s)\n", tune.best.describe().c_str(),
                     tune.from_cache ? "cached" : "searched", tune.configurations, tune.seconds);

        // ---- F^H d: the paper's versions, then ours
        std::vector<DirectVersion> versions;
        if (full && !skipSlow) versions = {DirectVersion::Base, DirectVersion::RegAlloc, DirectVersion::Coalesce, DirectVersion::ConstMem};
        if (full) versions.push_back(DirectVersion::FastTrig);
        versions.push_back(DirectVersion::Tune);
        versions.push_back(DirectVersion::ExactFast);
        DirectSum<float> sum(p.traj, img, s);
        {
            // The recurrence's shorter run, for the accuracy / speed trade-off.
            DirectSum<float> sum16(p.traj, img, s);
            sum16.setRunLength(16);
            Row r;
            r.section = "F^H d";
            r.name = "exact-fast, 16-voxel runs";
            r.pairs = pairs;
            r.flops_per_pair = 15;
            r.sfu_bound_pairs = props.sfuBoundPairsPerSecond();
            r.seconds = timeDevice(s, [&] { sum16.adjoint(DirectVersion::ExactFast, dc.data(), out.data()); }, 3);
            r.rel_error = errFhd();
            r.note = "15 FLOP/pair equivalent" + ref_note;
            rows.push_back(r);
        }
        for (DirectVersion v : versions) {
            std::fprintf(stderr, "F^H d %s...\n", toString(v).c_str());
            Row r;
            r.section = "F^H d";
            r.name = "GPU." + paperName(v);
            r.pairs = pairs;
            r.flops_per_pair = paperFlopsPerPair(v);
            r.sfu_bound_pairs = props.sfuBoundPairsPerSecond();
            r.seconds = timeDevice(s, [&] { sum.adjoint(v, dc.data(), out.data(), tune.best); }, 3);
            r.rel_error = errFhd();
            r.paper_seconds = p.n == 128 ? paperSeconds(r.name) : kNaN;
            if (v == DirectVersion::Tune) {
                r.note = tune.best.describe();
                if (p.n == 128) r.target_seconds = 0.31;  // issue #3: >= 85% of the SFU bound
            }
            if (v == DirectVersion::ExactFast) {
                r.name = "exact-fast (ours), 32-voxel runs";
                r.note = "15 FLOP/pair equivalent";
                if (p.n == 128) r.target_seconds = 0.1;
            }
            r.note += ref_note;
            rows.push_back(r);
        }
        if (full) {
            std::fprintf(stderr, "F^H d multi...\n");
            Row r;
            r.section = "F^H d";
            r.name = "GPU.Multi";
            r.pairs = pairs;
            r.flops_per_pair = 15;
            r.sfu_bound_pairs = props.sfuBoundPairsPerSecond() * deviceCount();
            std::vector<std::complex<float>> host;
            t0 = std::chrono::steady_clock::now();
            multiGpuAdjoint<float>(p.traj, c32, img, host);
            const double cold = seconds(t0);
            t0 = std::chrono::steady_clock::now();
            multiGpuAdjoint<float>(p.traj, c32, img, host);  // the other GPUs' contexts exist now
            r.seconds = seconds(t0);
            out.upload(host.data(), host.size(), s);
            r.rel_error = errFhd();
            r.paper_seconds = p.n == 128 ? paperSeconds("GPU.Multi") : kNaN;
            r.note = std::to_string(deviceCount()) + " GPU(s), host arrays in and out, second call (first: " + fmtTime(cold) +
                     "; paper: 4 GPUs)";
            rows.push_back(r);
        }
        const double tols[] = {1e-3, 1e-5, 1e-6};
        for (double tol : tols) {
            std::fprintf(stderr, "F^H d nufft %.0e...\n", tol);
            const SpreadKernel k = SpreadKernel::forTolerance(tol);
            t0 = std::chrono::steady_clock::now();
            GpuNufft<float> plan(p.traj, img, k, true, s);
            const double planSeconds = seconds(t0);
            Row r;
            r.section = "F^H d";
            r.name = "nufft " + fmtNum("%.0e", tol) + " (ours)";
            r.pairs = pairs;
            r.seconds = timeDevice(s, [&] { plan.adjoint(dc.data(), out.data()); });
            r.rel_error = errFhd();
            r.note = k.describe() + ", plan " + fmtTime(planSeconds) + ref_note;
            if (p.n == 128 && tol == 1e-5) r.target_seconds = 3e-3;
            rows.push_back(r);
        }

        // ---- Q on the 2N grid
        for (DirectVersion v : {DirectVersion::Tune, DirectVersion::ExactFast}) {
            if (p.n > 128) break;  // hours at 256^3
            std::fprintf(stderr, "Q %s...\n", toString(v).c_str());
            DirectSum<float> qsum(p.traj, dif, s);
            Row r;
            r.section = "Q (2N grid)";
            r.name = v == DirectVersion::Tune ? "GPU.Tune" : "exact-fast (ours)";
            r.pairs = qpairs;
            r.flops_per_pair = paperFlopsPerPair(v);
            r.sfu_bound_pairs = props.sfuBoundPairsPerSecond();
            r.seconds = timeDevice(s, [&] { qsum.adjoint(v, dw.data(), qout.data(), tune.best); }, 1);
            r.rel_error = errQ();
            r.note = "error on a central slab";
            if (p.n == 128) {
                r.paper_seconds = 5.5 * 59;  // "roughly five to six times longer than F^H d"
                if (v == DirectVersion::ExactFast) r.target_seconds = 0.9;
            }
            rows.push_back(r);
        }
        for (double tol : {1e-5, 1e-6}) {
            std::fprintf(stderr, "Q nufft %.0e...\n", tol);
            GpuNufft<float> plan(p.traj, dif, SpreadKernel::forTolerance(tol), true, s);
            Row r;
            r.section = "Q (2N grid)";
            r.name = "nufft " + fmtNum("%.0e", tol) + " (ours)";
            r.pairs = qpairs;
            r.seconds = timeDevice(s, [&] { plan.adjoint(dw.data(), qout.data()); });
            r.rel_error = errQ();
            r.note = "sigma 2 (the backend's makeToeplitz runs sigma 1.5: --whole); error on a central slab";
            if (p.n == 128 && tol == 1e-5) r.target_seconds = 10e-3;
            rows.push_back(r);
        }

        // ---- one F^H F application through the Toeplitz embedding (Q from the last NUFFT above)
        std::vector<std::complex<float>> fullResult;
        std::string why;
        const std::unique_ptr<Backend> space = createCudaBackend(Precision::Single, props.id, &why);  // the operators' home
        if (!space) throw Error("CUDA backend: " + why);
        for (ToeplitzFfts mode : {ToeplitzFfts::Full, ToeplitzFfts::Pruned, ToeplitzFfts::Fused}) {
            DeviceBuffer<std::complex<float>> q(dif.points(), "Q"), y(img.points(), "y");
            check(cudaMemcpyAsync(q.data(), qout.data(), q.bytes(), cudaMemcpyDeviceToDevice, s), "copy Q");
            check(cudaStreamSynchronize(s), "copy Q");
            CudaToeplitz<float> tk(*space, p.grid, std::move(q), std::make_shared<Stream>(), mode);
            Row r;
            r.section = "CG";
            r.name = mode == ToeplitzFfts::Full     ? "F^H F apply, full cuFFT"
                     : mode == ToeplitzFfts::Pruned ? "F^H F apply, pruned cuFFT"
                                                    : "F^H F apply, pruned + fused column pass";
            if (tk.ffts() != mode) r.name += " (unavailable: ran pruned)";
            r.seconds = timeDevice(tk.stream(), [&] { tk.applyDevice(out.data(), y.data()); }, 21);
            r.note = "pad, FFT, spectrum, inverse FFT, crop on " + p.grid.doubled().describe();
            std::vector<std::complex<float>> result(img.points());
            y.download(result.data(), result.size(), tk.stream());
            if (mode == ToeplitzFfts::Full) {
                fullResult = result;
            } else {
                double num = 0, den = 0;
                for (std::size_t i = 0; i < result.size(); ++i) {
                    num += std::norm(std::complex<double>(result[i]) - std::complex<double>(fullResult[i]));
                    den += std::norm(std::complex<double>(fullResult[i]));
                }
                r.note += "; differs from full cuFFT by " + fmtNum("%.1e", std::sqrt(num / den)) + " (relative L2)";
            }
            rows.push_back(r);
        }

        // ---- CG and whole reconstructions through the Backend interface (host arrays at the ends)
        reconstructionRows(iterations, resolveIterations);
    }

    static std::string paperName(DirectVersion v) {
        switch (v) {
            case DirectVersion::Base: return "Base";
            case DirectVersion::RegAlloc: return "RegAlloc";
            case DirectVersion::Coalesce: return "Coalesce";
            case DirectVersion::ConstMem: return "ConstMem";
            case DirectVersion::FastTrig: return "FastTrig";
            case DirectVersion::Tune: return "Tune";
            default: return toString(v);
        }
    }

    // Where the whole advanced reconstruction's time goes (--whole TOL): each stage through the API,
    // and the pieces inside it timed alone (host work, device work, plans, allocations); then the
    // NUFFT's oversampling and tolerance for Q and F^H d (device time, error against float64, and
    // the anatomical solve's PSNR with that Q and F^H d). Medians of 5; the plan cache is warm, as
    // in the whole rows.
    void breakdownRows(int iterations, double tol) {
        std::string why;
        auto backend = createCudaBackend(Precision::Single, props.id, &why);
        if (!backend) throw Error("CUDA backend: " + why);
        const FourierMethod fm{"nufft", tol};
        const SampleGrid img = SampleGrid::image(p.grid), dif = SampleGrid::differences(p.grid);
        auto add = [&](const std::string& name, double sec, const std::string& note) {
            Row r;
            r.section = "breakdown";
            r.name = name;
            r.seconds = sec;
            r.note = note;
            rows.push_back(r);
            std::fprintf(stderr, "  %-40s %10s  %s\n", name.c_str(), fmtTime(sec).c_str(), note.c_str());
        };
        // Host wall time of f with the device idle before and after it; what f makes is kept until
        // after the timing (freeing it is not what is timed), as a session keeps it.
        std::vector<std::shared_ptr<void>> keep;
        auto wall = [&](const std::function<void()>& f) {
            std::vector<double> t;
            for (int i = 0; i < 6; ++i) {
                backend->synchronize();
                const auto t0 = std::chrono::steady_clock::now();
                f();
                backend->synchronize();
                if (i > 0) t.push_back(seconds(t0));
            }
            keep.clear();
            std::sort(t.begin(), t.end());
            return t[t.size() / 2];
        };
        std::fprintf(stderr, "breakdown (tolerance %.0e)...\n", tol);
        auto rhs = backend->adjointOnBackend(p.traj, p.c, img, fm);  // the plans, as the whole rows have them
        std::shared_ptr<const ToeplitzOperator> tk = backend->makeToeplitz(p.grid, p.traj, p.phi2, fm);
        const LinearOperatorPtr anat = quadraticRegularizer(*backend, RegularizerKind::AnatomicalFiniteDifference, p.grid, &p.truth);
        const LinearOperatorPtr fourier = fourierOperator(*backend, p.traj, p.grid, p.phi, fm, nullptr);

        add("F^H d via backend", wall([&] { keep.push_back(std::const_pointer_cast<Vector>(backend->adjointOnBackend(p.traj, p.c, img, fm))); }),
            "adjointOnBackend: fingerprint, upload, NUFFT, sync");
        add("  samples upload (make + upload)", wall([&] {
                auto v = std::make_shared<Vector>(backend->make(p.c.size()));
                backend->upload(p.c, *v);
                keep.push_back(v);
            }), "allocation, conversion to float32 in pinned memory, copy, sync");
        add("  trajectory fingerprint (host)", timeIt([&] {
                volatile std::uint64_t sink = trajectoryFingerprint(p.traj);
                (void)sink;
            }), "the NUFFT plan cache's key, over every coordinate");
        {
            std::vector<std::complex<float>> c32(p.c.begin(), p.c.end());
            DeviceBuffer<std::complex<float>> dc(c32.size(), "c"), out(img.points(), "F^H d");
            dc.upload(c32.data(), c32.size(), s);
            GpuNufft<float> plan(p.traj, img, SpreadKernel::forTolerance(tol), true, s);
            add("  NUFFT adjoint (device)", timeDevice(s, [&] { plan.adjoint(dc.data(), out.data()); }), plan.kernel().describe());
        }
        add("Q via backend", wall([&] { keep.push_back(std::const_pointer_cast<ToeplitzOperator>(backend->makeToeplitz(p.grid, p.traj, p.phi2, fm))); }),
            "makeToeplitz: phi^2 to complex, upload, NUFFT on the 2N grid, plans, spectrum");
        add("  phi^2 to complex (host)", timeIt([&] {
                ComplexArray c(p.phi2.begin(), p.phi2.end());
                volatile double sink = c.back().real();
                (void)sink;
            }), "");
        {
            std::vector<std::complex<float>> w32(p.phi2.begin(), p.phi2.end());
            DeviceBuffer<std::complex<float>> dw(w32.size(), "phi2"), qout(dif.points(), "Q");
            dw.upload(w32.data(), w32.size(), s);
            GpuNufft<float> plan(p.traj, dif, SpreadKernel::forTolerance(tol, backend->info().q_oversampling), true, s);
            add("  Q NUFFT (device)", timeDevice(s, [&] { plan.adjoint(dw.data(), qout.data()); }), plan.kernel().describe());
            const Grid big = p.grid.doubled();
            add("  cuFFT plan of the 2N grid (host)", wall([&] { keep.push_back(std::make_shared<GpuFft<float>>(big.n, 3, s)); }), "");
            add("  padded FFT plans (host)", wall([&] { keep.push_back(std::make_shared<PaddedFft<float>>(big.n, 3, s, true)); }), "");
            add("  Toeplitz from device Q", wall([&] {
                    DeviceBuffer<std::complex<float>> q(dif.points(), "Q");
                    check(cudaMemcpyAsync(q.data(), qout.data(), q.bytes(), cudaMemcpyDeviceToDevice, s), "copy Q");
                    check(cudaStreamSynchronize(s), "copy Q");
                    keep.push_back(std::make_shared<CudaToeplitz<float>>(*backend, p.grid, std::move(q), std::make_shared<Stream>()));
                }), "allocations, plans, shift, FFT, scale (the copy of Q included)");
        }
        add("solver setup (plain)", wall([&] { keep.push_back(std::shared_ptr<NormalEquationsCg>(quadraticSolver(fourier, p, tk, *rhs, 30, anat))); }),
            "NormalEquationsCg: vectors, A x0, statistics");
        add("Chan eigenvalues", wall([&] { keep.push_back(std::make_shared<Vector>(circulantEigenvalues(*backend, *tk, CirculantApproximation::Chan))); }),
            "Q from the spectrum, fold, N-grid FFT");
        const Vector data = circulantEigenvalues(*backend, *tk, CirculantApproximation::Chan);
        add("penalty eigenvalues", wall([&] { keep.push_back(std::make_shared<Vector>(impulseCirculantEigenvalues(*backend, p.grid, *anat))); }),
            "W^H W's impulse response, N-grid FFT");
        const Vector penalty = impulseCirculantEigenvalues(*backend, p.grid, *anat);
        add("M^-3/4", wall([&] { keep.push_back(std::const_pointer_cast<LinearOperator>(inverseCirculant(*backend, p.grid, data, {30 * p.scale}, {&penalty}, 0.75))); }),
            "combination, largest eigenvalue, power");
        auto sv = quadraticSolver(fourier, p, tk, *rhs, 30, anat);
        const int steps = 20;
        add("CG iteration, plain", wall([&] { for (int i = 0; i < steps; ++i) sv->step(); }) / steps, "median of 5 runs of 20, per iteration");
        sv->setPreconditioner(inverseCirculant(*backend, p.grid, data, {30 * p.scale}, {&penalty}, 0.75));
        add("CG iteration, circulant", wall([&] { for (int i = 0; i < steps; ++i) sv->step(); }) / steps, "median of 5 runs of 20, per iteration");
        ComplexArray image;
        add("image to host", wall([&] { sv->image(image); }), "into an array kept between runs");
        {
            // Its two pieces alone: the device-to-host copy into pinned memory, the conversion to float64.
            std::complex<float>* pinned = nullptr;
            check(cudaMallocHost(&pinned, image.size() * sizeof(std::complex<float>)), "pinned image");
            DeviceBuffer<std::complex<float>> x(image.size(), "image");
            add("  copy into pinned memory", wall([&] { x.download(pinned, x.size(), s); }), "one cudaMemcpyAsync + sync");
            add("  float32 to float64 (host)", wall([&] {
#pragma omp parallel for
                    for (std::int64_t i = 0; i < std::int64_t(image.size()); ++i) image[std::size_t(i)] = pinned[i];
                }), "all cores, into the kept array");
            cudaFreeHost(pinned);
        }

        // The NUFFT's oversampling and tolerance, for Q (2N grid) and F^H d: device time, error
        // against float64 exact sums, and the anatomical solve's PSNR with both at that setting.
        std::fprintf(stderr, "oversampling x tolerance (float64 references)...\n");
        std::vector<std::complex<double>> c64(p.c.begin(), p.c.end()), q64(p.phi2.begin(), p.phi2.end());
        DeviceBuffer<std::complex<double>> dc64(c64.size(), "c"), dq64(q64.size(), "phi2");
        dc64.upload(c64.data(), c64.size(), s);
        dq64.upload(q64.data(), q64.size(), s);
        const std::size_t plane = std::size_t(dif.size[0]) * dif.size[1];
        const std::size_t qb = plane * std::size_t(dif.size[2] / 2 - 8), qe = qb + plane * 16;
        DeviceBuffer<std::complex<double>> ref(img.points(), "reference"), qref(qe - qb, "Q reference");
        DirectSum<double>(p.traj, img, s).adjoint(DirectVersion::ExactFast, dc64.data(), ref.data(), {}, 0, img.points());
        DirectSum<double>(p.traj, dif, s).adjoint(DirectVersion::ExactFast, dq64.data(), qref.data(), {}, qb, qe);
        const auto fhd64 = download(ref, 0, ref.size());
        const auto qslab64 = download(qref, 0, qref.size());
        std::vector<std::complex<float>> c32(p.c.begin(), p.c.end()), w32(p.phi2.begin(), p.phi2.end());
        DeviceBuffer<std::complex<float>> dc(c32.size(), "c"), dw(w32.size(), "phi2");
        dc.upload(c32.data(), c32.size(), s);
        dw.upload(w32.data(), w32.size(), s);
        for (double sigma : {2.0, 1.5}) {
            for (double t : {1e-3, 1e-4, 1e-5}) {
                const SpreadKernel k = SpreadKernel::forTolerance(t, sigma);
                DeviceBuffer<std::complex<float>> out(img.points(), "F^H d"), qout(dif.points(), "Q");
                double tf = 0, tq = 0;
                {
                    GpuNufft<float> plan(p.traj, img, k, true, s);
                    tf = timeDevice(s, [&] { plan.adjoint(dc.data(), out.data()); });
                }
                {
                    GpuNufft<float> plan(p.traj, dif, k, true, s);
                    tq = timeDevice(s, [&] { plan.adjoint(dw.data(), qout.data()); });
                }
                const auto a = download(out, 0, img.points());
                const auto qa = download(qout, qb, qe - qb);
                const double ef = relError(a.data(), fhd64.data(), a.size()), eq = relError(qa.data(), qslab64.data(), qa.size());
                // The anatomical solve with this Q and F^H d: plain CG's PSNR after `iterations`, and
                // the circulant's after 25 (M^-3/4).
                ComplexArray qh(qout.size()), fh(a.begin(), a.end());
                {
                    const auto qall = download(qout, 0, qout.size());
                    for (std::size_t i = 0; i < qh.size(); ++i) qh[i] = qall[i];
                }
                auto tk2 = backend->toeplitzFromQ(p.grid, qh);
                Vector b = backend->make(fh.size());
                backend->upload(fh, b);
                auto plain = quadraticSolver(fourier, p, tk2, b, 30, anat);
                for (int i = 0; i < iterations; ++i) plain->step();
                plain->image(image);
                const double psnrPlain = measureQuality(image, p.truth, false).psnr_db;
                auto pc = quadraticSolver(fourier, p, tk2, b, 30, anat);
                pc->setPreconditioner(inverseCirculant(*backend, p.grid, circulantEigenvalues(*backend, *tk2, CirculantApproximation::Chan),
                                                       {30 * p.scale}, {&penalty}, 0.75));
                for (int i = 0; i < 25; ++i) pc->step();
                pc->image(image);
                const double psnrPc = measureQuality(image, p.truth, false).psnr_db;
                char buf[256];
                std::snprintf(buf, sizeof buf,
                              "%s; F^H d %s (err %.1e), Q %s (err %.1e); anatomical PSNR plain %d it %.3f dB, circulant 25 it %.3f dB",
                              k.describe().c_str(), fmtTime(tf).c_str(), ef, fmtTime(tq).c_str(), eq, iterations, psnrPlain, psnrPc);
                add("NUFFT sigma " + fmtNum("%.2g", sigma) + ", tol " + fmtNum("%.0e", t), tf + tq, buf);
            }
        }
    }

    // The NUFFT at the session's default tolerance unless told otherwise (--whole TOL).
    void reconstructionRows(int iterations, int resolveIterations, double tolerance = kDefaultNufftTolerance, bool wholeOnly = false) {
        std::string why;
        auto backend = createCudaBackend(Precision::Single, props.id, &why);
        if (!backend) throw Error("CUDA backend: " + why);
        const FourierMethod nufft{"nufft", tolerance};
        const double lambda = 0.02;

        std::fprintf(stderr, "reconstructions...\n");
        auto rhs = backend->adjointOnBackend(p.traj, p.c, SampleGrid::image(p.grid), nufft);  // warms the plan cache
        auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<const ToeplitzOperator> tk = backend->makeToeplitz(p.grid, p.traj, p.phi2, nufft);
        const double qSeconds = seconds(t0);

        // 60 CG iterations alone (the solver made, the image left on the device).
        // What the session caches per trajectory and method: W and F (its normal is attached per Q).
        const LinearOperatorPtr w = finiteDifferences(*backend, p);
        const LinearOperatorPtr fourierNufft = fourierOperator(*backend, p.traj, p.grid, p.phi, nufft, nullptr);
        auto solver = quadraticSolver(fourierNufft, p, tk, *rhs, lambda, w);
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) solver->step();
        const double cgSeconds = seconds(t0);
        ComplexArray image;
        solver->image(image);
        const Quality quality = measureQuality(image, p.truth, false);
        char qbuf[96];
        std::snprintf(qbuf, sizeof qbuf, "image: %.1f %% error, %.1f dB PSNR vs truth", quality.error_percent, quality.psnr_db);
        Row cg;
        cg.section = "CG";
        cg.name = std::to_string(iterations) + " iterations";
        cg.seconds = cgSeconds;
        cg.note = "Toeplitz on a " + p.grid.doubled().describe() + " cuFFT + FD regulariser; " + qbuf;
        if (p.n == 128) {
            cg.paper_seconds = 40;  // 99 s - 59 s
            cg.target_seconds = 55e-3;
        }
        rows.push_back(cg);

        // lambda re-solve: warm start from the current image, cached Q and F^H d.
        t0 = std::chrono::steady_clock::now();
        solver->setWeight(1, lambda * 2 * p.scale);
        for (int i = 0; i < resolveIterations; ++i) solver->step();
        solver->image(image);
        Row rs;
        rs.section = "reconstruction";
        rs.name = "lambda re-solve";
        rs.seconds = seconds(t0);
        rs.note = "setWeight (no rebuild) + " + std::to_string(resolveIterations) + " warm CG iterations + image to host";
        if (p.n == 128) rs.target_seconds = 40e-3;
        rows.push_back(rs);

        // Whole reconstructions as the session runs them: F^H d from host data, left on the
        // device; (Q); CG; the image to the host. The NUFFT's plan for this trajectory
        // (sort, cuFFT plans: the nufft rows' "plan") is made already. Each is run
        // `repeats` times and every stage reported as its median, so one slow host moment
        // does not decide the row. The image goes into one host array kept between the
        // repeats, as a session keeps its snapshot buffer; the first repeat's figure, into
        // a fresh array, is given too: its first-touch page faults are the host's cost.
        // The circulant preconditioner made where Q lives (Q's fold, W^H W's impulse response, M^{-3/4} as
        // the session's): part of the solver's setup in the rows below.
        auto precondition = [&](NormalEquationsCg& sv, const ToeplitzOperator& k, const LinearOperator& reg, double lam,
                                double exponent = 0.75) {
            const Vector data = circulantEigenvalues(*backend, k, CirculantApproximation::Chan);
            const Vector penalty = impulseCirculantEigenvalues(*backend, p.grid, reg);
            sv.setPreconditioner(inverseCirculant(*backend, p.grid, data, {lam * p.scale}, {&penalty}, exponent));
        };
        // `reg`, `lam`: the prior (default: finite differences at `lambda`).
        auto whole = [&](const std::string& name, const FourierMethod& fm, bool withQ, double paper, double target,
                         int repeats, int its = -1, bool circulant = false, LinearOperatorPtr reg = nullptr, double lam = 0) {
            if (its < 0) its = iterations;
            if (!reg) {
                reg = w;
                lam = lambda;
            }
            enum Stage { Fhd, Q, Setup, Cg, Image, Total, Stages };
            std::vector<std::vector<double>> times(Stages);
            Quality q;
            ComplexArray img;
            for (int rep = 0; rep < repeats; ++rep) {
                const auto t1 = std::chrono::steady_clock::now();
                auto lap = t1;
                auto split = [&](Stage st) {
                    times[st].push_back(seconds(lap));
                    lap = std::chrono::steady_clock::now();
                };
                auto rhs_fm = backend->adjointOnBackend(p.traj, p.c, SampleGrid::image(p.grid), fm);
                split(Fhd);
                std::shared_ptr<const ToeplitzOperator> tk_fm = withQ ? backend->makeToeplitz(p.grid, p.traj, p.phi2, fm) : tk;
                split(Q);
                auto sv = quadraticSolver(fm.name == nufft.name ? fourierNufft : fourierOperator(*backend, p.traj, p.grid, p.phi, fm, nullptr),
                                          p, tk_fm, *rhs_fm, lam, reg);
                if (circulant) precondition(*sv, *tk_fm, *reg, lam);
                split(Setup);
                for (int i = 0; i < its; ++i) sv->step();
                split(Cg);
                sv->image(img);
                split(Image);
                times[Total].push_back(seconds(t1));
                q = measureQuality(img, p.truth, false);
                std::fprintf(stderr, "  %s, run %d: F^H d %s, Q %s, setup %s, CG %s, image %s = %s\n", name.c_str(), rep + 1,
                             fmtTime(times[Fhd].back()).c_str(), fmtTime(times[Q].back()).c_str(), fmtTime(times[Setup].back()).c_str(),
                             fmtTime(times[Cg].back()).c_str(), fmtTime(times[Image].back()).c_str(), fmtTime(times[Total].back()).c_str());
            }
            auto median = [&](Stage st) {
                std::vector<double> v = times[st];
                std::sort(v.begin(), v.end());
                return v[v.size() / 2];
            };
            Row r;
            r.section = "reconstruction";
            r.name = name;
            r.seconds = median(Total);
            char buf[384];
            std::snprintf(buf, sizeof buf,
                          "median of %d: F^H d %s%s, solver setup %s, CG %s (%d it), image %s (into a fresh array: %s); "
                          "fastest %s, slowest %s; %.1f %% error, %.1f dB PSNR",
                          repeats, fmtTime(median(Fhd)).c_str(), withQ ? (", Q " + fmtTime(median(Q))).c_str() : "",
                          fmtTime(median(Setup)).c_str(), fmtTime(median(Cg)).c_str(), its, fmtTime(median(Image)).c_str(),
                          fmtTime(times[Image].front()).c_str(),
                          fmtTime(*std::min_element(times[Total].begin(), times[Total].end())).c_str(),
                          fmtTime(*std::max_element(times[Total].begin(), times[Total].end())).c_str(), q.error_percent,
                          q.psnr_db);
            r.note = buf;
            if (p.n == 128) {
                r.paper_seconds = paper;
                r.target_seconds = target;
            }
            rows.push_back(r);
        };
        if (!wholeOnly) whole("tune, Q cached", {"tune"}, false, 99, 0.5, 3);
        const int repeats = wholeOnly ? wholeRepeats : 5;
        whole("nufft, Q cached", nufft, false, 99, kNaN, repeats);
        whole("nufft F^H d + Q + CG", nufft, true, kNaN, 70e-3, repeats);
        // With the circulant preconditioner: as many iterations as reach the PSNR of plain CG's
        // `iterations` (counted first, untimed, the image checked after each), then timed whole;
        // for finite differences (above) and for the anatomical prior (the demo cases' default; the
        // truth as its reference, lambda 30 as --convergence uses).
        auto itsToPlain = [&](const LinearOperatorPtr& reg, double lam, bool circulant, double target, double exponent = 0.75) {
            auto sv = quadraticSolver(fourierNufft, p, tk, *rhs, lam, reg);
            if (circulant) precondition(*sv, *tk, *reg, lam, exponent);
            for (int i = 1; i <= iterations; ++i) {
                sv->step();
                if (!circulant && i < iterations) continue;
                sv->image(image);
                const double psnr = measureQuality(image, p.truth, false).psnr_db;
                if (!circulant) return std::make_pair(iterations, psnr);
                if (psnr >= target) return std::make_pair(i, psnr);
            }
            return std::make_pair(iterations, -1.0);
        };
        whole("nufft F^H d + Q + circulant + CG", nufft, true, kNaN, 30e-3, repeats,
              itsToPlain(w, lambda, true, quality.psnr_db).first, true);
        {
            const LinearOperatorPtr anat = quadraticRegularizer(*backend, RegularizerKind::AnatomicalFiniteDifference, p.grid, &p.truth);
            const double target = itsToPlain(anat, 30, false, 0).second;
            whole("anatomical: nufft F^H d + Q + CG", nufft, true, kNaN, 70e-3, repeats, iterations, false, anat, 30);
            const int its = itsToPlain(anat, 30, true, target).first;
            if (wholeOnly) {
                // Before the stream-ordered pool: every buffer through cudaMalloc and cudaFree (a device-wide wait).
                cuda::setStreamOrderedAllocation(false);
                whole("anatomical: circulant, cudaMalloc/cudaFree", nufft, true, kNaN, 30e-3, repeats, its, true, anat, 30);
                cuda::setStreamOrderedAllocation(true);
            }
            whole("anatomical: nufft F^H d + Q + circulant + CG", nufft, true, kNaN, 30e-3, repeats, its, true, anat, 30);
            if (wholeOnly) {
                // Other powers of the circulant's inverse: iterations to the same PSNR (untimed).
                for (double e : {0.5, 1.0}) {
                    const auto [its, psnr] = itsToPlain(anat, 30, true, target, e);
                    Row r;
                    r.section = "reconstruction";
                    r.name = "anatomical: circulant M^-" + fmtNum("%.2g", e) + ", its";
                    r.note = std::to_string(its) + " iterations to plain CG's " + fmtNum("%.2f", target) + " dB" +
                             (psnr < 0 ? " (not reached)" : "");
                    rows.push_back(r);
                }
            }
        }
        Row qrow;
        qrow.section = "reconstruction";
        qrow.name = "Q via backend (nufft)";
        qrow.seconds = qSeconds;
        qrow.note = "incl. plan (sort, cuFFT plan) and spectrum";
        rows.push_back(qrow);
    }
};
#endif

}  // namespace

int runBenchmark(const std::vector<std::string>& args) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
    Arguments a(args, {"sizes", "samples", "iterations", "resolve", "cpu-voxels", "json", "convergence", "regularizers", "backend",
                       "toeplitz", "sparse", "priors", "whole", "lambda-change", "data-weighting", "lambda-factors", "sparse-solver",
                       "kept-directions", "repeats", "coil-combine"},
                {"skip-slow", "retune", "no-cpu", "no-breakdown"});
    if (auto grids = a.maybe("toeplitz")) {
        runToeplitzTiming(*grids, a.integerIn("iterations", 60, 1, 10000));
        return 0;
    }
    if (auto cases = a.maybe("sparse")) {
        std::vector<double> factors;
        {
            std::stringstream ss(a.get("lambda-factors", "1"));
            std::string item;
            while (std::getline(ss, item, ',')) {
                char* end = nullptr;
                const double f = std::strtod(item.c_str(), &end);
                if (item.empty() || *end != '\0' || !(f > 0) || !std::isfinite(f))
                    throw UsageError("--lambda-factors expects positive numbers like 0.5,1,2, got '" + item + "'");
                factors.push_back(f);
            }
        }
        runSparseConvergenceStudy(*cases, a.get("priors", "tv,wavelet"), a.get("data-weighting", "uniform"), a.get("sparse-solver", ""), factors,
                                  parseBackendChoice(a.get("backend", "auto")), Precision::Single, a.integerIn("iterations", 1000, 1, 100000), a.get("json", ""));
        return 0;
    }
    if (auto cases = a.maybe("lambda-change")) {
        runLambdaChangeStudy(*cases, a.get("regularizers", "case"), parseBackendChoice(a.get("backend", "auto")), Precision::Single,
                             a.integerIn("iterations", 60, 1, 10000), parseDataWeighting(a.get("data-weighting", "uniform")),
                             a.integerIn("kept-directions", SolveOptions{}.kept_directions, -1, 64),
                             parseCoilCombination(a.get("coil-combine", "sos")), a.get("json", ""));
        return 0;
    }
    if (auto cases = a.maybe("convergence")) {
        const int iterations = a.integerIn("iterations", 60, 1, 10000);
        runConvergenceStudy(*cases, a.get("regularizers", "case"), parseBackendChoice(a.get("backend", "auto")),
                            Precision::Single, iterations, a.get("json", ""));
        return 0;
    }
    std::vector<int> sizes;
    {
        std::stringstream ss(a.get("sizes", "128"));
        std::string item;
        while (std::getline(ss, item, ',')) {
            try {
                sizes.push_back(std::stoi(item));
            } catch (const std::exception&) {
                throw UsageError("--sizes expects grid sizes like 64,128,256, got '" + item + "'");
            }
            if (sizes.back() < 8 || sizes.back() > 512) throw UsageError("grid sizes must be 8..512");
        }
    }
    const double samples = a.number("samples", 284592);
    const int iterations = a.integer("iterations", 60);
    const int resolve = a.integer("resolve", 30);
    const int cpuVoxels = a.integer("cpu-voxels", 8192);
    const double wholeTolerance = a.number("whole", 0);
    if (a.maybe("whole") && !(wholeTolerance > 0 && wholeTolerance < 1)) throw UsageError("--whole expects a NUFFT tolerance like 1e-4");
    const int wholeRepeats = a.integer("repeats", 5);
    if (samples < 1 || iterations < 1 || resolve < 0 || cpuVoxels < 1 || wholeRepeats < 1) throw UsageError("counts must be positive");

    std::vector<Row> rows;
    std::string device = "CPU: " + std::to_string(cpuThreads()) + " threads";
#ifdef RECONSTUDIO_HAVE_CUDA
    std::string why;
    const bool haveGpu = createCudaBackend(Precision::Single, 0, &why) != nullptr;
    if (haveGpu) device = "GPU: " + cuda::deviceProps(0).describe() + "; " + device;
    else std::fprintf(stderr, "no GPU rows: %s\n", why.c_str());
#else
    const bool haveGpu = false;
    std::fprintf(stderr, "no GPU rows: this build has no CUDA backend\n");
#endif
    for (int n : sizes) {
        std::fprintf(stderr, "preparing %d^3 ...\n", n);
        const Problem p = makeProblem(n, samples);
        const std::string tag = std::to_string(n) + "^3 M=" + std::to_string(p.traj.samples());
        const std::size_t first = rows.size();
        if (!a.flag("no-cpu")) {
            std::fprintf(stderr, "CPU rows...\n");
            rows.push_back(cpuDirectRow<double>(p, cpuVoxels, "CPU.DP"));
            rows.push_back(cpuDirectRow<float>(p, cpuVoxels, "CPU.SP"));
            for (auto& r : cpuEngineRows(p, 1e-5, cpuVoxels)) rows.push_back(r);
        }
#ifdef RECONSTUDIO_HAVE_CUDA
        if (haveGpu) {
            const auto props = cuda::deviceProps(0);
            cudaStream_t s = nullptr;
            cuda::check(cudaStreamCreate(&s), "stream");
            GpuBench bench{p, props, s, rows, n <= 128, a.flag("skip-slow"), a.flag("retune"), wholeTolerance, wholeRepeats,
                           !a.flag("no-breakdown")};
            bench.run(iterations, resolve);
            cudaStreamDestroy(s);
        }
#endif
        for (std::size_t i = first; i < rows.size(); ++i) rows[i].section = tag + " " + rows[i].section;
        (void)haveGpu;
    }
    printTable(rows, device);
    if (auto j = a.maybe("json")) writeJson(*j, rows, device);
    return 0;
}

}  // namespace recon::cli
