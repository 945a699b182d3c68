// The reconstruction "session": one data set on one backend, with everything
// that depends only on the trajectory (density weights, Q) or on the data
// (F^H d) computed once and reused, so a lambda change reruns only CG. The CLI
// and the GUI's controller both drive this class; it has no threads of its own
// and reports through callbacks on the caller's thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/data_weighting.hpp"
#include "recon/core/dataset.hpp"
#include "recon/core/preconditioner_kind.hpp"
#include "recon/core/start_image.hpp"
#include "recon/core/metrics.hpp"
#include "recon/linop/distributed_stack.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/priors/priors.hpp"
#include "recon/sense/coil_maps.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/sense/sense_preconditioner.hpp"
#include "recon/solvers/monitor.hpp"
#include "recon/solvers/admm.hpp"
#include "recon/solvers/normal_cg.hpp"

namespace recon {

// How multi-coil data become one image: every coil solved on its own and combined by
// sum of squares, or one SENSE solve with coil maps (recon/sense). One coil: no difference.
enum class CoilCombination { SumOfSquares, Sense };
std::string toString(CoilCombination c);             // "sos", "sense"
CoilCombination parseCoilCombination(const std::string& name);  // throws InputError listing the names

// The NUFFT's accuracy for Q and F^H d unless asked otherwise. Measured on the demo cases
// (docs/SCALING.md): the iterative image's PSNR moves by at most 0.03 dB from 1e-6 to 1e-3
// (float32 rounding and the prior dominate); 1e-4 keeps a margin at a 6-wide kernel, not 8.
inline constexpr double kDefaultNufftTolerance = 1e-4;

// What the quadratic CG's PreconditionerKind::Auto means on a backend (BackendInfo::kind) for a
// prior, single-image or SENSE; None and Circulant are returned as asked. The one place this rule lives.
PreconditionerKind resolvePreconditioner(PreconditionerKind requested, const BackendInfo& backend, RegularizerKind prior,
                                         bool sense = false);

// The algorithm for the sparse priors (recon/session/sparse_solve.cpp). Auto: POGM for one
// wavelet term (an orthogonal transform: its prox is exact), ADMM for everything else. FISTA
// solves what POGM solves, with another momentum (recon/solvers/fista.hpp). PDHG solves ADMM's
// problem with a k-space preconditioner (recon/solvers/pdhg.hpp; an option, docs/SPARSE.md).
enum class SparseSolver { Auto, Admm, Fista, Pogm, Pdhg };
std::string toString(SparseSolver s);                 // "auto", "admm", "fista", "pogm", "pdhg"
SparseSolver parseSparseSolver(const std::string& name);  // throws InputError listing the names

struct SolveOptions {
    RegularizerKind regularizer = RegularizerKind::FiniteDifference;
    double lambda = 0.02;         // multiplies s = Q(0) (docs/CONVENTIONS.md)
    int iterations = 60;
    double tolerance = 0;         // stop when the relative residual falls below (0: run all)
    int snapshot_every = 5;       // image snapshots to the observer every k iterations (0: last only)
    bool record_costs = true;     // false: the iterations' cost terms in the last record only (RunOptions)
    // Every record's data term exact where the fit is better than its cheap form's accuracy (one forward
    // application per such record; `recon --exact-records`); false: the last record's only (with costs).
    bool exact_records = false;
    FourierMethod method{"", kDefaultNufftTolerance};  // empty name: the backend's default
    // M^{-1} of the quadratic CG (ADMM's is below): the inverse of the circulant approximation of
    // F^H F + lambda s W^H W (recon/backend/circulant_preconditioner.hpp); for SENSE that circulant
    // with its diagonal correction by the maps' energy (recon/sense/sense_preconditioner.hpp).
    // Auto: resolvePreconditioner's rule.
    PreconditionerKind preconditioner = PreconditionerKind::Auto;
    // Where a cold quadratic CG or ADMM solve starts (not SENSE, FISTA or POGM): zero, or
    // F^H (w d) with the density weights gridding uses, scaled by the least-squares optimal scalar.
    StartImage start = StartImage::Zero;
    // The data term (every solve, quadratic and sparse priors, SENSE too): least squares, or least squares
    // weighted by the density weights gridding uses (another problem: F^H D F x = F^H D d, lambda's
    // s = Q_D(0); SENSE: sum_c S_c^H T_D S_c with the one weighted kernel; docs/SCALING.md, docs/SPARSE.md,
    // docs/SENSE.md).
    DataWeighting weighting = DataWeighting::Uniform;
    AnatomicalOptions anatomical;
    // The sparse priors (tv, wavelet, anatomical-tv; recon/session/sparse_solve.cpp): a sum of
    // terms, each with its own lambda. Empty: the one term (regularizer, lambda) above.
    struct PriorTerm {
        RegularizerKind kind;
        double lambda;
        bool anisotropic = false;  // TV kinds: sum of |differences| instead of the gradient's magnitude
    };
    std::vector<PriorTerm> priors;
    // Haar: with FISTA's random shifts it beat db4 by 1.5-5 dB on the 2D demo cases (docs/SPARSE.md).
    WaveletKind wavelet = WaveletKind::Haar;
    int admm_inner_iterations = 5;                      // CG iterations per ADMM x-update
    double admm_threshold_scale = AdmmDefaults::threshold_scale;  // ADMM's rho rule (recon/solvers/admm.hpp)
    double admm_relaxation = AdmmDefaults::relaxation;  // ADMM's over-relaxation alpha (1: none)
    bool admm_balance_rho = AdmmDefaults::adaptive_rho; // ADMM's rho adapted by residual balancing
    bool admm_spectral_rho = AdmmDefaults::spectral_rho; // ... by spectral estimates first (with admm_balance_rho; --admm-rho spectral)
    // M^{-1} of ADMM's inner CG: the inverse square root of the circulant approximation of
    // F^H F + sum_k rho_k W_k^H W_k (docs/SPARSE.md).
    PreconditionerKind admm_preconditioner = PreconditionerKind::Circulant;
    SparseSolver sparse_solver = SparseSolver::Auto;
    double pdhg_dual_scale = 3;         // PDHG's dual against primal steps, in units of s (speed only; PdhgOptions::dual_scale)
    bool pdhg_density_weights = true;   // PDHG's k-space preconditioner: weightingDensityMethod()'s weights (false: none)
    WaveletShifts wavelet_shifts = WaveletShifts::Random;  // FISTA/POGM: how the wavelet grid moves (priors.hpp)
    // Continue from the session's last iterate, kept on the backend, with this lambda: the
    // lambda-tuning path (nothing is rebuilt or copied). Off: a cold start from zero, so the
    // same settings and data always give the same image.
    bool warm_start = false;
    // A warm lambda change of the single-image or SENSE quadratic CG starts from the best image (the Galerkin
    // solution) in the span of its last iterate, the iterate where the previous change began and its
    // last k search directions (>= 0; 3 images each with a penalty, and 3 for that iterate), instead of
    // the last iterate alone; < 0: no recycling (docs/SCALING.md, "A lambda change by recycled directions").
    // 0, the default: the two images only (more directions cost inner products and gained little at 64^3;
    // all of a cold solve's, k >= its iterations, did not pay for the first change either: docs/SCALING.md).
    int kept_directions = 0;
    // A warm lambda change of that CG (warm_start on the resident solve, a new lambda) stops once its relative
    // residual falls below the one the cold solve it continues ended at: about that solve's accuracy at the new
    // lambda, which the recycled start reaches in fewer iterations (1-46 of 60 measured; docs/SCALING.md, "A lambda
    // change to the cold solve's accuracy"), within `iterations`. A `tolerance` > 0 is used instead; false: the whole budget.
    bool lambda_change_to_cold_accuracy = true;
    CoilCombination coil_combination = CoilCombination::SumOfSquares;
    // How SENSE estimates its coil maps when none were given (setCoilMaps). ESPIRiT: the most
    // accurate maps and the best SENSE image on radial-2d-8coil (docs/CONVENTIONS.md's table).
    CoilMapMethod coil_maps = CoilMapMethod::Espirit;
};

// Called after every CG iteration, on the thread that called solve(). `snapshot`
// is non-null every snapshot_every iterations and on the last one. `coil` counts
// from 0; multi-coil data are solved coil by coil and combined by sum of squares, or
// (SolveOptions::coil_combination = Sense) in one SENSE solve reported as coil 0.
using IterationObserver =
    std::function<void(int coil, const IterationRecord& record, const ComplexArray* snapshot)>;

// A Monitor from callbacks, for callers that need no class of their own.
class CallbackMonitor final : public Monitor {
public:
    CallbackMonitor(IterationObserver on_iteration = {}, const std::atomic<bool>* cancel = nullptr,
                    std::function<void(Phase, double)> on_phase = {})
        : Monitor(cancel), on_iteration_(std::move(on_iteration)), on_phase_(std::move(on_phase)) {}
    void phase(Phase p, double f) override {
        if (on_phase_) on_phase_(p, f);
    }
    void iteration(int coil, const IterationRecord& r, const ComplexArray* snapshot) override {
        if (on_iteration_) on_iteration_(coil, r, snapshot);
    }

private:
    IterationObserver on_iteration_;
    std::function<void(Phase, double)> on_phase_;
};

struct SolveResult {
    ComplexArray image;                  // combined over coils (SENSE: the magnitude, comparable with sum of squares)
    ComplexArray complex_image;          // SENSE only: the complex image (phase relative to the maps' reference)
    std::string coil_combination = "sos";  // "sos" or "sense" (one coil: "sos")
    std::vector<IterationRecord> history;  // of the last coil (all of them for one coil)
    bool cancelled = false;              // stopped early; `image` is the last complete iterate
    bool warm_started = false;           // continued from the previous iterate (SolveOptions::warm_start)
    int total_iterations = 0;            // since the last cold start (equals history.size() after one)
    // A warm lambda change: the relative residual it stopped below, the cold solve's (0: it ran its budget or a
    // tolerance given; SolveOptions::lambda_change_to_cold_accuracy).
    double cold_accuracy = 0;
    double seconds = 0;                  // the CG loop alone
    double lambda = 0;
    double lambda_scale = 0;
    std::string method;
    std::string solver = "cg";          // "cg", "admm" or "fista"
    // SENSE only: the coil maps it used (the session's, shared, never modified), for views and reports.
    std::shared_ptr<const CoilMaps> coil_maps;
    // SENSE split over several devices (setSenseDevices): how many took a share of the coils,
    // and the copies and the sum on the home device per normal-operator application (seconds).
    int devices = 1;
    double communication_seconds = 0;
};

struct GriddingResult {
    std::string name;     // "gridding-trilinear" / "gridding-kb"
    ComplexArray image;   // in image units (docs/CONVENTIONS.md: divided by N^d)
    double seconds = 0;   // this method's own work: its density weights (even when cached) + gridding
    std::string density;  // the density weights it used ("pipe-menon", "radial-ramp", "the data set's own")
    double density_seconds = 0;  // what computing those weights cost (0 for the data set's own)
};

// Density compensation for gridding. Pipe-Menon works for any trajectory; the
// radial ramp is the analytic density of radial sampling, the seeds' era choice for
// simple gridding, and applies to radial trajectories only (radialDensityWeights: |k|^(d-1)
// per unit of spoke, the sample at k = 0 its cell's exact share).
// Jackson et al. 1991: the inverse of the sampling density smoothed by the gridding kernel's
// autocorrelation, which is Pipe-Menon's first iterate (the density-weighted CG's weights).
enum class DensityMethod { PipeMenon, RadialRamp, Jackson };
std::string toString(DensityMethod m);
// Pipe-Menon's iterations. Measured on the demo cases (docs/SCALING.md): 5 iterations give
// weights within 2.2 % (RMS) of 20's and Kaiser-Bessel gridding within 0.04 dB of its PSNR
// (2D/3D radial, spiral, stack of spirals), at a quarter of the time.
inline constexpr int kPipeMenonIterations = 5;

// The noise per k-space sample, sigma with E|n|^2 = sigma^2 (coil 0), and where it came from:
// the data set's noise scan, else the outer k-space (recon/session/lambda_choice.cpp).
struct NoiseEstimate {
    double sigma = 0;     // 0: no estimate
    std::string source;
    std::size_t samples = 0;  // how many it rests on
};
NoiseEstimate estimateNoise(const Dataset& d);
// The k-space sampling density at half the largest |k| (the shell 0.4..0.6 k_max) over the mean
// density M / N^d: F^H F's eigenvalue there over its mean s. About 1.3 for 2D radial spokes, 2.5 for
// the 3D kooshball (density 1/|k| against 1/|k|^2); 1 where the shell holds no samples. With
// `weights` (density-weighted least squares) each sample counts its weight: F^H D F's eigenvalue
// there over its mean s_D; 4/pi (2D) or 6/pi (3D) where they compensate the density exactly (flat
// on the disc or ball the samples cover, against its mean over the N^d grid).
double midBandDensity(const Dataset& d, const std::vector<double>* weights = nullptr);
// A sparse prior's lambda for the uniform data term carried over to the density-weighted one
// (weights D): lambda r_D / r, r and r_D midBandDensity without and with D, so that the prior's
// threshold against the data term's curvature where it acts (lambda s / (r s) = lambda / r) is
// the same in both problems.
double densityWeightedSparseLambda(double lambda, const Dataset& d, const std::vector<double>& weights);

// What suggestLambda chose and why (recon/session/lambda_choice.cpp; docs/CONVENTIONS.md).
//  - Sparse priors (tv, wavelet, anatomical-tv): lambda is a threshold in image units, so it is
//    the prior's fraction kappa of the image's magnitude m (the largest |x| after 10 CG
//    iterations without a prior) times r = midBandDensity (F^H F's eigenvalue where the prior
//    acts, over s): TV 0.08, wavelet 0.16 in 2D and 0.16 sqrt 2 in 3D, anatomical TV 0.8; and at
//    least c sigma_img, the noise's floor (c = 2, wavelets 4; sigma_img below).
//  - Quadratic priors (tikhonov, fd, anatomical): the discrepancy principle, the lambda at which
//    ||F x - d||^2 falls to M sigma^2, found along a warm-started path of lambdas.
struct LambdaChoice {
    double lambda = 0;          // times s, as SolveOptions::lambda
    std::string rule;           // one line: the rule and the numbers it used
    NoiseEstimate noise;
    double image_scale = 0;     // m (sparse priors)
    double band_density = 0;    // r, midBandDensity (sparse priors)
    // Sparse priors: lambda = max(signal_lambda, noise_lambda), the signal's rule kappa m r and the
    // noise's floor c sigma_img, sigma_img the least-squares image's noise at the mid band (0 where
    // the outer k-space's white part is not noise).
    double image_noise = 0;
    double signal_lambda = 0;
    double noise_lambda = 0;
    // Quadratic priors: the path it chose from, (lambda, ||F x - d||^2) in the order solved, and its target M sigma^2.
    std::vector<std::pair<double, double>> curve;
    double target = 0;
};

class ReconstructionSession {
public:
    explicit ReconstructionSession(std::shared_ptr<Backend> backend);

