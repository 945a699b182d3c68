#include "recon/session/reconstruction.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/host_memory.hpp"
#include "recon/priors/priors.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon {
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string methodKey(const FourierMethod& m) {
    if (m.name == "nufft") {
        std::ostringstream s;
        s << m.name << " " << m.tolerance;
        return s.str();
    }
    return m.name;
}

// What the data term's caches (Q, F, the circulant's eigenvalues) are kept under.
std::string modelKey(const FourierMethod& m, DataWeighting w) {
    return w == DataWeighting::Uniform ? methodKey(m) : methodKey(m) + " | density-weighted";
}

// Gridding output in image units: the adjoint sum over density-weighted data
// approximates N^d times the object (docs/CONVENTIONS.md), so divide once here.
void toImageUnits(ComplexArray& img, const Grid& g) {
    const double s = 1.0 / double(g.voxels());
    for (auto& v : img) v *= s;
}

}  // namespace

ReconstructionSession::ReconstructionSession(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {
    if (!backend_) throw Error("ReconstructionSession needs a backend");
}

void ReconstructionSession::setDataset(std::shared_ptr<const Dataset> data) {
    if (data) data->validate(data->name.empty() ? "data set" : data->name);
    if (data && !data->noise.empty()) data = prewhitenedCopy(*data);
    std::lock_guard<std::mutex> lock(mutex_);
    data_ = std::move(data);
    density_.clear();
    density_seconds_.clear();
    radial_undersampling_.reset();
    fhd_.clear();
    gridded_.clear();
    weighted_fhd_.clear();
    toeplitz_.clear();
    fourier_.clear();
    regularizer_.reset();
    circulant_data_.clear();
    circulant_penalty_.clear();
    preconditioner_ = {};
    resident_ = {};
    sense_preconditioner_.reset();
    cpu_fallback_.reset();
    sparse_.reset();
    coil_maps_.reset();
    coil_maps_method_.reset();
}

const Dataset& ReconstructionSession::dataset() const {
    if (!data_) throw Error("no data set loaded");
    return *data_;
}

FourierMethod ReconstructionSession::resolve(const FourierMethod& m) const {
    FourierMethod r = m;
    if (r.name.empty()) r.name = backend_->defaultMethod();
    return r;
}

std::vector<double> ReconstructionSession::phiValues() const {
    const Dataset& d = dataset();
    std::vector<double> phi(d.samples());
    for (std::size_t m = 0; m < phi.size(); ++m)
        phi[m] = basisTransform(d.basis, d.grid, d.trajectory.kx(m), d.trajectory.ky(m), d.trajectory.kz(m));
    return phi;
}

std::vector<double> ReconstructionSession::modelPhi(DataWeighting weighting) {
    std::vector<double> phi = phiValues();
    if (weighting == DataWeighting::Density) {
        const std::vector<double>& w = densityWeights(weightingDensityMethod());
        for (std::size_t m = 0; m < phi.size(); ++m) phi[m] *= std::sqrt(w[m]);
    }
    return phi;
}

double ReconstructionSession::lambdaScale(DataWeighting weighting) {
    const Dataset& d = dataset();
    if (weighting == DataWeighting::Uniform) return regularizationScale(d.basis, d.grid, d.trajectory);
    double s = 0;  // Q_D(0) = sum_m w_m |phi_m|^2: the mean eigenvalue of F^H D F, as Q(0) is F^H F's
    for (double p : modelPhi(weighting)) s += p * p;
    return s;
}

std::string toString(DensityMethod m) {
    switch (m) {
        case DensityMethod::PipeMenon: return "pipe-menon";
        case DensityMethod::RadialRamp: return "radial-ramp";
        case DensityMethod::Jackson: return "jackson";
    }
    return "pipe-menon";
}

DensityMethod ReconstructionSession::trilinearDensityMethod() const {
    const Dataset& d = dataset();
    const bool radial = d.trajectory.kind.rfind("radial", 0) == 0;
    return radial && d.density.empty() ? DensityMethod::RadialRamp : DensityMethod::PipeMenon;
}

DensityMethod ReconstructionSession::kaiserBesselDensityMethod() const {
    const Dataset& d = dataset();
    std::optional<double> undersampling;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        undersampling = radial_undersampling_;
    }
    if (!undersampling) {
        undersampling = radialUndersampling(d.trajectory, d.grid);
        std::lock_guard<std::mutex> lock(mutex_);
        radial_undersampling_ = undersampling;
    }
    return d.density.empty() && *undersampling > 0 && *undersampling <= 2 ? DensityMethod::RadialRamp
                                                                          : DensityMethod::PipeMenon;
}

