#include "ui/session_worker.hpp"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/ct/ct_file.hpp"
#include "recon/ct/iterative.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/session/demo_cases.hpp"

namespace studio {

namespace {

DatasetSummary summarize(const recon::Dataset& d, const QString& origin) {
    DatasetSummary s;
    s.name = QString::fromStdString(d.name);
    s.source = QString::fromStdString(d.source);
    s.origin = origin;
    s.grid = d.grid;
    s.trajectory_kind = QString::fromStdString(d.trajectory.kind);
    s.samples = qint64(d.samples());
    s.readouts = qint64(d.trajectory.readouts());
    s.readout_length = d.trajectory.readout_length;
    s.coils = d.coils;
    s.noise_samples = d.coils > 0 ? qint64(d.noise.size() / std::size_t(d.coils)) : 0;
    s.has_truth = d.hasTruth();
    s.has_reference = d.hasReference();
    s.has_density = !d.density.empty();
    s.basis = QString::fromStdString(recon::toString(d.basis));
    s.lambda_scale = recon::regularizationScale(d.basis, d.grid, d.trajectory);
    s.bytes_single = qint64(recon::estimateReconstructionBytes(d.grid, d.samples(), recon::Precision::Single));
    s.bytes_double = qint64(recon::estimateReconstructionBytes(d.grid, d.samples(), recon::Precision::Double));
    if (d.hasTruth()) s.truth_max = recon::truthStats(d.truth).max_abs;
    return s;
}

DatasetSummary summarizeCt(const recon::ct::CtData& d, const recon::Dataset& image_side, const QString& origin) {
    DatasetSummary s;
    s.modality = Modality::Ct;
    s.name = QString::fromStdString(d.name);
    s.source = QString::fromStdString(d.source);
    s.origin = origin;
    s.grid = image_side.grid;
    s.trajectory_kind = d.geometry.beam.fanBeam() ? QStringLiteral("fan beam") : QStringLiteral("cone beam");
    s.samples = qint64(d.projections.size());
    s.readouts = qint64(d.geometry.beam.views());
    s.readout_length = d.geometry.beam.detector_columns * d.geometry.beam.detector_rows;
    s.has_truth = d.hasTruth();
    s.basis = QStringLiteral("DD");
    s.ct_geometry = d.geometry;
    s.ct_photons = d.photons;
    if (d.hasTruth()) s.truth_max = recon::truthStats(image_side.truth).max_abs;
    return s;
}

// The image side of a CT scan, as the views, exports and metrics see any data set.
std::shared_ptr<const recon::Dataset> imageSideOf(const recon::ct::CtData& d) {
    auto out = std::make_shared<recon::Dataset>();
    out->name = d.name;
    out->source = d.source;
    out->grid = recon::ct::gridOf(d.geometry.volume);
    out->trajectory.dims = out->grid.dims;
    out->trajectory.kind = d.geometry.beam.fanBeam() ? "ct-fan-beam" : "ct-cone-beam";
    out->truth.assign(d.truth.begin(), d.truth.end());
    return out;
}

// Images larger than this are sent to the views every few iterations only.
constexpr std::size_t kLiveSnapshotVoxels = 64 * 64 * 64;
// Live images and batches of records at most this often: about what a person can follow.
constexpr qint64 kPostIntervalMs = 40;

}  // namespace

SessionWorker::SessionWorker(std::shared_ptr<const std::atomic<quint64>> latest,
                             std::shared_ptr<const std::atomic<bool>> shutdown)
    : latest_(std::move(latest)), shutdown_(std::move(shutdown)) {}

SessionWorker::~SessionWorker() = default;

void SessionWorker::run(const JobRequest& job) {
    if (shutdown_->load()) return;
    // A request superseded before it started does nothing, unless it brings new
    // data: the newer requests queued behind it expect that data to be loaded.
    const bool stale = job.generation != latest_->load();
    if (stale && job.source == JobRequest::Source::None) return;

    JobOutcome outcome;
    outcome.generation = job.generation;
    current_phase_.clear();
    try {
        ensureBackend(job.settings);
        if (job.source != JobRequest::Source::None) load(job);
        if (job.reconstruct && !stale) {
            if (!data_) throw recon::InputError("No data set is open: open a file or a demo case first.");
            if (ct_data_) {
                ctFdk(job);
                ctSolve(job, outcome);
            } else {
                prepareCoils(job.settings);
                outcome.coil_preparation = coil_preparation_;
                gridAll(job);
                solve(job, outcome);
            }
        }
    } catch (const recon::Cancelled&) {
        outcome.state = JobState::Cancelled;
    } catch (const std::exception& e) {
        outcome.state = JobState::Failed;
        outcome.message = QString::fromStdString(e.what());
    }
    flushIterations();  // records of a solve that threw still precede its end
    if (session_ && !ct_data_) emit cacheStatusChanged(QString::fromStdString(session_->cacheStatus()));
    emit finished(outcome);
}

void SessionWorker::ensureBackend(const ReconSettings& s) {
    if (backend_ && s.backend == backend_choice_ && s.precision == backend_precision_) return;
    std::string note;
    std::shared_ptr<recon::Backend> backend = recon::createBackend(s.backend, s.precision, &note);
    if (!backend) throw recon::Error("No backend could be created: " + note);
    backend_ = std::move(backend);
    backend_choice_ = s.backend;
    backend_precision_ = s.precision;
    // A new backend starts with empty caches (Q and F^H d live on it).
    session_ = std::make_unique<recon::ReconstructionSession>(backend_);
    if (data_ && !ct_data_) session_->setDataset(data_);
    session_virtual_coils_ = 0;
    ct_session_ = ct_data_ ? std::make_unique<recon::CtSession>(backend_, ct_data_) : nullptr;
    gridded_ = false;

    BackendReport report;
    const recon::BackendInfo info = backend_->info();
    report.description = QString::fromStdString(info.describe());
    report.kind = QString::fromStdString(info.kind);
    report.note = QString::fromStdString(note);
    const std::string default_method = backend_->defaultMethod();
    report.methods << QString::fromStdString(default_method);
    for (const recon::MethodInfo& m : backend_->methods()) {
        if (m.name == default_method) {
            report.method_descriptions.prepend(QString::fromStdString(m.description));
        } else {
            report.methods << QString::fromStdString(m.name);
            report.method_descriptions << QString::fromStdString(m.description);
        }
    }
    while (report.method_descriptions.size() < report.methods.size()) report.method_descriptions << QString();
    emit backendReady(report);
}

void SessionWorker::load(const JobRequest& job) {
    if (std::shared_ptr<const recon::ct::CtData> ct = loadCt(job)) {
        ct_data_ = ct;
        data_ = imageSideOf(*ct);
        demo_.reset();
        ct_session_ = std::make_unique<recon::CtSession>(backend_, ct_data_);
        gridded_ = false;
        last_iterate_.clear();
        last_iterate_iterations_ = 0;
        DatasetReport report;
        report.data = data_;
        report.ct = ct_data_;
        report.summary = summarizeCt(*ct_data_, *data_, job.name);
        if (data_->hasTruth())
            report.layers.push_back({Layer::Truth, {Volume::make(data_->grid, data_->truth), std::nullopt}});
        emit datasetLoaded(report);
        emit cacheStatusChanged(tr("CT: projector and s are built at the first iterative solve"));
        return;
    }
    std::shared_ptr<const recon::Dataset> data;
    std::optional<recon::CaseSpec> demo;
    DatasetSummary frames;  // only its frame fields
    switch (job.source) {
        case JobRequest::Source::File: {
            beginPhase(job, QStringLiteral("Reading %1").arg(job.name));
            recon::InputSpec spec;
            spec.input = job.name.toStdString();
            spec.frame = job.frame;
            recon::Frames read = recon::readFrames(spec);
            frames.frames = read.total;
            frames.frame = read.frames.front().number;
            frames.frame_name = QString::fromStdString(read.frames.front().name);
            frames.frame_counts = QString::fromStdString(read.counts.describe());
            data = std::move(read.frames.front().data);
            break;
        }
        case JobRequest::Source::Demo:
            beginPhase(job, QStringLiteral("Simulating demo case %1").arg(job.name));
            demo = recon::demoCase(job.name.toStdString());
            data = recon::simulate(*demo);
            break;
        case JobRequest::Source::Dataset:
            beginPhase(job, QStringLiteral("Checking data set"));
            job.dataset->validate(job.name.toStdString());
            data = job.dataset;
            break;
        case JobRequest::Source::None: return;
    }
    data_ = data;
    demo_ = demo;
    ct_data_.reset();
    ct_session_.reset();
    session_->setDataset(data_);
    session_virtual_coils_ = 0;
    coil_preparation_ = {};
    coil_preparation_.coils = data_->coils;
    coil_preparation_.noise_samples = data_->coils > 0 ? data_->noise.size() / std::size_t(data_->coils) : 0;  // the session whitens
    gridded_ = false;
    last_iterate_.clear();
    last_iterate_iterations_ = 0;

    DatasetReport report;
    report.data = data_;
    report.summary = summarize(*data_, job.name);
    report.summary.frames = frames.frames;
    report.summary.frame = frames.frame;
    report.summary.frame_name = frames.frame_name;
    report.summary.frame_counts = frames.frame_counts;
    if (data_->hasTruth())
        report.layers.push_back({Layer::Truth, {Volume::make(data_->grid, data_->truth), std::nullopt}});
    emit datasetLoaded(report);
    emit cacheStatusChanged(QString::fromStdString(session_->cacheStatus()));
}

void SessionWorker::beginPhase(const JobRequest& job, const QString& phase) {
    current_phase_ = phase;
    last_fraction_ = 0;
    emit phaseChanged(job.generation, phase, 0.0);
    if (job.phase_hook) job.phase_hook(phase);
}

void SessionWorker::notePhase(const JobRequest& job, const QString& phase, double fraction) {
    if (phase != current_phase_) beginPhase(job, phase);
    // At most about a hundred updates per phase reach the event queue.
    if (fraction - last_fraction_ < 0.01 && fraction < 1.0) return;
    last_fraction_ = fraction;
    emit phaseChanged(job.generation, phase, fraction);
}

recon::Progress SessionWorker::progressFor(const JobRequest& job, const QString& phase) {
    beginPhase(job, phase);
    recon::Progress p;
    p.cancel = job.cancel.get();
    p.report = [this, &job, phase](double fraction) { notePhase(job, phase, fraction); };
    return p;
}

std::vector<LayerUpdate> SessionWorker::imageLayers(Layer layer, recon::ComplexArray image, bool rescale,
                                                    const recon::Quality* known) const {
    std::vector<LayerUpdate> out;
    std::optional<recon::Quality> quality;
    if (data_->hasTruth() && image.size() == data_->truth.size()) {
        // Gridded images are shown and measured after the least-squares optimal
        // scalar (docs/CONVENTIONS.md), so the difference map shows structure, not scale.
        if (rescale) {
            const recon::cdouble a = recon::optimalScale(image, data_->truth);
            for (auto& v : image) v *= a;
        }
        quality = known ? *known : recon::measureQuality(image, data_->truth, false);
        recon::ComplexArray difference(image.size());
        for (std::size_t i = 0; i < image.size(); ++i) difference[i] = image[i] - data_->truth[i];
        out.push_back({*differenceOf(layer), {Volume::make(data_->grid, std::move(difference)), std::nullopt}});
    }
    out.insert(out.begin(), LayerUpdate{layer, {Volume::make(data_->grid, std::move(image)), quality}});
    return out;
}

void SessionWorker::prepareCoils(const ReconSettings& s) {
    const int k = data_->coils > 1 && s.virtual_coils < data_->coils ? std::max(0, s.virtual_coils) : 0;
    if (k == session_virtual_coils_) return;
    auto prepared = std::make_shared<recon::Dataset>(*data_);
    coil_preparation_ = recon::prepareCoils(*prepared, k);
    session_->setDataset(std::move(prepared));
    session_virtual_coils_ = k;
    // Other coils are other data: gridding, F^H d, maps and the last iterate start again.
    gridded_ = false;
    last_iterate_.clear();
    last_iterate_iterations_ = 0;
}

void SessionWorker::gridAll(const JobRequest& job) {
    if (gridded_) return;  // gridding does not depend on lambda or the regulariser
    emit densityReady(std::make_shared<const std::vector<double>>(
        session_->densityWeights(progressFor(job, QStringLiteral("Density weights")))));

    recon::GriddingResult trilinear = session_->gridTrilinear(progressFor(job, QStringLiteral("Gridding (trilinear)")));
    emit layersReady(job.generation, imageLayers(Layer::GriddingTrilinear, std::move(trilinear.image), true));

    recon::GriddingResult kb = session_->gridKaiserBessel(recon::kaiserBesselGridding(),
                                                          progressFor(job, QStringLiteral("Gridding (Kaiser-Bessel)")));
    emit layersReady(job.generation, imageLayers(Layer::GriddingKaiserBessel, std::move(kb.image), true));
    if (demo_ && data_->hasTruth()) {
        // Once per simulated data set: what full Cartesian sampling would reach (the
        // Gibbs ringing of the truth), shown next to the results (docs/CONVENTIONS.md).
        beginPhase(job, QStringLiteral("Cartesian floor"));
        emit floorReady(recon::cartesianFloor(*demo_, *data_, *backend_));
    }
    gridded_ = true;
    emit cacheStatusChanged(QString::fromStdString(session_->cacheStatus()));
}

void SessionWorker::flushIterations() {
    if (pending_.empty()) return;
    emit iterationsDone(pending_);
    pending_.clear();
}

void SessionWorker::solve(const JobRequest& job, JobOutcome& outcome) {
    const ReconSettings& s = job.settings;
    recon::SolveOptions opts;
    opts.regularizer = s.regularizer;
    opts.lambda = s.lambda;
    opts.iterations = s.iterations;
    opts.snapshot_every = data_->grid.voxels() <= kLiveSnapshotVoxels ? 1 : 5;
    opts.method = recon::FourierMethod{s.method.toStdString(), recon::kDefaultNufftTolerance};
    opts.coil_combination = s.coil_combination;
    opts.coil_maps = s.coil_maps;
    opts.weighting = s.weighting;

    // Solves reported: one per coil for sum of squares, one for SENSE (progress and the phase count them).
    const int coils = s.coil_combination == recon::CoilCombination::Sense ? 1 : data_->coils;
    // A cold start passes no image at all, so the same settings and data give the same result.
    const bool warm = job.warm_start && last_iterate_.size() == data_->grid.voxels();
    const int start_iteration = warm ? last_iterate_iterations_ : 0;
    QElapsedTimer post_clock;
    post_clock.start();
    auto observer = [&](int coil, const recon::IterationRecord& record, const recon::ComplexArray* snapshot) {
        notePhase(job, QStringLiteral("CG"), double(record.iteration) / std::max(1, s.iterations));
        IterationUpdate u;
        u.generation = job.generation;
        u.record = record;
        u.coil = coil;
        u.coils = coils;
        u.iterations = s.iterations;
        u.start_iteration = start_iteration;
        u.lambda = opts.lambda;
        // One coil's iterate is not the combined image, and SENSE's is complex (its result is the
        // magnitude): multi-coil data show theirs at the end.
        queueIteration(std::move(u), data_->coils == 1 ? snapshot : nullptr, post_clock);
    };
    auto phase = [&](recon::Phase p, double fraction) {
        if (p != recon::Phase::Iterating) notePhase(job, QString::fromUtf8(recon::toString(p)), fraction);
    };
    recon::CallbackMonitor monitor(observer, job.cancel.get(), phase);
    if (job.suggest_lambda) {
        const recon::LambdaChoice choice = session_->suggestLambda(opts, monitor);
        opts.lambda = choice.lambda;
        outcome.lambda_rule = QString::fromStdString(choice.rule);
    }
    opts.warm_start = warm;  // continues the solve resident on the backend (no copy) when it matches
    recon::SolveResult result = session_->solve(opts, monitor, warm ? &last_iterate_ : nullptr);
    flushIterations();

    outcome.solved = true;
    outcome.iterations_done = result.history.empty() ? 0 : result.history.back().iteration;
    outcome.start_iteration = start_iteration;
    outcome.cold_accuracy = result.cold_accuracy;
    outcome.seconds = result.seconds;
    outcome.lambda = result.lambda;
    outcome.lambda_scale = result.lambda_scale;
    outcome.method = QString::fromStdString(result.method);
    outcome.weighting = opts.weighting;
    outcome.coil_maps = result.coil_maps;
    if (!result.image.empty()) {
        // SENSE continues from its complex iterate, not from the magnitude shown.
        last_iterate_ = result.complex_image.empty() ? result.image : result.complex_image;
        last_iterate_iterations_ = start_iteration + outcome.iterations_done;
        outcome.layers = imageLayers(Layer::Iterative, std::move(result.image), false);
    }
    if (result.cancelled) outcome.state = JobState::Cancelled;
}

std::shared_ptr<const recon::ct::CtData> SessionWorker::loadCt(const JobRequest& job) {
    const std::string name = job.name.toStdString();
    if (job.source == JobRequest::Source::Demo && recon::ct::isCtCase(name)) {
        beginPhase(job, QStringLiteral("Simulating demo case %1").arg(job.name));
        return std::make_shared<const recon::ct::CtData>(
            recon::ct::simulate(recon::ct::ctDemoCase(name), progressFor(job, QStringLiteral("Line integrals"))));
    }
    if (job.source == JobRequest::Source::File && recon::ct::isCtFile(name)) {
        beginPhase(job, QStringLiteral("Reading %1").arg(job.name));
        auto data = std::make_shared<recon::ct::CtData>(recon::ct::readCtFile(name));
        data->validate(name);
        return data;
    }
    return nullptr;
}

void SessionWorker::ctFdk(const JobRequest& job) {
    if (gridded_) return;  // FDK depends on neither λ nor the prior
    auto phase = [&](recon::Phase, double fraction) { notePhase(job, QStringLiteral("FDK"), fraction); };
    recon::CallbackMonitor monitor({}, job.cancel.get(), phase);
    beginPhase(job, QStringLiteral("FDK"));
    recon::CtResult fdk = ct_session_->fdk(recon::ct::FdkOptions{}, monitor);
    // FDK is quantitative (docs/CONVENTIONS.md, "Cone-beam CT"): measured as it is, never rescaled.
    emit layersReady(job.generation,
                     imageLayers(Layer::GriddingKaiserBessel, recon::ComplexArray(fdk.image.begin(), fdk.image.end()), false));
    gridded_ = true;
}

// Posts (with an image when one is due) go out at most every kPostIntervalMs; the final
// image comes with the outcome.
void SessionWorker::queueIteration(IterationUpdate u, const recon::ComplexArray* snapshot, QElapsedTimer& post_clock) {
    const bool due = post_clock.elapsed() >= kPostIntervalMs;
    if (snapshot && due) {
        const recon::IterationRecord& record = u.record;
        const recon::Quality q{0, record.psnr_db, record.error_percent};
        u.layers = imageLayers(Layer::Iterative, *snapshot, false, record.has_truth ? &q : nullptr);
    }
    pending_.push_back(std::move(u));
    if (due) {
        flushIterations();
        post_clock.start();
    }
}

void SessionWorker::ctSolve(const JobRequest& job, JobOutcome& outcome) {
    const ReconSettings& s = job.settings;
    recon::CtSolveOptions opts;
    opts.iterative.prior = s.regularizer;
    opts.iterative.lambda = s.lambda;
    opts.iterations = s.iterations;
    opts.snapshot_every = data_->grid.voxels() <= kLiveSnapshotVoxels ? 1 : 5;
    // A λ change continues the solve resident on the backend (CtSession checks that it matches).
    opts.warm_start = job.warm_start && !last_iterate_.empty();
    QElapsedTimer post_clock;
    post_clock.start();
    int start_iteration = opts.warm_start ? last_iterate_iterations_ : 0;
    auto observer = [&](int, const recon::IterationRecord& record, const recon::ComplexArray* snapshot) {
        notePhase(job, QStringLiteral("CG"), double(record.iteration) / std::max(1, s.iterations));
        IterationUpdate u;
        u.generation = job.generation;
        u.record = record;
        u.iterations = s.iterations;
        u.start_iteration = start_iteration;
        u.lambda = s.lambda;
        queueIteration(std::move(u), snapshot, post_clock);
    };
    auto phase = [&](recon::Phase p, double fraction) {
        if (p != recon::Phase::Iterating) notePhase(job, QString::fromUtf8(recon::toString(p)), fraction);
    };
    recon::CallbackMonitor monitor(observer, job.cancel.get(), phase);
    beginPhase(job, QStringLiteral("CT projector and s"));
    recon::CtResult result = ct_session_->solve(opts, monitor);
    flushIterations();
    // The session starts from zero where the warm start did not match (another prior): say so.
    if (!result.warm_started) start_iteration = 0;

    outcome.solved = true;
    outcome.iterations_done = result.history.empty() ? 0 : result.history.back().iteration;
    outcome.start_iteration = start_iteration;
    outcome.seconds = result.seconds;
    outcome.lambda = s.lambda;
    outcome.lambda_scale = result.lambda_scale;
    outcome.method = QString::fromStdString(result.description);
    if (!result.image.empty()) {
        last_iterate_.assign(result.image.begin(), result.image.end());
        last_iterate_iterations_ = start_iteration + outcome.iterations_done;
        outcome.layers = imageLayers(Layer::Iterative, recon::ComplexArray(result.image.begin(), result.image.end()), false);
    }
    emit cacheStatusChanged(QStringLiteral("CT: projector, s = %1 and the resident solve kept").arg(result.lambda_scale, 0, 'g', 5));
    if (result.cancelled) outcome.state = JobState::Cancelled;
}

}  // namespace studio