    // Drops caches tied to the old data set. A data set with noise samples (a noise scan) is
    // prewhitened here, on a copy (prewhitenWithNoiseScan), so every caller reconstructs whitened data.
    void setDataset(std::shared_ptr<const Dataset> data);
    const Dataset& dataset() const;
    bool hasDataset() const { return data_ != nullptr; }
    Backend& backend() { return *backend_; }
    std::shared_ptr<Backend> backendPtr() const { return backend_; }

    // Density compensation weights in k-space area per sample: the data set's own
    // when it has them, else computed by `method` (cached per method).
    const std::vector<double>& densityWeights(DensityMethod method, const Progress& progress = {});
    const std::vector<double>& densityWeights(const Progress& progress = {}) {
        return densityWeights(kaiserBesselDensityMethod(), progress);
    }
    // The seeds' baseline: trilinear interpolation onto the N grid + iFFT, no
    // deapodisation; density weights by the radial ramp for radial data, else Pipe-Menon.
    GriddingResult gridTrilinear(const Progress& progress = {});
    DensityMethod trilinearDensityMethod() const;
    // Convolution gridding (Beatty et al. 2005 Kaiser-Bessel, deapodisation); density
    // weights by `density`, or kaiserBesselDensityMethod() when not given.
    GriddingResult gridKaiserBessel(const GriddingOptions& opts = kaiserBesselGridding(), const Progress& progress = {},
                                    std::optional<DensityMethod> density = std::nullopt);
    // Straight spokes through the centre, at most 2x below Nyquist (radialUndersampling):
    // the radial ramp, their exact sampling density. Sparser spokes no longer tile the
    // edge of k-space, and Pipe-Menon, which weighs each sample by the kernel overlap
    // it actually has, avoids over-weighting them. Everything else: Pipe-Menon.
    // (Measured on BART's phantoms, tools/bart: the ramp wins by 0.03-0.05 dB at
    // Nyquist in 3D and with noise; Pipe-Menon by 0.2 dB at 3x and 1.1 dB at 6x.)
    DensityMethod kaiserBesselDensityMethod() const;
    // The density-weighted CG's weights (SolveOptions::weighting): the radial ramp where gridding
    // uses it, else Jackson's. On BART's kooshballs (docs/SCALING.md) Jackson's weights reached the
    // same PSNR in the same iterations as Pipe-Menon's 5 at a fraction of the cost; the ramp on
    // undersampled spokes never did.
    DensityMethod weightingDensityMethod() const;