DensityMethod ReconstructionSession::weightingDensityMethod() const {
    const DensityMethod kb = kaiserBesselDensityMethod();
    return kb == DensityMethod::PipeMenon ? DensityMethod::Jackson : kb;
}

const std::vector<double>& ReconstructionSession::densityWeights(DensityMethod method, const Progress& progress) {
    const Dataset& d = dataset();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = density_.find(method);
        if (it != density_.end()) return it->second;
    }
    const auto t0 = Clock::now();
    std::vector<double> w;
    if (!d.density.empty()) {
        w = d.density;
    } else if (method == DensityMethod::PipeMenon || method == DensityMethod::Jackson) {
        requireMemory(false);
        // Jackson's weights are Pipe-Menon's first iterate, from the same kernel.
        w = backend_->densityCompensation(d.trajectory, d.grid, kaiserBesselGridding(2.0, 4),
                                          method == DensityMethod::Jackson ? 1 : kPipeMenonIterations, progress);
    } else {
        w = radialDensityWeights(d.trajectory, d.grid.dims);
    }
    const double seconds = d.density.empty() ? secondsSince(t0) : 0.0;
    std::lock_guard<std::mutex> lock(mutex_);
    density_seconds_[method] = seconds;
    return density_[method] = std::move(w);
}

GriddingResult ReconstructionSession::gridTrilinear(const Progress& progress) {
    return gridWith(trilinearGridding(), trilinearDensityMethod(), progress);
}

GriddingResult ReconstructionSession::gridKaiserBessel(const GriddingOptions& opts, const Progress& progress,
                                                       std::optional<DensityMethod> density) {
    return gridWith(opts, density.value_or(kaiserBesselDensityMethod()), progress);
}

void ReconstructionSession::requireMemory(bool solve) const {
    const Dataset& d = dataset();
    const BackendInfo info = backend_->info();
    const MemoryEstimate e =
        estimateReconstructionMemory(d.grid, d.samples(), d.coils, info.precision, info.q_oversampling);
    const std::size_t bytes = solve ? e.solve : e.gridding;
    const std::string what = std::string(solve ? "the iterative reconstruction" : "gridding") + " of " +
                             std::to_string(d.samples()) + " samples on a " + d.grid.describe() + " grid in " +
                             toString(info.precision);
    if (info.kind == "cpu") return requireHostMemory(bytes, what);
    const std::size_t available = backend_->availableMemory();
    if (available > 0 && bytes > available)
        throw OutOfMemory(what + " needs about " + OutOfMemory::humanBytes(bytes) + " of device memory, " +
                              OutOfMemory::humanBytes(available) + " is free",
                          bytes);
}

GriddingResult ReconstructionSession::gridWith(const GriddingOptions& opts, DensityMethod density, const Progress& progress) {
    const Dataset& d = dataset();
    requireMemory(false);
    const std::vector<double>& w = densityWeights(density, progress);
    GriddingResult r;
    r.density = d.density.empty() ? toString(density) : "the data set's own";
    {
        std::lock_guard<std::mutex> lock(mutex_);
        r.density_seconds = density_seconds_[density];
    }
    const auto t0 = Clock::now();  // after the weights: each method is charged its own, cached or not
    std::vector<ComplexArray> coils;
    for (int c = 0; c < d.coils; ++c) {
        ComplexArray weighted(d.samples()), img;
        const cdouble* data = d.coil(c);
        for (std::size_t m = 0; m < weighted.size(); ++m) weighted[m] = w[m] * data[m];
        backend_->grid(d.trajectory, weighted, d.grid, opts, img, progress);
        toImageUnits(img, d.grid);
        coils.push_back(std::move(img));
    }
    r.name = opts.kernel == SpreadKernelKind::Linear ? "gridding-trilinear" : "gridding-kb";
    r.image = d.coils == 1 ? std::move(coils[0]) : sumOfSquares(coils);
    r.seconds = secondsSince(t0) + r.density_seconds;
    return r;
}

