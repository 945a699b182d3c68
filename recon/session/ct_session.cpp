#include "recon/session/ct_session.hpp"

#include <chrono>

#include "recon/ct/dd_projector.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

struct CtSession::Resident {
    ct::ProjectorOptions projector_options;
    bool weighted = false;
    RegularizerKind prior = RegularizerKind::FiniteDifference;
    std::unique_ptr<ct::IterativeSolve> solve;
};

CtSession::CtSession(std::shared_ptr<Backend> backend, std::shared_ptr<const ct::CtData> data)
    : backend_(std::move(backend)), data_(std::move(data)) {
    data_->validate(data_->name.empty() ? "CT data" : data_->name);
}

CtSession::~CtSession() = default;

CtResult CtSession::fdk(const ct::FdkOptions& options, Monitor& monitor) {
    const auto t0 = std::chrono::steady_clock::now();
    CtResult r;
    r.image = ct::fdk(data_->geometry, data_->projections, options, monitor.progress(Phase::Gridding));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.description = "FDK, " + toString(options.window) + " window" +
                    (ct::fullScan(data_->geometry.beam) ? "" : ", Parker weights (short scan)");
    return r;
}

CtResult CtSession::solve(const CtSolveOptions& options, Monitor& monitor) {
    const bool weighted = options.weighted && !data_->counts.empty();
    const Resident* last = resident_.get();
    const bool warm = options.warm_start && last && last->solve && last->weighted == weighted &&
                      last->prior == options.iterative.prior &&
                      last->projector_options.threads == options.projector.threads &&
                      last->projector_options.branchless == options.projector.branchless &&
                      last->projector_options.interpolation == options.projector.interpolation;
    const auto t0 = std::chrono::steady_clock::now();
    if (warm) {
        resident_->solve->setLambda(options.iterative.lambda);
    } else {
        resident_.reset();
        auto r = std::make_unique<Resident>();
        r->projector_options = options.projector;
        r->weighted = weighted;
        r->prior = options.iterative.prior;
        LinearOperatorPtr projector = backend_->ctProjector(data_->geometry, options.projector);
        const std::vector<double> none;
        const std::vector<double>& weights = weighted ? data_->counts : none;
        // s from the CPU DD's weights: the mean eigenvalue of AᵀWA (any backend's projector is that operator).
        const double trace = ct::DdProjector(data_->geometry, options.projector.threads).weightedTrace(weights);
        r->solve = std::make_unique<ct::IterativeSolve>(*backend_, projector, data_->geometry.volume, data_->projections,
                                                        weights, trace, options.iterative);
        if (data_->hasTruth()) r->solve->setTruth(data_->truth);
        resident_ = std::move(r);
    }
    RunOptions ro;
    ro.iterations = options.iterations;
    ro.tolerance = options.tolerance;
    ro.snapshot_every = options.snapshot_every;
    RunResult run = runIterations(resident_->solve->algorithm(), ro, monitor);
    CtResult result;
    result.image.resize(run.image.size());
    for (std::size_t i = 0; i < run.image.size(); ++i) result.image[i] = run.image[i].real();
    result.history = std::move(run.history);
    result.cancelled = run.cancelled();
    result.warm_started = warm;
    result.lambda_scale = resident_->solve->scale();
    result.description = resident_->solve->describe() + (weighted ? ", W = counts" : ", W = I");
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

}  // namespace recon
