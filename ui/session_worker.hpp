// The worker that owns the ReconstructionSession and runs jobs on the
// controller's thread (a QObject moved to a QThread). Everything it reports goes
// back through queued signals; every job carries the generation of the request
// that made it, so the controller can drop what an older request produced.
// Only ReconstructionController uses this header.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/dataset.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/ct_session.hpp"
#include "recon/sense/prewhiten.hpp"
#include "recon/session/reconstruction.hpp"
#include "ui/image_layers.hpp"
#include "ui/job_state.hpp"

namespace studio {

// What the user chose in the tune panel.
struct ReconSettings {
    double lambda = 0.02;  // multiplies s = Q(0) (docs/CONVENTIONS.md)
    recon::RegularizerKind regularizer = recon::RegularizerKind::FiniteDifference;
    // The engine's default, so the GUI and reconstudio-cli agree (one place: SolveOptions).
    int iterations = recon::SolveOptions{}.iterations;
    recon::Precision precision = recon::Precision::Single;
    recon::BackendChoice backend = recon::BackendChoice::Auto;
    QString method;  // a Fourier method of the backend; empty: its default
    // Multi-coil data: coil by coil + sum of squares, or one SENSE solve with maps made by `coil_maps`
    // (the engine's defaults, as reconstudio-cli's).
    recon::CoilCombination coil_combination = recon::SolveOptions{}.coil_combination;
    recon::CoilMapMethod coil_maps = recon::SolveOptions{}.coil_maps;
    int virtual_coils = 0;  // coil compression to this many virtual coils (PCA); 0: the coils as they are
    // The data term of every MR solve (SolveOptions::weighting, as reconstudio-cli's --data-weighting);
    // CT's statistical weights are its own and ignore it.
    recon::DataWeighting weighting = recon::SolveOptions{}.weighting;
    bool operator==(const ReconSettings&) const = default;
};

// The facts the data panel shows, computed by the engine on the worker.
struct DatasetSummary {
    QString name, source, origin;  // origin: the file or demo it came from
    recon::Grid grid;
    QString trajectory_kind;
    qint64 samples = 0;
    qint64 readouts = 0;
    int readout_length = 0;
    int coils = 1;
    qint64 noise_samples = 0;   // per coil, of the data set's noise scan (the session prewhitens with it)
    bool has_truth = false, has_reference = false, has_density = false;
    QString basis;              // "box" / "point"
    double lambda_scale = 0;    // s = Q(0) = sum |phi(k_m)|^2
    qint64 bytes_single = 0;    // estimateReconstructionBytes per precision
    qint64 bytes_double = 0;
    double truth_max = 0;       // max |truth| (0 without a truth)
    // A file of several frames (recon::readFrames): how many, which one is open, and its name.
    int frames = 1, frame = 0;
    QString frame_name, frame_counts;  // "slice 1, repetition 0"; "2 slices x 2 repetitions"
    // CT (Modality::Ct): the scan's geometry and dose; grid is then the volume's, samples
    // the projection values, and lambda_scale s = trace(AᵀWA)/voxels once a solve has run.
    Modality modality = Modality::Mr;
    recon::ct::CtGeometry ct_geometry;
    double ct_photons = 0;  // incident photons per pixel (0: noiseless)
};

struct DatasetReport {
    std::shared_ptr<const recon::Dataset> data;
    DatasetSummary summary;
    std::vector<LayerUpdate> layers;  // the truth, when known
    // A CT scan (null for MR). `data` then stands in for it on the image side: name,
    // source, the volume's grid and the truth, no k-space.
    std::shared_ptr<const recon::ct::CtData> ct;
};

struct BackendReport {
    QString description;  // BackendInfo::describe()
    QString kind;         // "cpu" / "cuda"
    QString note;         // what createBackend said (e.g. why CUDA was not used)
    QStringList methods;  // Fourier methods, default first
    QStringList method_descriptions;
};

struct IterationUpdate {
    quint64 generation = 0;
    recon::IterationRecord record;
    int coil = 0, coils = 1;
    int iterations = 0;  // per coil
    // Iterations the starting image already had: 0 when the solve started from
    // zero, else the total of the warm-start chain since the last start from zero.
    int start_iteration = 0;
    double lambda = 0;
    std::vector<LayerUpdate> layers;  // the iterate and its difference (when a snapshot came)
};

struct JobOutcome {
    quint64 generation = 0;
    JobState state = JobState::Completed;  // Completed, Cancelled or Failed
    QString message;                       // why it failed
    bool solved = false;                   // the iterative solve ran (to the end or cancelled)
    std::vector<LayerUpdate> layers;       // the final (or last complete) iterate
    int iterations_done = 0;
    int start_iteration = 0;               // as in IterationUpdate
    double cold_accuracy = 0;              // a lambda change: the first solve's residual it stopped below (0: none)
    double seconds = 0;                    // the CG loop
    double lambda = 0, lambda_scale = 0;
    QString method;
    recon::DataWeighting weighting = recon::DataWeighting::Uniform;  // the data term the solve had (MR)
    QString lambda_rule;  // the job chose lambda (JobRequest::suggest_lambda): the rule and its numbers
    std::shared_ptr<const recon::CoilMaps> coil_maps;  // a SENSE solve: the maps it used
    std::optional<recon::CoilPreparation> coil_preparation;  // MR: what was done to the coils it reconstructed
};

struct JobRequest {
    enum class Source { None, File, Demo, Dataset };
    quint64 generation = 0;
    std::shared_ptr<std::atomic<bool>> cancel;
    ReconSettings settings;
    Source source = Source::None;
    QString name;                                  // file path or demo name
    int frame = 0;                                 // Source::File: which frame of a file of several
    std::shared_ptr<const recon::Dataset> dataset; // Source::Dataset
    bool reconstruct = true;
    // Continue from the last iterate (lambda tuning) instead of from zero. Only
    // the tuning path asks for it: a plain Reconstruct is reproducible.
    bool warm_start = false;
    // Choose lambda from the data first (ReconstructionSession::suggestLambda), then solve with it from zero.
    bool suggest_lambda = false;
    // Called on the worker thread as each phase begins (tests use it to cancel
    // in a chosen phase deterministically); may be empty.
    std::function<void(const QString& phase)> phase_hook;
};

class SessionWorker : public QObject {
    Q_OBJECT
public:
    // `latest`: the newest generation requested; `shutdown`: set when the
    // controller is going away. Both are read here, written by the controller.
    SessionWorker(std::shared_ptr<const std::atomic<quint64>> latest,
                  std::shared_ptr<const std::atomic<bool>> shutdown);
    ~SessionWorker() override;