std::shared_ptr<const Vector> ReconstructionSession::adjointData(int coil, const FourierMethod& method,
                                                                 const Progress& progress) {
    return weightedAdjoint(fhd_, coil, method, nullptr, progress);
}

std::vector<std::shared_ptr<const Vector>> ReconstructionSession::coilAdjoints(const FourierMethod& method,
                                                                             const Progress& progress, DataWeighting weighting) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(method);
    const std::string key = methodKey(m);
    // The same caches as adjointData's and the weighted CG's (weightedAdjoint), so a coil's F^H d is made once.
    const bool weighted = weighting == DataWeighting::Density;
    AdjointCache& cache = weighted ? weighted_fhd_ : fhd_;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = cache.find(key);
        if (it != cache.end() && it->second.size() == std::size_t(d.coils) &&
            std::all_of(it->second.begin(), it->second.end(), [](const auto& v) { return bool(v); }))
            return it->second;
    }
    // phi d (weighted: phi w d) of every coil (phi is real: phi* d = phi d), in parallel.
    std::vector<double> phi = phiValues();
    if (weighted) {
        const std::vector<double>& w = densityWeights(weightingDensityMethod());
        for (std::size_t i = 0; i < phi.size(); ++i) phi[i] *= w[i];
    }
    const std::size_t samples = d.samples();
    ComplexArray mu;
    resizeForOverwrite(mu, d.kspace.size());
    const std::int64_t total = std::int64_t(mu.size());
#pragma omp parallel for schedule(static) if (total > 65536)
    for (std::int64_t i = 0; i < total; ++i) mu[std::size_t(i)] = phi[std::size_t(i) % samples] * d.kspace[std::size_t(i)];
    auto all = backend_->adjointsOnBackend(d.trajectory, mu, d.coils, SampleGrid::image(d.grid), m, progress);
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = cache[key];
    slot = all;
    return all;
}

std::shared_ptr<const Vector> ReconstructionSession::densityWeightedAdjoint(int coil, const FourierMethod& method,
                                                                            const Progress& progress) {
    return weightedAdjoint(gridded_, coil, method, &densityWeights(progress), progress);
}

std::shared_ptr<const Vector> ReconstructionSession::weightedAdjoint(AdjointCache& cache, int coil, const FourierMethod& method,
                                                                     const std::vector<double>* weights, const Progress& progress) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(method);
    const std::string key = methodKey(m);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = cache.find(key);
        if (it != cache.end() && it->second[std::size_t(coil)]) return it->second[std::size_t(coil)];
    }
    const std::vector<double> phi = phiValues();
    ComplexArray mu(d.samples());
    const cdouble* data = d.coil(coil);
    for (std::size_t i = 0; i < mu.size(); ++i) mu[i] = phi[i] * data[i] * (weights ? (*weights)[i] : 1.0);  // phi is real: phi* d = phi d
    auto out = backend_->adjointOnBackend(d.trajectory, mu, SampleGrid::image(d.grid), m, progress);
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = cache[key];
    slot.resize(std::size_t(d.coils));
    slot[std::size_t(coil)] = out;
    return out;
}

std::shared_ptr<const ToeplitzOperator> ReconstructionSession::toeplitz(const FourierMethod& method, const Progress& progress,
                                                                        DataWeighting weighting) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(method);
    const std::string key = modelKey(m, weighting);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = toeplitz_.find(key);
        if (it != toeplitz_.end()) return it->second;
    }
    std::vector<double> phi2 = modelPhi(weighting);
    for (auto& p : phi2) p *= p;
    std::shared_ptr<const ToeplitzOperator> tk = backend_->makeToeplitz(d.grid, d.trajectory, phi2, m, progress);
    std::lock_guard<std::mutex> lock(mutex_);
    toeplitz_[key] = tk;
    return tk;
}

LinearOperatorPtr ReconstructionSession::fourierOperator(const FourierMethod& method, const Progress& progress,
                                                        DataWeighting weighting) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(method);
    const std::string key = modelKey(m, weighting);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = fourier_.find(key);
        if (it != fourier_.end()) return it->second;
    }
    LinearOperatorPtr f = recon::fourierOperator(*backend_, d.trajectory, d.grid, modelPhi(weighting), m, toeplitz(m, progress, weighting));
    std::lock_guard<std::mutex> lock(mutex_);
    fourier_[key] = f;
    return f;
}

