// The workstation's one controller: owns the ReconstructionSession (inside a
// worker object on its own QThread), the job's state, the images shown and the
// convergence history. Widgets call its slots and observe its signals; tests
// drive it without any widget.
//
// Threads talk only through queued signals. Every request (open, reconstruct, a
// settings change) gets a new generation number; whatever the worker reports
// for an older generation is dropped here, so an image or a record from an older
// lambda is never shown. A newer request cancels the running job through the
// std::atomic<bool> the session polls. Every job reuses the session's cached Q
// and F^H d. Reconstruct (and any change other than lambda) solves from zero, so
// the same settings and data give the same image; only a debounced lambda change
// (tuning) continues from the last iterate, and says so (warmStart(), with the
// iterations since the last start from zero in totalIterations()).
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "ui/image_layers.hpp"
#include "ui/job_state.hpp"
#include "ui/session_worker.hpp"

namespace studio {

class ReconstructionController : public QObject {
    Q_OBJECT
public:
    explicit ReconstructionController(QObject* parent = nullptr);
    ~ReconstructionController() override;  // cancels, stops the thread, waits for it

    JobState state() const { return state_; }
    quint64 generation() const { return generation_; }
    const ReconSettings& settings() const { return settings_; }
    std::shared_ptr<const recon::Dataset> dataset() const { return dataset_; }
    bool hasDataset() const { return dataset_ != nullptr; }
    // The CT scan open (null for MR data); dataset() then holds its image side (grid, truth).
    std::shared_ptr<const recon::ct::CtData> ctData() const { return ct_; }
    Modality modality() const { return ct_ ? Modality::Ct : Modality::Mr; }
    const DatasetSummary& summary() const { return summary_; }
    // The s that lambda multiplies for the settings' data term: the data set's Q(0) (summary()), or, for the
    // density-weighted data term, Q_D(0) = sum w |phi|^2 as the last weighted solve reported (0 before one).
    double lambdaScale() const;
    // Whether the settings' solve is density-weighted least squares (MR only: CT ignores the choice).
    bool densityWeighted() const { return modality() == Modality::Mr && settings_.weighting == recon::DataWeighting::Density; }
    const BackendReport& backend() const { return backend_; }
    QString phase() const { return phase_; }
    QString cacheStatus() const { return cache_status_; }
    QString lastError() const { return last_error_; }
    // The outer step of a two-level solve (ADMM) at the last record shown, from 1; 0 for CG and FISTA.
    int outerIteration() const { return history_.empty() ? 0 : history_.back().outer_iteration; }
    // The rule behind the lambda in settings(), when suggestLambda chose it and it was not changed since.
    QString lambdaRule() const { return settings_.lambda == suggested_lambda_ ? lambda_rule_ : QString(); }
    // Records of the current solve (of the current generation only).
    const std::vector<recon::IterationRecord>& history() const { return history_; }
    // Whether the image shown continued from an earlier one (lambda tuning), and
    // the CG iterations behind it since its solve from zero.
    bool warmStart() const { return warm_start_; }
    int totalIterations() const { return total_iterations_; }
    // The cost of the first iterate of the last solve from zero: what a warm
    // solve's cost is drawn relative to (its own first cost is already low).
    double coldStartCost() const { return cold_start_cost_; }
    // The density weights of the data set (its own, or those gridding computed);
    // empty until gridding has run.
    std::shared_ptr<const std::vector<double>> densityWeights() const { return density_; }
    // The coil maps of the last SENSE solve of the open data set (null: none yet, or sum of squares).
    std::shared_ptr<const recon::CoilMaps> coilMaps() const { return coil_maps_; }
    // What the last solve did to the coils (prewhitening, compression); empty before one.
    const std::optional<recon::CoilPreparation>& coilPreparation() const { return coil_preparation_; }
    ImageLayers& layers() { return layers_; }
    const ImageLayers& layers() const { return layers_; }