    // d as the data term's operator gives it, on the backend: coil `coil`'s samples (coil < 0: all
    // coils one after another, SENSE's E), times sqrt(w) with density weights (D^{1/2} d). The solvers'
    // records compute ||F x - d||^2 directly from it where the expanded form cancels (DataTerm).
    std::shared_ptr<const Vector> dataOnBackend(int coil, const std::vector<double>* weights) const;
    // The same, made on the backend only when a record first needs it (DataTerm), then kept.
    DataSource dataSource(int coil, const std::vector<double>* weights) const;
    // F^H d of one coil (kept in the backend's memory) and the Toeplitz kernel, cached per method.
    std::shared_ptr<const Vector> adjointData(int coil, const FourierMethod& method, const Progress& progress = {});
    // F^H d of every coil (SENSE's), the missing ones in one batched call (Backend::adjointsOnBackend),
    // cached with adjointData's; density-weighted: F^H D d with weightingDensityMethod()'s weights.
    std::vector<std::shared_ptr<const Vector>> coilAdjoints(const FourierMethod& method, const Progress& progress = {},
                                                            DataWeighting weighting = DataWeighting::Uniform);
    // F^H (w d) of one coil with the density weights gridding uses (densityWeights()), on the
    // backend, cached per method: StartImage::Gridding's start before its scaling.
    std::shared_ptr<const Vector> densityWeightedAdjoint(int coil, const FourierMethod& method, const Progress& progress = {});
    // The Toeplitz kernel of F^H F, or of F^H D F with the density weights (cached per method and weighting).
    std::shared_ptr<const ToeplitzOperator> toeplitz(const FourierMethod& method, const Progress& progress = {},
                                                     DataWeighting weighting = DataWeighting::Uniform);
    // The eigenvalues of T. Chan's circulant of F^H F (or F^H D F) for a method (cached).
    // On the session's backend (computed where Q lives).
    std::shared_ptr<const Vector> circulantData(const FourierMethod& method, const Progress& progress,
                                                DataWeighting weighting = DataWeighting::Uniform);
    // SENSE's system for any prior (sense_solve.cpp): E (one device or split), E^H d on the backend,
    // ||d||^2 over all coils, and the maps it holds; with opts.weighting density E_D = stack_c D^{1/2} F S_c
    // (its normal sum_c S_c^H T_D S_c, T_D the one kernel of F^H D F), E_D^H D^{1/2} d and ||D^{1/2} d||^2.
    struct SenseSystem {
        LinearOperatorPtr encoding;
        std::shared_ptr<const SenseOperator> one_device;  // null when split over devices
        Vector rhs;
        double data_norm2 = 0;
        DataSource data;  // (D^{1/2}) d, all coils (dataSource: uploaded on first need)
        std::shared_ptr<const CoilMaps> maps;
        std::string key;  // the maps and devices: another key is another system
    };
    // ADMM's inner preconditioner for the rho of each term (sparse_solve.cpp); with a SENSE system,
    // that circulant (rho in the penalty weight's place) corrected by the maps' energy (SensePreconditioner).
    std::function<LinearOperatorPtr(const std::vector<double>&)> admmPreconditioner(const std::vector<SparseTerm>& terms,
                                                                                   const std::vector<SolveOptions::PriorTerm>& priors,
                                                                                   const SolveOptions& opts, const FourierMethod& m,
                                                                                   Monitor& monitor, const SenseSystem* sense = nullptr);
    // F = diag(phi) * (the backend's Fourier sums), its normal F^H F through the Toeplitz kernel;
    // density-weighted: D^{1/2} F (phi sqrt(w)), its normal F^H D F.
    LinearOperatorPtr fourierOperator(const FourierMethod& method, const Progress& progress = {},
                                      DataWeighting weighting = DataWeighting::Uniform);
    // W as an operator on the backend, cached per kind: fd and anatomical matrix-free (the
    // gradient stencil, its normal W^T W in one pass; recon/priors quadraticRegularizer),
    // Tikhonov the identity as a sparse matrix.
    LinearOperatorPtr regularizerOperator(const SolveOptions& opts);
    // M^{-1} for (F^H F + weight W^H W) with the regulariser of `opts` (none when `with_penalty`
    // is false): the circulants' eigenvalues cached per method and regulariser, only M^{-1}
    // rebuilt for a new weight. Whatever opts.preconditioner says (the caller resolves it). M^{-p}: p = 3/4
    // for single-image solves (docs/SCALING.md), SENSE's its own (kSenseCirculantExponent).
    LinearOperatorPtr preconditioner(const SolveOptions& opts, bool with_penalty, double weight, const Progress& progress = {},
                                     double exponent = 0.75);
    double lambdaScale(DataWeighting weighting = DataWeighting::Uniform);  // s = Q(0), density-weighted Q_D(0)