const ComplexArray* ReconstructionSession::regularizerReference(const SolveOptions& opts) const {
    const Dataset& d = dataset();
    const ComplexArray* ref = d.hasReference() ? &d.reference : nullptr;
    if (opts.regularizer == RegularizerKind::AnatomicalFiniteDifference && !ref)
        throw InputError("the anatomically weighted regulariser needs a reference image; this data set has none");
    return ref;
}

LinearOperatorPtr ReconstructionSession::regularizerOperator(const SolveOptions& opts) {
    const Dataset& d = dataset();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (regularizer_ && regularizer_kind_ == opts.regularizer) return regularizer_;
    }
    const ComplexArray* ref = regularizerReference(opts);
    LinearOperatorPtr op;
    if (opts.regularizer == RegularizerKind::Tikhonov) {
        auto reg = std::make_shared<const Regularizer>(makeRegularizer(opts.regularizer, d.grid, ref, opts.anatomical));
        op = sparseMatrix(*backend_, std::shared_ptr<const CsrMatrix>(reg, &reg->w),
                          std::shared_ptr<const CsrMatrix>(reg, &reg->normal), "W (" + toString(opts.regularizer) + ")");
    } else {
        // fd and anatomical: the gradient stencil, nothing built on the host or uploaded (the CSR
        // W^T W took about half of a 128^3 SENSE solve on the H100).
        op = quadraticRegularizer(*backend_, opts.regularizer, d.grid, ref, opts.anatomical);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    regularizer_ = op;
    regularizer_kind_ = opts.regularizer;
    return op;
}

std::shared_ptr<const Vector> ReconstructionSession::circulantData(const FourierMethod& m, const Progress& progress,
                                                                   DataWeighting weighting) {
    const std::string mkey = modelKey(m, weighting);
    auto it = circulant_data_.find(mkey);
    if (it == circulant_data_.end()) {
        // T. Chan's optimal circulant: measured on the demo cases it needs fewer iterations than
        // Strang's, whose wrapped-off corners of Q leave negative eigenvalues for the floor to catch.
        // Folded and transformed where Q lives (on a GPU nothing crosses to the host).
        it = circulant_data_
                 .emplace(mkey, std::make_shared<const Vector>(circulantEigenvalues(*backend_, *toeplitz(m, progress, weighting), CirculantApproximation::Chan)))
                 .first;
    }
    return it->second;
}

std::shared_ptr<const Vector> ReconstructionSession::circulantPenalty(const SolveOptions& opts) {
    auto it = circulant_penalty_.find(opts.regularizer);
    if (it == circulant_penalty_.end()) {
        // W^H W's impulse response through the regulariser's operator, on the backend (no matrix).
        it = circulant_penalty_
                 .emplace(opts.regularizer, std::make_shared<const Vector>(impulseCirculantEigenvalues(*backend_, dataset().grid, *regularizerOperator(opts))))
                 .first;
    }
    return it->second;
}

PreconditionerKind resolvePreconditioner(PreconditionerKind requested, const BackendInfo& backend, RegularizerKind prior, bool sense) {
    if (requested != PreconditionerKind::Auto) return requested;
    // SENSE: its preconditioner reaches plain CG's 60-iteration image in fewer iterations on both
    // backends (docs/SENSE.md, "The preconditioner"); on an H100 at 128^3, 8 coils, in 36 iterations
    // instead of 59 at 3.35 against 3.2 ms each, now that it is formed on the device (through the
    // host its build took 85 ms, what the saved iterations gained).
    if (sense) return PreconditionerKind::Circulant;
    // Single images: on a GPU (H100, paper-128; docs/GPU.md) the circulant reached plain CG's
    // 60-iteration PSNR with the anatomical prior in 25 iterations: the whole reconstruction in
    // 0.65-0.75x plain CG's time (27.7 against 42.8 ms fastest of 5); with finite differences it
    // needed 47 of 60 (lambda 0.2) or never got there (0.02), with Tikhonov 57, at 0.67 ms an
    // iteration against 0.57. On the CPU it did not pay for any prior (docs/SCALING.md).
    if (backend.kind == "cuda" && prior == RegularizerKind::AnatomicalFiniteDifference) return PreconditionerKind::Circulant;
    return PreconditionerKind::None;
}