    // Opening data starts a reconstruction too (gridding, then the iterative solve).
    void setAutoReconstruct(bool on) { auto_reconstruct_ = on; }
    // Delay between a settings change and the solve it triggers (default 300 ms).
    void setDebounceInterval(int ms) { debounce_.setInterval(ms); }
    int debounceInterval() const { return debounce_.interval(); }
    // Called on the worker thread as each phase begins; for tests (to cancel in a
    // given phase deterministically) and logging. Applies to later requests.
    void setWorkerPhaseHook(std::function<void(const QString&)> hook) { phase_hook_ = std::move(hook); }

public slots:
    void openFile(const QString& path);
    // The open file's frame K (summary().frames of them): reloaded and reconstructed like a new file.
    void setFrame(int frame);
    // use_case_tuning: adopt the case's tuned lambda and regulariser (as the menu does).
    void openDemo(const QString& name, bool use_case_tuning = true);
    void openDataset(std::shared_ptr<const recon::Dataset> data, const QString& origin);
    // A settings change restarts the solve after the debounce interval when data
    // are open; the previous images stay until the new ones arrive.
    void setSettings(const studio::ReconSettings& s);
    void setLambda(double lambda);
    // Now, from zero: gridding (once per data set), then the iterative solve.
    void reconstruct();
    // Choose lambda for the current regulariser from the data (the engine's documented rule),
    // then solve from zero with it; lambdaSuggested reports the value and the rule.
    void suggestLambda();
    void cancel();       // stops at the worker's next check; the last complete image is kept

signals:
    void stateChanged(studio::JobState state);
    void settingsChanged(const studio::ReconSettings& s);
    void datasetChanged();  // dataset(), summary() and the truth layer are new
    void backendChanged();
    void phaseChanged(const QString& phase, double fraction);
    void historyReset();    // a new solve's first record is about to arrive
    void iterationAdvanced(const studio::IterationUpdate& update);
    // CG iterations done of the total (over coils), with the estimated seconds left.
    void progressChanged(int done, int total, double eta_seconds);
    void griddingFinished(studio::Layer layer);
    void jobFinished(const studio::JobOutcome& outcome);
    void failed(const QString& message);
    void lambdaSuggested(double lambda, const QString& rule);
    void cacheStatusChanged(const QString& status);
    void densityWeightsChanged();
    void coilMapsChanged();  // coilMaps() is new (or gone, with a new data set)

private:
    void post(JobRequest job);
    void retune();  // the debounced restart after a settings change
    void open(JobRequest::Source source, const QString& name, std::shared_ptr<const recon::Dataset> data = {},
              int frame = 0);
    void setState(JobState s);
    void onDatasetLoaded(const DatasetReport& report);
    void onBackendReady(const BackendReport& report);
    void onPhase(quint64 generation, const QString& phase, double fraction);
    void onLayers(quint64 generation, const std::vector<LayerUpdate>& layers);
    void onIterations(const std::vector<IterationUpdate>& updates);
    void onFinished(const JobOutcome& outcome);

    QThread thread_;
    SessionWorker* worker_ = nullptr;  // lives on thread_; deleted after it stops
    std::shared_ptr<std::atomic<quint64>> latest_;
    std::shared_ptr<std::atomic<bool>> shutdown_;
    std::shared_ptr<std::atomic<bool>> cancel_;  // the newest job's flag
    quint64 generation_ = 0;
    quint64 history_generation_ = 0;

    JobState state_ = JobState::Idle;
    ReconSettings settings_;
    std::shared_ptr<const recon::Dataset> dataset_;
    std::shared_ptr<const recon::ct::CtData> ct_;
    bool load_pending_ = false;
    DatasetSummary summary_;
    BackendReport backend_;
    QString phase_, cache_status_, last_error_;
    std::vector<recon::IterationRecord> history_;
    bool lambda_only_change_ = false;  // since the last solve request: only lambda changed
    bool warm_start_ = false;
    int total_iterations_ = 0;
    double cold_start_cost_ = 0;
    std::shared_ptr<const std::vector<double>> density_;
    double weighted_lambda_scale_ = 0;  // Q_D(0) of the open data set, once a weighted solve reported it
    std::shared_ptr<const recon::CoilMaps> coil_maps_;
    std::optional<recon::CoilPreparation> coil_preparation_;
    ImageLayers layers_;
    QTimer debounce_;
    bool auto_reconstruct_ = true;
    std::function<void(const QString&)> phase_hook_;
    QString lambda_rule_;
    double suggested_lambda_ = -1;
};

}  // namespace studio