    // The iterative reconstruction, reporting through `monitor` (phases, iterations, cancel).
    // `warm` (an image) starts CG there; opts.warm_start continues the resident solve instead.
    // Cancel takes effect between iterations (and inside F^H d and Q).
    SolveResult solve(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm = nullptr);
    SolveResult solve(const SolveOptions& opts, const IterationObserver& observer = {},
                      const std::atomic<bool>* cancel = nullptr, const ComplexArray* warm = nullptr);

    // lambda chosen for the user (--lambda auto, the GUI's Suggest): for opts.regularizer (or the
    // first of opts.priors), from the data alone, by the documented rule of its kind (LambdaChoice).
    // Cancel (monitor) takes effect between the few CG iterations it takes.
    LambdaChoice suggestLambda(const SolveOptions& opts, Monitor& monitor);

    // Coil maps for SENSE: those set by setCoilMaps, else estimated from the data by `method`
    // (recon/sense/coil_maps.hpp, espirit.hpp) and cached until another method is asked for.
    const CoilMaps& coilMaps(CoilMapMethod method = SolveOptions{}.coil_maps, const Progress& progress = {});
    void setCoilMaps(CoilMaps maps);  // checked against the data set (InputError); used whatever the method
    // The devices SENSE's normal operator splits its coils over (recon/sense/sense_operator.hpp's
    // splitSense), each with its own copy of the Toeplitz kernel; CG stays on this session's
    // backend, which is one of them when its entry's backend is backendPtr(). Empty (the
    // default): everything on the session's backend.
    void setSenseDevices(std::vector<SplitDevice> devices);