LinearOperatorPtr ReconstructionSession::preconditioner(const SolveOptions& opts, bool with_penalty, double weight,
                                                        const Progress& progress, double exponent) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(opts.method);
    const std::string mkey = modelKey(m, opts.weighting);
    std::ostringstream key;
    key << mkey << " | " << (with_penalty ? toString(opts.regularizer) : "none") << " | " << (with_penalty ? weight : 0.0) << " | p "
        << exponent;
    if (preconditioner_.op && preconditioner_.key == key.str()) return preconditioner_.op;
    const std::shared_ptr<const Vector> data_eig = circulantData(m, progress, opts.weighting);
    const std::shared_ptr<const Vector> penalty = with_penalty ? circulantPenalty(opts) : nullptr;
    // M^{-3/4} by default, not M^{-1}: on the demo cases (docs/SCALING.md) the full inverse boosts the sparsely
    // sampled edge of k-space early and reaches plain CG's 60-iteration PSNR later (3D: 55-60 of 60
    // iterations); 3/4 needed 3-27 % fewer iterations than 1/2 for tikhonov and fd, as many for anatomical.
    // Formed and applied on the backend: an N-grid FFT pair per application.
    preconditioner_ = {key.str(), penalty ? inverseCirculant(*backend_, d.grid, *data_eig, {weight}, {penalty.get()}, exponent)
                                          : inverseCirculant(*backend_, d.grid, *data_eig, {}, {}, exponent)};
    return preconditioner_.op;
}

SolveResult ReconstructionSession::solve(const SolveOptions& opts, const IterationObserver& observer,
                                         const std::atomic<bool>* cancel, const ComplexArray* warm) {
    CallbackMonitor monitor(observer, cancel);
    return solve(opts, monitor, warm);
}

SolveResult ReconstructionSession::solve(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm) {
    if (cpu_fallback_) return cpu_fallback_->solve(opts, monitor, warm);
    try {
        return solveHere(opts, monitor, warm);
    } catch (const OutOfMemory& e) {
        const BackendInfo info = backend_->info();
        if (info.kind == "cpu") throw;
        // The solve's vectors, Q and W did not fit on the device: free what this session holds
        // there and solve on the CPU backend from now on, saying so once.
        std::fprintf(stderr, "reconstudio: the solve on %s: %s; falling back to the CPU backend\n", info.device.c_str(), e.what());
        {
            std::lock_guard<std::mutex> lock(mutex_);
            fhd_.clear();
            gridded_.clear();
            weighted_fhd_.clear();
            toeplitz_.clear();
            fourier_.clear();
            regularizer_.reset();
            preconditioner_ = {};
            circulant_data_.clear();  // eigenvalues on the device
            circulant_penalty_.clear();
            resident_ = {};
            sense_preconditioner_.reset();  // its vectors are on the device
            sparse_.reset();
        }
        cpu_fallback_ = std::make_unique<ReconstructionSession>(createCpuBackend(info.precision));
        cpu_fallback_->setDataset(data_);
        return cpu_fallback_->solve(opts, monitor, warm);
    }
}

void ReconstructionSession::recycle(NormalEquationsCg& cg, int kept_directions) {
    if (kept_directions < 0)
        cg.stopRecycling();
    else
        cg.keepDirections(std::size_t(kept_directions));
}

void ReconstructionSession::changePenaltyWeight(NormalEquationsCg& cg, const SolveOptions& opts, double weight,
                                                LinearOperatorPtr preconditioner) {
    recycle(cg, opts.kept_directions);  // before the change: it decides how the change starts
    cg.setWeightRecycling(1, weight, std::move(preconditioner));
}

RunOptions ReconstructionSession::runOptions(const SolveOptions& opts) {
    RunOptions run;
    run.iterations = opts.iterations;
    run.tolerance = opts.tolerance;
    run.snapshot_every = opts.snapshot_every;
    run.record_costs = opts.record_costs;
    run.exact_data_term = opts.exact_records;
    return run;
}

