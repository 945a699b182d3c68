#include "recon/session/ct_session.hpp"

#include <chrono>
#include <numeric>

#include "recon/ct/dd_projector.hpp"
#include "recon/solvers/runner.hpp"

namespace recon {

const char* toString(CtSolver s) {
    switch (s) {
        case CtSolver::Auto: return "auto";
        case CtSolver::Cg: return "cg";
        case CtSolver::OsSart: return "os-sart";
    }
    return "?";
}

CtSolver parseCtSolver(const std::string& s) {
    if (s == "auto") return CtSolver::Auto;
    if (s == "cg") return CtSolver::Cg;
    if (s == "os-sart") return CtSolver::OsSart;
    throw InputError("unknown CT solver '" + s + "' (auto, cg, os-sart)");
}

CtSolver chooseCtSolver(CtSolver requested, const ct::CtData& data) {
    if (requested != CtSolver::Auto) return requested;
    return data.counts.empty() ? CtSolver::OsSart : CtSolver::Cg;
}

int defaultIterations(CtSolver solver) { return solver == CtSolver::OsSart ? 20 : 100; }

struct CtSession::Resident {
    CtSolver solver = CtSolver::Cg;
    ct::ProjectorOptions projector_options;
    bool weighted = false;
    RegularizerKind prior = RegularizerKind::FiniteDifference;
    ct::OsSartCtOptions os_sart;
    std::unique_ptr<ct::IterativeSolve> solve;  // CG / ADMM
    std::unique_ptr<OsSart> sart;               // OS-SART
    bool started_from_fdk = false;

    IterativeAlgorithm& algorithm() { return sart ? static_cast<IterativeAlgorithm&>(*sart) : solve->algorithm(); }
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

CtResult CtSession::solve(const CtSolveOptions& requested, Monitor& monitor) {
    CtSolveOptions options = requested;
    options.solver = chooseCtSolver(requested.solver, *data_);
    const bool weighted = options.weighted && !data_->counts.empty();
    const Resident* last = resident_.get();
    const bool same_setup = last && last->solver == options.solver && last->weighted == weighted &&
                            last->projector_options.threads == options.projector.threads &&
                            last->projector_options.branchless == options.projector.branchless &&
                            last->projector_options.interpolation == options.projector.interpolation;
    const bool warm =
        options.warm_start && same_setup &&
        (options.solver == CtSolver::Cg
             ? last->solve && last->prior == options.iterative.prior
             : last->sart && last->os_sart.subsets == options.os_sart.subsets &&
                   last->os_sart.sart.relaxation == options.os_sart.sart.relaxation &&
                   last->os_sart.sart.nonnegative == options.os_sart.sart.nonnegative);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> none;
    const std::vector<double>& weights = weighted ? data_->counts : none;
    ct::IterativeOptions iterative = options.iterative;
    if (!data_->counts.empty())  // the noise level for an automatic λ, whether or not the fit is weighted
        iterative.mean_count = std::accumulate(data_->counts.begin(), data_->counts.end(), 0.0) / double(data_->counts.size());
    if (warm) {
        if (resident_->solve)
            resident_->solve->setLambda(iterative.auto_lambda ? ct::autoLambda(iterative.prior, resident_->solve->scale(),
                                                                               iterative.mean_count)
                                                              : iterative.lambda);
    } else {
        resident_.reset();
        auto r = std::make_unique<Resident>();
        r->solver = options.solver;
        r->projector_options = options.projector;
        r->weighted = weighted;
        r->prior = options.iterative.prior;
        r->os_sart = options.os_sart;
        if (options.solver == CtSolver::OsSart) {
            Backend& backend = *backend_;
            const ct::ProjectorOptions projector_options = options.projector;
            r->sart = ct::makeOsSart(
                [&backend, projector_options](const ct::CtGeometry& g) { return backend.ctProjector(g, projector_options); },
                data_->geometry, data_->projections, weights, options.os_sart);
            if (data_->hasTruth()) r->sart->setTruth(ComplexArray(data_->truth.begin(), data_->truth.end()));
        } else {
            LinearOperatorPtr projector = backend_->ctProjector(data_->geometry, options.projector);
            // s from the CPU DD's weights: the mean eigenvalue of AᵀWA (any backend's projector is that operator).
            const double trace = ct::DdProjector(data_->geometry, options.projector.threads).weightedTrace(weights);
            r->solve = std::make_unique<ct::IterativeSolve>(*backend_, projector, data_->geometry.volume,
                                                            data_->projections, weights, trace, iterative);
            if (data_->hasTruth()) r->solve->setTruth(data_->truth);
            if (options.tv_starts_from_fdk && iterative.prior == RegularizerKind::TotalVariation) {
                r->solve->setInitial(ct::fdk(data_->geometry, data_->projections, {}, monitor.progress(Phase::Gridding)));
                r->started_from_fdk = true;
            }
        }
        resident_ = std::move(r);
    }
    RunOptions ro;
    ro.iterations = options.iterations;
    ro.tolerance = options.tolerance;
    ro.snapshot_every = options.snapshot_every;
    RunResult run = runIterations(resident_->algorithm(), ro, monitor);
    CtResult result;
    result.image.resize(run.image.size());
    for (std::size_t i = 0; i < run.image.size(); ++i) result.image[i] = run.image[i].real();
    result.history = std::move(run.history);
    result.cancelled = run.cancelled();
    result.warm_started = warm;
    result.lambda_scale = resident_->solve ? resident_->solve->scale() : 0.0;
    result.lambda = resident_->solve ? resident_->solve->lambda() : 0.0;
    result.description = (resident_->solve ? resident_->solve->describe() : ct::describe(resident_->os_sart)) +
                         (resident_->solve && resident_->started_from_fdk ? ", from FDK" : "") +
                         (weighted ? ", W = counts" : ", W = I");
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

}  // namespace recon