    // F rho (with phi) at the data set's samples, for simulation checks.
    ComplexArray forward(const ComplexArray& image, const FourierMethod& method);

    std::string cacheStatus() const;  // e.g. "cached: Q (nufft 1e-06), F^H d, density weights"
    FourierMethod resolve(const FourierMethod& m) const;

private:
    std::vector<double> phiValues() const;  // phi(k_m), real
    // phi(k_m), or phi(k_m) sqrt(w_m) density-weighted: the data term's D^{1/2} F is F with these.
    std::vector<double> modelPhi(DataWeighting weighting);
    // The data set's reference image for opts.regularizer (null if none); InputError when the anatomical kind has none.
    const ComplexArray* regularizerReference(const SolveOptions& opts) const;
    // solve() for the sparse priors: ADMM (recon/session/sparse_solve.cpp).
    SolveResult solveSparse(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm);
    struct SparseState;  // the resident ADMM and the transforms, built once per data set
    std::shared_ptr<SparseState> sparse_;

    std::shared_ptr<Backend> backend_;
    std::shared_ptr<const Dataset> data_;
    mutable std::mutex mutex_;  // guards the caches against a status query from another thread
    std::map<DensityMethod, std::vector<double>> density_;
    std::map<DensityMethod, double> density_seconds_;  // what computing each cached set cost
    // radialUndersampling of the data set (a pass over every sample), asked for by each step of a
    // density-weighted solve through kaiserBesselDensityMethod(): measured once per data set.
    mutable std::optional<double> radial_undersampling_;
    using AdjointCache = std::map<std::string, std::vector<std::shared_ptr<const Vector>>>;  // method key -> per coil
    AdjointCache fhd_;      // F^H d
    AdjointCache gridded_;  // F^H (w d)
    AdjointCache weighted_fhd_;  // F^H (w d) with weightingDensityMethod()'s w: the density-weighted CG's b
    // F^H (w d) (weights null: F^H d) of one coil on the backend, cached in `cache`.
    std::shared_ptr<const Vector> weightedAdjoint(AdjointCache& cache, int coil, const FourierMethod& method,
                                                  const std::vector<double>* weights, const Progress& progress);
    std::map<std::string, std::shared_ptr<const ToeplitzOperator>> toeplitz_;
    std::map<std::string, LinearOperatorPtr> fourier_;
    LinearOperatorPtr regularizer_;
    RegularizerKind regularizer_kind_{};
    // The circulant preconditioner's eigenvalues (per method key; per regulariser kind) and the last M^{-1}.
    std::map<std::string, std::shared_ptr<const Vector>> circulant_data_;
    std::map<RegularizerKind, std::shared_ptr<const Vector>> circulant_penalty_;
    struct BuiltPreconditioner {
        std::string key;  // method, regulariser, weight
        LinearOperatorPtr op;
    } preconditioner_;
    // The last single-coil solve, kept on the backend so a lambda change re-solves without a rebuild.
    struct ResidentSolve {
        std::string key;  // method, regulariser
        std::unique_ptr<NormalEquationsCg> cg;
        int total_iterations = 0;
        double cold_residual = 0;  // the relative residual its cold run ended at (0: unknown)
    };
    ResidentSolve resident_;
    // SolveOptions::kept_directions on a solver: < 0 no recycling, else a ring of that many directions.
    static void recycle(NormalEquationsCg& cg, int kept_directions);
    // A lambda change on a resident solve with a penalty term (single-coil or SENSE): the new weight and
    // M^{-1} for it (null: none) in one restart, recycled as opts.kept_directions says.
    static void changePenaltyWeight(NormalEquationsCg& cg, const SolveOptions& opts, double weight, LinearOperatorPtr preconditioner);
    // The tolerance a run on the resident solve takes: opts.tolerance, or for a lambda change (the penalty's
    // weight moved) the cold run's residual (SolveOptions::lambda_change_to_cold_accuracy), also noted in `result`.
    double residentTolerance(const SolveOptions& opts, bool weight_changed, SolveResult& result) const;
    // The runner's options from a solve's (every path: single-coil, SENSE, the sparse priors).
    static RunOptions runOptions(const SolveOptions& opts);
    // Where solves go once the device ran out of memory for one (the same data on the CPU backend).
    std::unique_ptr<ReconstructionSession> cpu_fallback_;
    SolveResult solveHere(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm);