    void run(const JobRequest& job);  // on the worker thread

signals:
    void datasetLoaded(const studio::DatasetReport& report);
    void backendReady(const studio::BackendReport& report);
    void phaseChanged(quint64 generation, const QString& phase, double fraction);
    void layersReady(quint64 generation, const std::vector<studio::LayerUpdate>& layers);
    // CG records in order, batched (at most every kPostIntervalMs, and whenever an
    // image is attached), so a solver far faster than the screen cannot flood
    // the GUI thread's event queue.
    void iterationsDone(const std::vector<studio::IterationUpdate>& updates);
    void cacheStatusChanged(const QString& status);
    void floorReady(const recon::Quality& floor);  // of the data set loaded last
    // The density weights gridding used (the data set's own or computed), of the data set loaded last.
    void densityReady(std::shared_ptr<const std::vector<double>> weights);
    void finished(const studio::JobOutcome& outcome);

private:
    void ensureBackend(const ReconSettings& s);
    void load(const JobRequest& job);
    // The session's data with the settings' coil compression (after whitening); a change re-sets the data.
    void prepareCoils(const ReconSettings& s);
    void gridAll(const JobRequest& job);
    void solve(const JobRequest& job, JobOutcome& outcome);
    // CT: FDK once per scan (in gridding's place), then the iterative solve.
    std::shared_ptr<const recon::ct::CtData> loadCt(const JobRequest& job);
    void ctFdk(const JobRequest& job);
    void ctSolve(const JobRequest& job, JobOutcome& outcome);
    void flushIterations();
    void queueIteration(IterationUpdate u, const recon::ComplexArray* snapshot, QElapsedTimer& post_clock);
    // A layer and its difference map, with quality against the truth.
    std::vector<LayerUpdate> imageLayers(Layer layer, recon::ComplexArray image, bool rescale,
                                         const recon::Quality* known = nullptr) const;
    // Phases: each begins with a signal and the job's hook, then reports fractions.
    void beginPhase(const JobRequest& job, const QString& phase);
    void notePhase(const JobRequest& job, const QString& phase, double fraction);
    // A progress reporter for an engine call (begins `phase`); it refers to `job`,
    // so it must not outlive it.
    recon::Progress progressFor(const JobRequest& job, const QString& phase);

    std::shared_ptr<const std::atomic<quint64>> latest_;
    std::shared_ptr<const std::atomic<bool>> shutdown_;
    std::shared_ptr<recon::Backend> backend_;
    recon::BackendChoice backend_choice_{};
    recon::Precision backend_precision_{};
    std::unique_ptr<recon::ReconstructionSession> session_;
    std::shared_ptr<const recon::ct::CtData> ct_data_;   // the CT scan open (data_ stands in for it)
    std::unique_ptr<recon::CtSession> ct_session_;       // on backend_, when ct_data_ is set
    std::shared_ptr<const recon::Dataset> data_;
    bool gridded_ = false;                // both gridding layers posted for data_
    int session_virtual_coils_ = 0;       // the compression the session's data have (0: none)
    recon::CoilPreparation coil_preparation_;  // of the session's data
    std::optional<recon::CaseSpec> demo_; // what data_ was simulated from (its floor is computable)
    recon::ComplexArray last_iterate_;    // warm start for a tuning solve
    int last_iterate_iterations_ = 0;     // CG iterations behind last_iterate_ since its start from zero
    std::vector<IterationUpdate> pending_;  // records not yet posted
    QString current_phase_;
    double last_fraction_ = -1;           // throttles progress signals
};

}  // namespace studio

Q_DECLARE_METATYPE(studio::DatasetReport)
Q_DECLARE_METATYPE(studio::BackendReport)
Q_DECLARE_METATYPE(studio::IterationUpdate)
Q_DECLARE_METATYPE(studio::JobOutcome)
Q_DECLARE_METATYPE(studio::ReconSettings)
Q_DECLARE_METATYPE(std::vector<studio::LayerUpdate>)
Q_DECLARE_METATYPE(std::vector<studio::IterationUpdate>)
Q_DECLARE_METATYPE(recon::Quality)
Q_DECLARE_METATYPE(std::shared_ptr<const std::vector<double>>)