double ReconstructionSession::residentTolerance(const SolveOptions& opts, bool weight_changed, SolveResult& result) const {
    if (opts.tolerance > 0 || !weight_changed || !opts.lambda_change_to_cold_accuracy || !(resident_.cold_residual > 0))
        return opts.tolerance;
    result.cold_accuracy = resident_.cold_residual;
    return resident_.cold_residual;
}

SolveResult ReconstructionSession::solveHere(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm) {
    const Dataset& d = dataset();
    if (opts.iterations < 0) throw InputError("number of iterations must not be negative");
    if (!(opts.lambda >= 0) || !std::isfinite(opts.lambda)) throw InputError("lambda must be a finite number >= 0");
    const bool sense = d.coils > 1 && opts.coil_combination == CoilCombination::Sense;
    const bool sparse = isSparse(opts.regularizer) || !opts.priors.empty();
    const FourierMethod m = resolve(opts.method);
    bool building;  // the first solve of this method builds Q: the peak; later ones reuse what is held
    {
        std::lock_guard<std::mutex> lock(mutex_);
        building = toeplitz_.find(methodKey(m)) == toeplitz_.end();
    }
    if (building) requireMemory(true);
    if (sparse) return solveSparse(opts, monitor, warm);  // SENSE too: its E in F's place
    if (sense) return solveSense(opts, monitor, warm);

    SolveResult result;
    result.method = methodKey(m);
    result.lambda = opts.lambda;
    const bool weighted = opts.weighting == DataWeighting::Density;
    if (weighted) densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights));
    result.lambda_scale = lambdaScale(opts.weighting);
    const double penalty_weight = opts.lambda * result.lambda_scale;
    if (!std::isfinite(penalty_weight))
        throw InputError("lambda * s overflows: lambda = " + std::to_string(opts.lambda) + " is too large");

    LinearOperatorPtr fourier = fourierOperator(m, monitor.progress(Phase::ToeplitzKernel), opts.weighting);
    // The penalty term stays in a resident solve once it is there (weight 0 for lambda = 0).
    const std::string key = modelKey(m, opts.weighting) + " | " + toString(opts.regularizer);
    const bool continue_resident = opts.warm_start && d.coils == 1 && resident_.cg && resident_.key == key;
    const bool circulant = resolvePreconditioner(opts.preconditioner, backend_->info(), opts.regularizer) == PreconditionerKind::Circulant;
    LinearOperatorPtr reg = (opts.lambda > 0 || continue_resident) ? regularizerOperator(opts) : nullptr;

    auto makeSolver = [&](int c) {
        // Built in place (GCC 12's -Warray-bounds misreads a push_back after an initializer list here).
        std::vector<NormalTerm> terms;
        terms.reserve(2);
        terms.push_back({"data", 1.0, fourier});
        if (reg) terms.push_back({"penalty", penalty_weight, reg});
        // ||D^{1/2} d||^2 and (D^{1/2} F)^H D^{1/2} d = F^H (w d), the gridding start's adjoint.
        const std::vector<double>* w = weighted ? &densityWeights(weightingDensityMethod()) : nullptr;
        double dn = 0;
        for (std::size_t i = 0; i < d.samples(); ++i) dn += std::norm(d.coil(c)[i]) * (w ? (*w)[i] : 1.0);
        const Progress adjoint_progress = monitor.progress(Phase::AdjointData);
        auto cg = std::make_unique<NormalEquationsCg>(
            std::move(terms), weighted ? *weightedAdjoint(weighted_fhd_, c, m, w, adjoint_progress) : *adjointData(c, m, adjoint_progress), dn);
        cg->setData(dataSource(c, w));
        if (d.coils == 1 && d.hasTruth()) cg->setTruth(d.truth);
        if (circulant) cg->setPreconditioner(preconditioner(opts, reg != nullptr, penalty_weight, monitor.progress(Phase::ToeplitzKernel)));
        if (d.coils == 1) recycle(*cg, opts.kept_directions);
        return cg;
    };

    RunOptions run = runOptions(opts);
    std::vector<ComplexArray> coil_images;
    const auto t0 = Clock::now();
    for (int c = 0; c < d.coils; ++c) {
        std::unique_ptr<NormalEquationsCg> owned;
        NormalEquationsCg* cg = nullptr;
        RunOptions coil_run = run;
        if (c == 0 && continue_resident) {
            cg = resident_.cg.get();
            coil_run.tolerance = residentTolerance(opts, cg->terms() > 1 && cg->weight(1) != penalty_weight, result);
            // M^{-1} depends on lambda: rebuilt from the cached eigenvalues, set in the same restart.
            LinearOperatorPtr pm =
                circulant ? preconditioner(opts, cg->terms() > 1, penalty_weight, monitor.progress(Phase::ToeplitzKernel)) : nullptr;
            if (cg->terms() > 1) {
                changePenaltyWeight(*cg, opts, penalty_weight, std::move(pm));
            } else {
                recycle(*cg, opts.kept_directions);
                cg->setPreconditioner(std::move(pm));
            }
            result.warm_started = true;
        } else {
            owned = makeSolver(c);
            cg = owned.get();
            if (d.coils == 1 && warm && warm->size() == d.grid.voxels()) {
                cg->setInitial(*warm);
            } else if (opts.start == StartImage::Gridding) {
                densityWeights(monitor.progress(Phase::DensityWeights));
                cg->setInitialScaled(*densityWeightedAdjoint(c, m, monitor.progress(Phase::AdjointData)));
            }
        }
        RunResult r = runIterations(*cg, coil_run, monitor, c);
        result.history = std::move(r.history);
        coil_images.push_back(std::move(r.image));
        if (d.coils == 1) {
            const int before = continue_resident ? resident_.total_iterations : 0;
            if (owned) resident_ = {key, std::move(owned), 0, result.history.empty() ? 0.0 : result.history.back().residual};
            resident_.total_iterations = before + int(result.history.size());
            result.total_iterations = resident_.total_iterations;
        } else {
            result.total_iterations = int(result.history.size());
        }
        if (r.cancelled()) {
            result.cancelled = true;
            break;
        }
    }
    result.seconds = secondsSince(t0);
    if (coil_images.size() == 1) {
        result.image = std::move(coil_images[0]);
    } else if (!coil_images.empty()) {
        result.image = sumOfSquares(coil_images);
    }
    return result;
}