    std::shared_ptr<const CoilMaps> coil_maps_;  // shared with the SolveResults that used them
    std::optional<CoilMapMethod> coil_maps_method_;  // how coil_maps_ was estimated; empty: given by setCoilMaps
    std::vector<SplitDevice> sense_devices_;
    std::shared_ptr<DistributedStack> sense_split_;  // the resident SENSE solve's split operator (its figures)
    std::shared_ptr<const SensePreconditioner> sense_preconditioner_;  // the resident SENSE solve's maps' energy
    // The resident SENSE solve's M^{-1} for the weight (null without a preconditioner).
    LinearOperatorPtr sensePreconditioner(const SolveOptions& opts, bool with_penalty, double weight, const Progress& progress);
    std::shared_ptr<const Vector> circulantPenalty(const SolveOptions& opts);  // W^H W's circulant eigenvalues (cached)
    SolveResult solveSense(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm);  // sense_solve.cpp
    SenseSystem senseSystem(const SolveOptions& opts, Monitor& monitor);
    std::string senseMapsKey(const SolveOptions& opts) const;
    // The sparse priors' s with SENSE: E^H E = sum_c S_c^H T S_c, so its scale is Q(0) times the maps'
    // mean energy sum_c |S_c|^2 over the voxels inside (SensePreconditioner::kInside); 1 for ESPIRiT's
    // normalised maps, so lambda means there what it means for one coil. Density-weighted: Q_D(0) in Q(0)'s place.
    double senseLambdaScale(const CoilMaps& maps, DataWeighting weighting = DataWeighting::Uniform);

    GriddingResult gridWith(const GriddingOptions& opts, DensityMethod density, const Progress& progress);
    // Before gridding, Pipe-Menon or coil maps (solve = false) or a solve that builds Q: the stage's estimate
    // (estimateReconstructionMemory) against what the backend can still allocate. On the CPU
    // an InputError naming both; on a device an OutOfMemory, from which solve() falls back to the CPU.
    void requireMemory(bool solve) const;
};

// Sum of squares over coils: sqrt(sum |x_c|^2), real and non-negative.
ComplexArray sumOfSquares(const std::vector<ComplexArray>& coils);
// A SENSE solve's images: the complex one and its magnitude (sense_solve.cpp).
void setSenseImage(SolveResult& result, ComplexArray complex_image);

}  // namespace recon
