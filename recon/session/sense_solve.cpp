// The session's SENSE solve (Pruessmann et al. 2001, CG-SENSE): one normal-equations
// CG over all coils, E^H E applied with the one Toeplitz kernel of the trajectory,
// every quadratic prior on top exactly as for one coil. Kept apart from
// reconstruction.cpp so the single-coil path stays as it was. Density-weighted (SolveOptions::weighting):
// the same with the weighted single-coil pieces (D^{1/2} F, its kernel T_D, F^H D d, s_D = Q_D(0)).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "recon/core/errors.hpp"
#include "recon/core/host_memory.hpp"
#include "recon/sense/espirit.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon {
namespace {

std::string methodName(const FourierMethod& m) {
    return m.name == "nufft" ? m.name + " " + std::to_string(m.tolerance) : m.name;
}

}  // namespace

std::string toString(CoilCombination c) { return c == CoilCombination::Sense ? "sense" : "sos"; }

CoilCombination parseCoilCombination(const std::string& name) {
    if (name == "sense") return CoilCombination::Sense;
    if (name == "sos" || name == "sum-of-squares") return CoilCombination::SumOfSquares;
    throw InputError("unknown coil combination '" + name + "' (available: sense, sos)");
}

const CoilMaps& ReconstructionSession::coilMaps(CoilMapMethod method, const Progress& progress) {
    const Dataset& d = dataset();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (coil_maps_ && (!coil_maps_method_ || *coil_maps_method_ == method)) return *coil_maps_;
    }
    requireMemory(false);  // each coil is gridded
    CoilMaps maps = method == CoilMapMethod::Espirit ? estimateCoilMapsEspirit(*backend_, d, {}, progress)
                    : method == CoilMapMethod::Walsh ? estimateCoilMapsWalsh(*backend_, d, {}, progress)
                                                     : estimateCoilMapsLowResolution(*backend_, d, densityWeights(progress), {}, progress);
    std::lock_guard<std::mutex> lock(mutex_);
    coil_maps_ = std::make_shared<const CoilMaps>(std::move(maps));
    coil_maps_method_ = method;
    return *coil_maps_;
}

void ReconstructionSession::setCoilMaps(CoilMaps maps) {
    const Dataset& d = dataset();
    if (maps.coils != d.coils || maps.maps.size() != std::size_t(d.coils) * d.grid.voxels())
        throw InputError("coil maps (" + maps.source + "): " + std::to_string(maps.coils) + " coils of " +
                         std::to_string(maps.coils > 0 ? maps.maps.size() / std::size_t(maps.coils) : 0) +
                         " voxels, but the data set has " + std::to_string(d.coils) + " coils on grid " +
                         d.grid.describe());
    std::lock_guard<std::mutex> lock(mutex_);
    coil_maps_ = std::make_shared<const CoilMaps>(std::move(maps));
    coil_maps_method_.reset();
    resident_ = {};
}

void ReconstructionSession::setSenseDevices(std::vector<SplitDevice> devices) {
    for (const SplitDevice& d : devices)
        if (!d.backend) throw InputError("SENSE devices: " + d.name + " has no backend");
    std::lock_guard<std::mutex> lock(mutex_);
    sense_devices_ = std::move(devices);
    resident_ = {};
}

LinearOperatorPtr ReconstructionSession::sensePreconditioner(const SolveOptions& opts, bool with_penalty, double weight,
                                                             const Progress& progress) {
    if (!sense_preconditioner_) return nullptr;
    const FourierMethod m = resolve(opts.method);
    LinearOperatorPtr circulant = preconditioner(opts, with_penalty, weight, progress, kSenseCirculantExponent);
    const std::shared_ptr<const Vector> data = circulantData(m, progress, opts.weighting);
    const std::shared_ptr<const Vector> penalty = with_penalty ? circulantPenalty(opts) : nullptr;
    return sense_preconditioner_->make(std::move(circulant), *data, penalty.get(), with_penalty ? weight : 0.0, kSenseCirculantExponent);
}

std::string ReconstructionSession::senseMapsKey(const SolveOptions& opts) const {
    // The maps in use are part of the key: other maps make another system.
    return (coil_maps_ && !coil_maps_method_ ? "given " + coil_maps_->source : toString(opts.coil_maps)) + " | devices " +
           std::to_string(sense_devices_.size());
}