std::shared_ptr<const Vector> ReconstructionSession::dataOnBackend(int coil, const std::vector<double>* weights) const {
    const Dataset& d = dataset();
    const std::size_t samples = d.samples();
    const cdouble* first = coil < 0 ? d.kspace.data() : d.coil(coil);
    ComplexArray data(first, first + (coil < 0 ? d.kspace.size() : samples));
    if (weights)
        for (std::size_t i = 0; i < data.size(); ++i) data[i] *= std::sqrt((*weights)[i % samples]);
    return std::make_shared<const Vector>(backend_->fromHost(data));
}

DataSource ReconstructionSession::dataSource(int coil, const std::vector<double>* weights) const {
    return madeOnce([this, coil, weights] { return dataOnBackend(coil, weights); });
}

ComplexArray ReconstructionSession::forward(const ComplexArray& image, const FourierMethod& method) {
    const Dataset& d = dataset();
    if (image.size() != d.grid.voxels()) throw InputError("forward: image does not match the grid " + d.grid.describe());
    ComplexArray out;
    backend_->forwardSum(d.trajectory, image, SampleGrid::image(d.grid), out, resolve(method));
    const std::vector<double> phi = phiValues();
    for (std::size_t m = 0; m < out.size(); ++m) out[m] *= phi[m];
    return out;
}

std::string ReconstructionSession::cacheStatus() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> parts;
    for (const auto& [k, v] : toeplitz_) parts.push_back("Q (" + k + ")");
    for (const auto& [k, v] : fhd_) parts.push_back("F^H d (" + k + ")");
    if (resident_.cg) parts.push_back("solver (" + std::to_string(resident_.total_iterations) + " iterations since a cold start)");
    for (const auto& [k, v] : density_) parts.push_back("density weights (" + toString(k) + ")");
    if (coil_maps_) parts.push_back("coil maps (" + coil_maps_->source + ")");
    if (parts.empty()) return "nothing cached";
    std::string s = "cached: ";
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s;
}

ComplexArray sumOfSquares(const std::vector<ComplexArray>& coils) {
    if (coils.empty()) return {};
    ComplexArray out(coils[0].size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        double s = 0;
        for (const auto& c : coils) s += std::norm(c[i]);
        out[i] = std::sqrt(s);
    }
    return out;
}

}  // namespace recon
