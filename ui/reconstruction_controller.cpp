#include "ui/reconstruction_controller.hpp"
#include "recon/ct/iterative.hpp"
#include "recon/session/demo_cases.hpp"

namespace studio {

ReconstructionController::ReconstructionController(QObject* parent)
    : QObject(parent),
      latest_(std::make_shared<std::atomic<quint64>>(0)),
      shutdown_(std::make_shared<std::atomic<bool>>(false)),
      cancel_(std::make_shared<std::atomic<bool>>(false)),
      layers_(this) {
    qRegisterMetaType<DatasetReport>();
    qRegisterMetaType<BackendReport>();
    qRegisterMetaType<IterationUpdate>();
    qRegisterMetaType<JobOutcome>();
    qRegisterMetaType<ReconSettings>();
    qRegisterMetaType<std::vector<LayerUpdate>>();
    qRegisterMetaType<std::vector<IterationUpdate>>();
    qRegisterMetaType<Layer>();
    qRegisterMetaType<Modality>();
    qRegisterMetaType<recon::Quality>();
    qRegisterMetaType<std::shared_ptr<const std::vector<double>>>();

    worker_ = new SessionWorker(latest_, shutdown_);
    worker_->moveToThread(&thread_);
    thread_.setObjectName(QStringLiteral("reconstruction"));
    // Worker -> controller: queued, because the worker lives on thread_.
    connect(worker_, &SessionWorker::datasetLoaded, this, &ReconstructionController::onDatasetLoaded);
    connect(worker_, &SessionWorker::backendReady, this, &ReconstructionController::onBackendReady);
    connect(worker_, &SessionWorker::phaseChanged, this, &ReconstructionController::onPhase);
    connect(worker_, &SessionWorker::layersReady, this, &ReconstructionController::onLayers);
    connect(worker_, &SessionWorker::iterationsDone, this, &ReconstructionController::onIterations);
    connect(worker_, &SessionWorker::finished, this, &ReconstructionController::onFinished);
    // Like the data set itself, the floor belongs to the data, whatever the generation.
    connect(worker_, &SessionWorker::floorReady, &layers_, &ImageLayers::setFloor);
    connect(worker_, &SessionWorker::densityReady, this, [this](std::shared_ptr<const std::vector<double>> w) {
        if (!dataset_ || w->size() != dataset_->samples()) return;  // of data replaced since
        density_ = std::move(w);
        emit densityWeightsChanged();
    });
    connect(worker_, &SessionWorker::cacheStatusChanged, this, [this](const QString& status) {
        cache_status_ = status;
        emit cacheStatusChanged(status);
    });
    thread_.start();

    debounce_.setSingleShot(true);
    debounce_.setInterval(300);
    connect(&debounce_, &QTimer::timeout, this, &ReconstructionController::retune);
}

ReconstructionController::~ReconstructionController() {
    debounce_.stop();
    shutdown_->store(true);  // queued jobs return at once
    cancel_->store(true);    // the running one stops at its next check
    thread_.quit();
    thread_.wait();
    delete worker_;  // its thread has finished: no event can reach it any more
}

double ReconstructionController::lambdaScale() const {
    return densityWeighted() ? weighted_lambda_scale_ : summary_.lambda_scale;
}

void ReconstructionController::setState(JobState s) {
    if (s == state_) return;
    state_ = s;
    emit stateChanged(s);
}

void ReconstructionController::post(JobRequest job) {
    debounce_.stop();
    lambda_only_change_ = false;
    cancel_->store(true);  // supersede whatever runs; its reports will be dropped
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    job.generation = ++generation_;
    job.cancel = cancel_;
    job.settings = settings_;
    job.phase_hook = phase_hook_;
    latest_->store(job.generation);
    last_error_.clear();
    setState(JobState::Running);
    QMetaObject::invokeMethod(worker_, [worker = worker_, job] { worker->run(job); }, Qt::QueuedConnection);
}

void ReconstructionController::open(JobRequest::Source source, const QString& name,
                                    std::shared_ptr<const recon::Dataset> data, int frame) {
    JobRequest job;
    job.source = source;
    job.name = name;
    job.frame = frame;
    job.dataset = std::move(data);
    job.reconstruct = auto_reconstruct_;
    load_pending_ = true;
    post(std::move(job));
}

void ReconstructionController::openFile(const QString& path) { open(JobRequest::Source::File, path); }

void ReconstructionController::setFrame(int frame) {
    if (!dataset_ || summary_.frames <= 1 || frame == summary_.frame || frame < 0 || frame >= summary_.frames) return;
    open(JobRequest::Source::File, summary_.origin, {}, frame);
}

void ReconstructionController::openDemo(const QString& name, bool use_case_tuning) {
    // A demo case comes with the lambda and regulariser it was tuned for
    // (recon/session/demo_cases.cpp); an unknown name is reported by the load itself.
    if (use_case_tuning && recon::ct::isCtCase(name.toStdString())) {
        // A CT case is tuned for finite differences: its own λ, else the engine's measured default (as the CLI).
        ReconSettings s = settings_;
        s.regularizer = recon::RegularizerKind::FiniteDifference;
        const double tuned = recon::ct::ctDemoCase(name.toStdString()).fd_lambda;
        s.lambda = tuned > 0 ? tuned : recon::ct::defaultLambda(s.regularizer);
        if (!(s == settings_)) {
            settings_ = s;
            emit settingsChanged(s);
        }
    } else if (use_case_tuning) {
        try {
            const recon::CaseSpec spec = recon::demoCase(name.toStdString());
            ReconSettings s = settings_;
            s.lambda = spec.lambda;
            s.regularizer = recon::parseRegularizer(spec.regularizer);
            if (!(s == settings_)) {
                settings_ = s;
                emit settingsChanged(s);
            }
        } catch (const std::exception&) {
        }
    }
    open(JobRequest::Source::Demo, name);
}

void ReconstructionController::openDataset(std::shared_ptr<const recon::Dataset> data, const QString& origin) {
    open(JobRequest::Source::Dataset, origin, std::move(data));
}

void ReconstructionController::setSettings(const ReconSettings& s) {
    if (s == settings_) return;
    ReconSettings same_but_lambda = settings_;
    same_but_lambda.lambda = s.lambda;
    // A burst of lambda edits stays a tuning step; anything else makes the next solve start from zero.
    lambda_only_change_ = (debounce_.isActive() ? lambda_only_change_ : true) && same_but_lambda == s;
    settings_ = s;
    emit settingsChanged(s);
    if (dataset_ || load_pending_) debounce_.start();
}

void ReconstructionController::setLambda(double lambda) {
    ReconSettings s = settings_;
    s.lambda = lambda;
    setSettings(s);
}

void ReconstructionController::reconstruct() {
    JobRequest job;
    job.reconstruct = true;
    post(std::move(job));
}

void ReconstructionController::suggestLambda() {
    debounce_.stop();
    JobRequest job;
    job.reconstruct = true;
    job.suggest_lambda = true;
    post(std::move(job));
}

void ReconstructionController::retune() {
    JobRequest job;
    job.reconstruct = true;
    job.warm_start = lambda_only_change_;
    post(std::move(job));
}

void ReconstructionController::cancel() {
    debounce_.stop();
    if (!isActive(state_)) return;
    cancel_->store(true);
    setState(JobState::Cancelling);
}

void ReconstructionController::onDatasetLoaded(const DatasetReport& report) {
    // Applied whatever its generation: the worker now holds these data, and a
    // newer request queued behind the load works on them.
    load_pending_ = false;
    dataset_ = report.data;
    ct_ = report.ct;
    summary_ = report.summary;
    history_.clear();
    history_generation_ = 0;
    warm_start_ = false;
    total_iterations_ = 0;
    cold_start_cost_ = 0;
    weighted_lambda_scale_ = 0;
    density_ = report.data->density.empty() ? nullptr
                                            : std::make_shared<const std::vector<double>>(report.data->density);
    layers_.reset(report.data->grid, report.summary.modality);
    layers_.setAll(report.layers);
    const bool had_maps = coil_maps_ != nullptr;
    coil_maps_.reset();
    coil_preparation_.reset();
    emit historyReset();
    emit datasetChanged();
    if (had_maps) emit coilMapsChanged();
}

void ReconstructionController::onBackendReady(const BackendReport& report) {
    backend_ = report;
    emit backendChanged();
}

void ReconstructionController::onPhase(quint64 generation, const QString& phase, double fraction) {
    if (generation != generation_) return;
    phase_ = phase;
    emit phaseChanged(phase, fraction);
}

void ReconstructionController::onLayers(quint64 generation, const std::vector<LayerUpdate>& layers) {
    if (generation != generation_) return;
    layers_.setAll(layers);
    for (const LayerUpdate& u : layers)
        if (!isDifference(u.layer)) emit griddingFinished(u.layer);
}

void ReconstructionController::onIterations(const std::vector<IterationUpdate>& updates) {
    for (const IterationUpdate& update : updates) {
        if (update.generation != generation_) return;  // a batch is of one job
        if (history_generation_ != update.generation) {
            history_generation_ = update.generation;
            history_.clear();
            // Observers of historyReset ask how this solve starts.
            warm_start_ = update.start_iteration > 0;
            total_iterations_ = update.start_iteration;
            if (!warm_start_) cold_start_cost_ = update.record.cost();
            emit historyReset();
        }
        // Multi-coil data run one solve per coil; the history is the current coil's.
        if (!history_.empty() && update.record.iteration <= history_.back().iteration) history_.clear();
        history_.push_back(update.record);
        warm_start_ = update.start_iteration > 0;
        total_iterations_ = update.start_iteration + update.record.iteration;
        layers_.setAll(update.layers);
        phase_ = update.coils > 1 ? QStringLiteral("CG, coil %1 of %2").arg(update.coil + 1).arg(update.coils)
                                  : QStringLiteral("CG");
        emit iterationAdvanced(update);
    }
    if (updates.empty() || updates.back().generation != generation_) return;
    const IterationUpdate& last = updates.back();
    const int total = last.iterations * last.coils;
    const int done = last.coil * last.iterations + last.record.iteration;
    double eta = -1;  // unknown until the first iteration has taken time
    if (last.record.iteration > 0 && last.record.seconds > 0)
        eta = last.record.seconds / last.record.iteration * (total - done);
    emit progressChanged(done, total, eta);
}

void ReconstructionController::onFinished(const JobOutcome& outcome) {
    if (outcome.generation != generation_) return;  // superseded: a newer job is queued
    load_pending_ = false;
    if (outcome.state != JobState::Failed) {
        layers_.setAll(outcome.layers);
        // CT's s = trace(AᵀWA)/voxels is known once the first solve built the projector.
        if (ct_ && outcome.solved && outcome.lambda_scale > 0) summary_.lambda_scale = outcome.lambda_scale;
        // The weighted data term's s depends on the trajectory and its density weights only, like Q(0).
        if (!ct_ && outcome.solved && outcome.weighting == recon::DataWeighting::Density && outcome.lambda_scale > 0)
            weighted_lambda_scale_ = outcome.lambda_scale;
        if (outcome.coil_preparation) coil_preparation_ = outcome.coil_preparation;
        if (outcome.coil_maps && outcome.coil_maps != coil_maps_) {
            coil_maps_ = outcome.coil_maps;
            emit coilMapsChanged();
        }
        if (outcome.solved) {
            warm_start_ = outcome.start_iteration > 0;
            total_iterations_ = outcome.start_iteration + outcome.iterations_done;
        }
        if (!outcome.lambda_rule.isEmpty()) {
            // The chosen lambda becomes the setting (no new solve: this one used it).
            settings_.lambda = suggested_lambda_ = outcome.lambda;
            lambda_rule_ = outcome.lambda_rule;
            emit settingsChanged(settings_);
            emit lambdaSuggested(outcome.lambda, outcome.lambda_rule);
        }
    } else {
        last_error_ = outcome.message;
        emit failed(outcome.message);
    }
    phase_.clear();
    setState(outcome.state);
    emit jobFinished(outcome);
}

}  // namespace studio