ReconstructionSession::SenseSystem ReconstructionSession::senseSystem(const SolveOptions& opts, Monitor& monitor) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(opts.method);
    SenseSystem system;
    system.key = senseMapsKey(opts);
    const CoilMaps& maps = coilMaps(opts.coil_maps, monitor.progress(Phase::AdjointData));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        system.maps = coil_maps_;
    }
    // Density-weighted: D^{1/2} F per coil, its normal the ONE kernel T_D of F^H D F (the single-coil pieces).
    const DataWeighting weighting = opts.weighting;
    const std::vector<double>* weights =
        weighting == DataWeighting::Density ? &densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights)) : nullptr;
    LinearOperatorPtr fourier = fourierOperator(m, monitor.progress(Phase::ToeplitzKernel), weighting);
    if (sense_devices_.empty()) {
        system.encoding = system.one_device = std::make_shared<const SenseOperator>(fourier, maps.maps, toeplitz(m, {}, weighting));
    } else {
        // Each other device gets its own copy of the one Toeplitz kernel (device to device on GPUs).
        const std::shared_ptr<const ToeplitzOperator> kernel = toeplitz(m, {}, weighting);
        const std::vector<double> phi = modelPhi(weighting);
        system.encoding = splitSense(*backend_, sense_devices_, maps.maps, d.grid.voxels(), [&](Backend& b) {
            if (&b == backend_.get()) return fourier;
            return recon::fourierOperator(b, d.trajectory, d.grid, phi, m, b.toeplitzCopy(*kernel));
        });
    }
    // ||D^{1/2} d||^2 (weights 1: ||d||^2) over all coils.
    const std::size_t samples = d.samples();
    double data_norm2 = 0;
    const std::int64_t values = std::int64_t(d.kspace.size());
#pragma omp parallel for reduction(+ : data_norm2) schedule(static) if (values > 65536)
    for (std::int64_t i = 0; i < values; ++i)
        data_norm2 += std::norm(d.kspace[std::size_t(i)]) * (weights ? (*weights)[std::size_t(i) % samples] : 1.0);
    system.data_norm2 = data_norm2;
    system.data = dataSource(-1, weights);
    if (const auto split = std::dynamic_pointer_cast<const DistributedStack>(system.encoding)) {
        // E^H d with each coil's F^H d on the device that owns the coil; weighted E_D^H (D^{1/2} d) = sum_c S_c^H F^H D d_c.
        const Progress progress = monitor.progress(Phase::AdjointData);
        progress.update(0.0);
        system.rhs = backend_->make(d.grid.voxels());
        if (weights) {
            ComplexArray weighted_data;
            resizeForOverwrite(weighted_data, d.kspace.size());
#pragma omp parallel for schedule(static) if (values > 65536)
            for (std::int64_t i = 0; i < values; ++i)
                weighted_data[std::size_t(i)] = std::sqrt((*weights)[std::size_t(i) % samples]) * d.kspace[std::size_t(i)];
            split->adjointFromHost(weighted_data, system.rhs);
        } else {
            split->adjointFromHost({d.coil(0), split->outSize()}, system.rhs);
        }
        progress.update(1.0);
    } else {
        const std::vector<std::shared_ptr<const Vector>> coil_adjoints = coilAdjoints(m, monitor.progress(Phase::AdjointData), weighting);
        std::vector<const Vector*> coil_ptrs;
        for (const auto& v : coil_adjoints) coil_ptrs.push_back(v.get());
        // A split over one device is a plain SenseOperator of its own, not one_device: the maps from the host.
        system.rhs = system.one_device ? system.one_device->adjointFromCoilImages(coil_ptrs)
                                       : senseAdjointFromCoilImages(*backend_, coil_ptrs, maps.maps);
    }
    return system;
}

double ReconstructionSession::senseLambdaScale(const CoilMaps& maps, DataWeighting weighting) {
    const std::size_t voxels = dataset().grid.voxels();
    if (maps.coils < 1 || maps.maps.size() != std::size_t(maps.coils) * voxels)
        throw InputError("SENSE: the coil maps (" + maps.source + ") do not match the grid " + dataset().grid.describe());
    std::vector<double> g(voxels, 0.0);
    double largest = 0;
    for (std::size_t v = 0; v < voxels; ++v) {
        for (int c = 0; c < maps.coils; ++c) g[v] += std::norm(maps.maps[std::size_t(c) * voxels + v]);
        largest = std::max(largest, g[v]);
    }
    double sum = 0;
    std::size_t inside = 0;
    for (double e : g)
        if (e > SensePreconditioner::kInside * largest) {
            sum += e;
            ++inside;
        }
    if (inside == 0) throw InputError("SENSE: the coil maps (" + maps.source + ") are zero everywhere");
    return lambdaScale(weighting) * sum / double(inside);
}

void setSenseImage(SolveResult& result, ComplexArray complex_image) {
    result.complex_image = std::move(complex_image);
    // The magnitude: sqrt of the norm (std::abs's overflow-safe hypot costs 40 ms at 128^3), in parallel.
    resizeForOverwrite(result.image, result.complex_image.size());
    const std::int64_t voxels = std::int64_t(result.image.size());
#pragma omp parallel for schedule(static) if (voxels > 65536)
    for (std::int64_t i = 0; i < voxels; ++i) result.image[std::size_t(i)] = std::sqrt(std::norm(result.complex_image[std::size_t(i)]));
}

SolveResult ReconstructionSession::solveSense(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm) {
    const Dataset& d = dataset();
    const FourierMethod m = resolve(opts.method);
    SolveResult result;
    result.method = "sense " + methodName(m);
    result.coil_combination = "sense";
    result.lambda = opts.lambda;
    if (opts.weighting == DataWeighting::Density) densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights));
    result.lambda_scale = lambdaScale(opts.weighting);
    const double penalty_weight = opts.lambda * result.lambda_scale;
    if (!std::isfinite(penalty_weight))
        throw InputError("lambda * s overflows: lambda = " + std::to_string(opts.lambda) + " is too large");

    // The penalty term is built when lambda > 0 and then stays (a lambda change sets its weight).
    const bool with_penalty = opts.lambda > 0;
    const PreconditionerKind pk = resolvePreconditioner(opts.preconditioner, backend_->info(), opts.regularizer, true);
    const std::string key = "sense | " + result.method + " | " + toString(opts.weighting) + " | " + toString(opts.regularizer) + " | " + senseMapsKey(opts) +
                            (with_penalty ? " | penalty" : "") + " | preconditioner " + toString(pk);
    const bool continue_resident = opts.warm_start && resident_.cg && resident_.key == key;
    if (!continue_resident) {
        SenseSystem system = senseSystem(opts, monitor);
        const LinearOperatorPtr& encoding = system.encoding;
        const std::shared_ptr<const SenseOperator>& one_device = system.one_device;
        const CoilMaps& maps = *system.maps;
        const Vector& rhs = system.rhs;
        const double data_norm2 = system.data_norm2;
        std::vector<NormalTerm> terms{{"data", 1.0, encoding}};
        if (with_penalty) terms.push_back({"penalty", penalty_weight, regularizerOperator(opts)});
        auto cg = std::make_unique<NormalEquationsCg>(std::move(terms), rhs, data_norm2);
        cg->setData(system.data);
        sense_preconditioner_.reset();
        if (pk == PreconditionerKind::Circulant) {
            // The maps' energy from the maps the operator holds (on a split operator, from the host's).
            Vector energy = one_device ? coilEnergy(*backend_, one_device->maps()) : coilEnergy(*backend_, maps.maps, d.grid.voxels());
            sense_preconditioner_ = std::make_shared<const SensePreconditioner>(*backend_, std::move(energy));
            cg->setPreconditioner(sensePreconditioner(opts, with_penalty, penalty_weight, monitor.progress(Phase::ToeplitzKernel)));
        }
        if (warm && warm->size() == d.grid.voxels()) cg->setInitial(*warm);
        recycle(*cg, opts.kept_directions);
        resident_ = {key, std::move(cg), 0, 0.0};
        sense_split_ = std::dynamic_pointer_cast<DistributedStack>(std::const_pointer_cast<LinearOperator>(encoding));
    }
    RunOptions run = runOptions(opts);
    if (continue_resident) {
        run.tolerance = residentTolerance(opts, resident_.cg->terms() > 1 && resident_.cg->weight(1) != penalty_weight, result);
        // M^{-1} depends on the weight: rebuilt from the cached eigenvalues, set in the same restart.
        if (resident_.cg->terms() > 1)
            changePenaltyWeight(*resident_.cg, opts, penalty_weight,
                                sensePreconditioner(opts, true, penalty_weight, monitor.progress(Phase::ToeplitzKernel)));
        result.warm_started = true;
    }
    if (sense_split_) sense_split_->resetStats();
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r = runIterations(*resident_.cg, run, monitor, 0);
    if (sense_split_) {
        const DistributedStats st = sense_split_->stats();
        result.devices = int(sense_split_->parts());
        result.communication_seconds = st.applications > 0 ? st.communication_seconds / double(st.applications) : 0;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.history = std::move(r.history);
    result.cancelled = r.cancelled();
    if (!continue_resident) resident_.cold_residual = result.history.empty() ? 0.0 : result.history.back().residual;
    resident_.total_iterations += int(result.history.size());
    result.total_iterations = resident_.total_iterations;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        result.coil_maps = coil_maps_;  // what the resident solve was built with (its key names them)
    }
    setSenseImage(result, std::move(r.image));
    return result;
}

}  // namespace recon
