// The controller without any widget: a solve to completion on a small 2D demo,
// cancellation in every phase, rapid lambda changes (no stale generation is
// ever delivered), warm starts that reuse the cached Q and F^H d, errors, and
// destruction in the middle of a solve.
#include <QElapsedTimer>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <set>

#include "recon/core/metrics.hpp"
#include "recon/session/demo_cases.hpp"
#include "ui/reconstruction_controller.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using studio::testing::kSmallDemo;
using studio::testing::kSolveTimeoutMs;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

ReconSettings settingsWith(int iterations, double lambda = 0.02) {
    ReconSettings s;
    s.iterations = iterations;
    s.lambda = lambda;
    s.backend = recon::BackendChoice::Cpu;  // the same everywhere; CUDA is tested by the engine's gpu tests
    return s;
}

}  // namespace

class TestController : public QObject {
    Q_OBJECT
private slots:
    // Suggest lambda (issue 13): the controller asks the engine for the regulariser's lambda,
    // solves from zero with it, adopts it as the setting and reports the rule; a lambda set
    // by hand afterwards drops the rule.
    void suggestLambdaAdoptsTheEnginesChoice() {
        ReconstructionController c;
        ReconSettings s = settingsWith(30, 0.1);
        s.regularizer = recon::RegularizerKind::TotalVariation;
        c.setSettings(s);
        c.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.lambdaRule().isEmpty());
        QSignalSpy suggested(&c, &ReconstructionController::lambdaSuggested);
        const quint64 generation = c.generation();
        c.suggestLambda();
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() > generation && finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(suggested.count(), 1);

        recon::ReconstructionSession reference(recon::createCpuBackend(recon::Precision::Single));
        reference.setDataset(c.dataset());
        recon::SolveOptions o;
        o.regularizer = recon::RegularizerKind::TotalVariation;
        recon::CallbackMonitor quiet;
        const recon::LambdaChoice expected = reference.suggestLambda(o, quiet);
        QVERIFY2(std::abs(c.settings().lambda - expected.lambda) < 1e-9 * expected.lambda,
                 qPrintable(QStringLiteral("%1 vs %2").arg(c.settings().lambda).arg(expected.lambda)));
        QCOMPARE(suggested.first()[0].toDouble(), c.settings().lambda);
        QCOMPARE(c.lambdaRule(), QString::fromStdString(expected.rule));
        // The solve used the chosen lambda from zero, 30 iterations.
        QCOMPARE(int(c.history().size()), 30);
        QVERIFY(c.history().back().penalty_term > 0);
        // ADMM's outer step for the progress bar: 5 CG iterations per step.
        QCOMPARE(c.outerIteration(), c.history().back().outer_iteration);
        QVERIFY(c.outerIteration() >= 6);

        c.setLambda(0.3);
        QVERIFY(c.lambdaRule().isEmpty());
    }

    void solvesASmallDemoToCompletion() {
        ReconstructionController c;
        c.setSettings(settingsWith(10));
        QSignalSpy states(&c, &ReconstructionController::stateChanged);
        QSignalSpy progress(&c, &ReconstructionController::progressChanged);
        QSignalSpy iterations(&c, &ReconstructionController::iterationAdvanced);
        c.openDemo(kSmallDemo);
        QCOMPARE(toString(c.state()), toString(JobState::Running));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(toString(states.first().first().value<JobState>()), toString(JobState::Running));

        // The data panel's facts come from the engine.
        QVERIFY(c.hasDataset());
        QCOMPARE(c.summary().grid.n[0], 48);
        QCOMPARE(c.summary().grid.dims, 2);
        QCOMPARE(c.summary().samples, qint64(c.dataset()->samples()));
        QVERIFY(c.summary().lambda_scale > 0);
        QVERIFY(c.summary().bytes_single > 0 && c.summary().bytes_double > c.summary().bytes_single);
        QVERIFY(!c.backend().description.isEmpty());

        // One record per iteration, in order, converging.
        QCOMPARE(iterations.count(), 10);
        QCOMPARE(int(c.history().size()), 10);
        QCOMPARE(c.outerIteration(), 0);  // CG: one level
        for (int i = 0; i < 10; ++i) QCOMPARE(c.history()[i].iteration, i + 1);
        QVERIFY(c.history().back().residual < 0.5 * c.history().front().residual);
        const QList<QVariant> last = progress.last();
        QCOMPARE(last[0].toInt(), 10);
        QCOMPARE(last[1].toInt(), 10);
        QVERIFY(last[2].toDouble() >= 0 && last[2].toDouble() < 1e-9);  // nothing left

        // Every image and difference map is there, and the numbers shown are the engine's.
        for (Layer l : kAllLayers) QVERIFY2(c.layers().has(l), qPrintable(layerTitle(l)));
        const LayerImage* iterative = c.layers().get(Layer::Iterative);
        QVERIFY(iterative->quality);
        const recon::Quality q = recon::measureQuality(*iterative->volume.data, c.dataset()->truth, false);
        QVERIFY(std::abs(q.psnr_db - iterative->quality->psnr_db) < 1e-9);
        QVERIFY(std::abs(c.history().back().psnr_db - q.psnr_db) < 1e-3);
        // The difference map is the iterate minus the truth, voxel for voxel.
        const auto& diff = *c.layers().get(Layer::DifferenceIterative)->volume.data;
        for (std::size_t i = 0; i < diff.size(); i += 97)
            QVERIFY(std::abs(diff[i] - ((*iterative->volume.data)[i] - c.dataset()->truth[i])) < 1e-12);
        // The reference paper's finding, on this case too: the iterative image beats gridding.
        QVERIFY(iterative->quality->psnr_db > c.layers().get(Layer::GriddingKaiserBessel)->quality->psnr_db);
        QVERIFY(iterative->quality->psnr_db > c.layers().get(Layer::GriddingTrilinear)->quality->psnr_db);
        QVERIFY(c.cacheStatus().contains("Q (") && c.cacheStatus().contains("F^H d"));
        // The Gibbs floor of this simulated case is known: full Cartesian sampling
        // beats both griddings of 40 spokes (a regularised solve may pass it: it
        // smooths the ringing the floor measures).
        QVERIFY(c.layers().floor());
        for (Layer l : {Layer::GriddingTrilinear, Layer::GriddingKaiserBessel})
            QVERIFY(c.layers().floor()->psnr_db > c.layers().get(l)->quality->psnr_db);
    }

    void lambdaChangeRerunsOnlyCgWarmStarted() {
        ReconstructionController c;
        c.setSettings(settingsWith(6));
        c.setDebounceInterval(20);
        QSignalSpy first_iterations(&c, &ReconstructionController::iterationAdvanced);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        const double cold_first_error = c.history().front().error_percent;
        const double previous_final_psnr = c.layers().get(Layer::Iterative)->quality->psnr_db;
        const quint64 generation = c.generation();

        QStringList phases;
        connect(&c, &ReconstructionController::phaseChanged, this,
                [&phases](const QString& p) { if (!phases.contains(p)) phases << p; });
        QSignalSpy reset(&c, &ReconstructionController::historyReset);
        c.setLambda(0.03);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));  // debounced: nothing yet...
        QCOMPARE(c.layers().get(Layer::Iterative)->quality->psnr_db, previous_final_psnr);  // ...and the old image stays
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(reset.count(), 1);
        // Q, F^H d, density weights and gridding were cached: only CG ran.
        QCOMPARE(phases, QStringList{QStringLiteral("CG")});
        // Warm start: the first iterate is already as good as the last one was, far
        // better than the first iterate of the cold start.
        QVERIFY2(c.history().front().error_percent < 0.8 * cold_first_error,
                 qPrintable(QStringLiteral("warm %1 %, cold %2 %").arg(c.history().front().error_percent).arg(cold_first_error)));
    }

    void rapidLambdaChangesNeverDeliverAStaleGeneration() {
        ReconstructionController c;
        // Long enough to be interrupted several times and still running when the GUI thread reads its
        // fifth iteration: 400 small-2d iterations (about 30 ms on the faster CPU product) were not.
        c.setSettings(settingsWith(20000));
        c.setDebounceInterval(0);
        struct Delivery {
            quint64 update_generation, current_generation;
            double update_lambda, current_lambda;
        };
        std::vector<Delivery> deliveries;
        std::vector<double> lambdas{0.02};
        connect(&c, &ReconstructionController::iterationAdvanced, this, [&](const IterationUpdate& u) {
            deliveries.push_back({u.generation, c.generation(), u.lambda, c.settings().lambda});
            // At the third iteration of each solve, change lambda and restart at once,
            // several times in a row, as a slider dragged quickly does.
            if (u.record.iteration == 3 && lambdas.size() < 6) {
                for (int k = 0; k < 3; ++k) {
                    lambdas.push_back(lambdas.back() * 1.7);
                    c.setLambda(lambdas.back());
                    c.reconstruct();
                }
            }
            if (lambdas.size() >= 6 && u.record.iteration == 5) c.cancel();
        });
        QSignalSpy finished_jobs(&c, &ReconstructionController::jobFinished);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Cancelled));
        QVERIFY(lambdas.size() >= 6);

        std::set<quint64> generations;
        for (const Delivery& d : deliveries) {
            QCOMPARE(d.update_generation, d.current_generation);
            QCOMPARE(d.update_lambda, d.current_lambda);
            generations.insert(d.update_generation);
        }
        QVERIFY(generations.size() >= 3);  // several solves really ran and were superseded
        // Only the newest job's end is reported.
        QCOMPARE(finished_jobs.count(), 1);
        const auto outcome = finished_jobs.first().first().value<JobOutcome>();
        QCOMPARE(outcome.generation, c.generation());
        QCOMPARE(outcome.lambda, lambdas.back());

        // The debounce folds a burst of changes into one solve.
        const quint64 before = c.generation();
        c.setDebounceInterval(50);
        for (int k = 0; k < 10; ++k) c.setLambda(0.01 + 0.001 * k);
        QCOMPARE(c.generation(), before);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == before + 1, 5000);
        QTest::qWait(200);
        QCOMPARE(c.generation(), before + 1);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
    }

    void cancelsInEveryPhase_data() {
        // The phases a fresh open goes through, as the worker reports them.
        ReconstructionController c;
        c.setSettings(settingsWith(4));
        QStringList phases;
        connect(&c, &ReconstructionController::phaseChanged, this,
                [&phases](const QString& p) { if (!phases.contains(p)) phases << p; });
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        for (const char* expected :
             {"Density weights", "Gridding (trilinear)", "Gridding (Kaiser-Bessel)", "Cartesian floor", "CG"})
            QVERIFY2(phases.contains(expected), qPrintable(phases.join(", ")));

        QTest::addColumn<QString>("phase");
        for (const QString& p : phases) QTest::newRow(qPrintable(p)) << p;
    }

    void cancelsInEveryPhase() {
        QFETCH(QString, phase);
        ReconstructionController c;
        c.setSettings(settingsWith(50));
        // When the worker enters `phase`, it asks the GUI thread to press Cancel and
        // waits until it has: the cancel lands in that phase, deterministically.
        QSemaphore pressed;
        c.setWorkerPhaseHook([&](const QString& p) {
            if (p != phase) return;
            QMetaObject::invokeMethod(&c, [&] {
                c.cancel();
                pressed.release();
            }, Qt::QueuedConnection);
            pressed.acquire();
        });
        QSignalSpy states(&c, &ReconstructionController::stateChanged);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Cancelled));
        QStringList seen;
        for (const auto& s : states) seen << toString(s.first().value<JobState>());
        QCOMPARE(seen, (QStringList{"running", "cancelling", "cancelled"}));
        QVERIFY(c.hasDataset());  // what was loaded stays loaded
        QVERIFY(c.history().size() < 50);
        if (phase == QLatin1String("CG")) {
            // Cancel keeps the last good image.
            QVERIFY(c.layers().has(Layer::Iterative));
            QVERIFY(c.layers().get(Layer::Iterative)->quality->psnr_db > 0);
        }

        // And the controller works again afterwards.
        c.setWorkerPhaseHook({});
        c.setSettings(settingsWith(3));
        c.reconstruct();
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(int(c.history().size()), 3);
    }

    void destroyingMidSolveIsSafeAndPrompt() {
        for (bool during_load : {true, false}) {
            auto c = std::make_unique<ReconstructionController>();
            c->setSettings(settingsWith(100000));
            bool iterating = false;
            connect(c.get(), &ReconstructionController::iterationAdvanced, this, [&] { iterating = true; });
            c->openDemo(kSmallDemo);
            if (!during_load) QTRY_VERIFY_WITH_TIMEOUT(iterating, kSolveTimeoutMs);
            QElapsedTimer t;
            t.start();
            c.reset();  // cancels, stops the thread and joins it
            QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));  // generous for loaded CI machines
        }
        QTest::qWait(50);  // anything still queued for the dead controller must go nowhere
    }

    // Issue 16, item 2: Reconstruct is reproducible (from zero); only a lambda
    // change continues from the last image, and says so with the total count.
    void reconstructGivesTheSameImageForTheSameSettings() {
        ReconstructionController c;
        c.setSettings(settingsWith(6));
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        const recon::ComplexArray first = *c.layers().get(Layer::Iterative)->volume.data;
        const double first_psnr = c.layers().get(Layer::Iterative)->quality->psnr_db;
        QVERIFY(!c.warmStart());
        QCOMPARE(c.totalIterations(), 6);

        for (int run = 0; run < 2; ++run) {
            const quint64 generation = c.generation();
            c.reconstruct();
            QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
            QCOMPARE(toString(c.state()), toString(JobState::Completed));
            const recon::ComplexArray& again = *c.layers().get(Layer::Iterative)->volume.data;
            QCOMPARE(again.size(), first.size());
            double max_difference = 0, max_value = 0;
            for (std::size_t i = 0; i < first.size(); ++i) {
                max_difference = std::max(max_difference, std::abs(again[i] - first[i]));
                max_value = std::max(max_value, std::abs(first[i]));
            }
            QVERIFY2(max_difference <= 1e-6 * max_value,
                     qPrintable(QStringLiteral("run %1: differs by %2 of %3").arg(run).arg(max_difference).arg(max_value)));
            QVERIFY(std::abs(c.layers().get(Layer::Iterative)->quality->psnr_db - first_psnr) < 1e-6);
            QVERIFY(!c.warmStart());
            QCOMPARE(c.totalIterations(), 6);
            QCOMPARE(c.history().front().iteration, 1);
        }
    }

    void lambdaTuningIsWarmAndCountsIterationsSinceZero() {
        ReconstructionController c;
        c.setSettings(settingsWith(5));
        c.setDebounceInterval(10);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(c.totalIterations(), 5);
        std::vector<int> starts;
        connect(&c, &ReconstructionController::iterationAdvanced, this,
                [&starts](const IterationUpdate& u) { starts.push_back(u.start_iteration); });

        // Two lambda steps: each continues from the last image, until the first solve's residual (within the budget).
        for (int step = 1; step <= 2; ++step) {
            const quint64 generation = c.generation();
            const int before = c.totalIterations();
            c.setLambda(0.02 + 0.01 * step);
            QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
            QCOMPARE(toString(c.state()), toString(JobState::Completed));
            QVERIFY(c.warmStart());
            QVERIFY2(c.totalIterations() > before && c.totalIterations() <= before + 5, qPrintable(QString::number(c.totalIterations())));
            QCOMPARE(starts.front(), before);
            starts.clear();
        }
        // A change of anything but lambda (here the iteration count) starts from zero...
        ReconSettings s = c.settings();
        s.iterations = 4;
        quint64 generation = c.generation();
        c.setSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
        QVERIFY(!c.warmStart());
        QCOMPARE(c.totalIterations(), 4);
        QCOMPARE(starts.front(), 0);
        // ...and so does Reconstruct, even right after tuning.
        c.setLambda(0.05);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c) && c.warmStart(), kSolveTimeoutMs);
        QVERIFY(c.totalIterations() > 4 && c.totalIterations() <= 8);
        starts.clear();
        generation = c.generation();
        c.reconstruct();
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
        QVERIFY(!c.warmStart());
        QCOMPARE(c.totalIterations(), 4);
        QCOMPARE(starts.front(), 0);
    }

    void badInputFailsWithAClearMessage() {
        ReconstructionController c;
        c.setSettings(settingsWith(3));
        QSignalSpy failed(&c, &ReconstructionController::failed);
        c.openFile(QStringLiteral("/nonexistent/scan.h5"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Failed));
        QCOMPARE(failed.count(), 1);
        QVERIFY2(c.lastError().contains("/nonexistent/scan.h5"), qPrintable(c.lastError()));
        QVERIFY(!c.hasDataset());

        c.reconstruct();  // nothing open
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Failed));
        QVERIFY2(c.lastError().contains("open", Qt::CaseInsensitive), qPrintable(c.lastError()));

        // The anatomical regulariser needs a reference image: with one it runs...
        ReconSettings s = settingsWith(3);
        s.regularizer = recon::RegularizerKind::AnatomicalFiniteDifference;
        c.setSettings(s);
        recon::CaseSpec spec = recon::demoCase(kSmallDemo.toStdString());
        spec.reference = true;
        c.openDataset(recon::simulate(spec), QStringLiteral("with a reference"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY2(c.state() == JobState::Completed, qPrintable(c.lastError()));
        QVERIFY(c.summary().has_reference);
        // ...and without one it fails, saying why.
        spec.reference = false;
        c.openDataset(recon::simulate(spec), QStringLiteral("without a reference"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Failed));
        QVERIFY2(c.lastError().contains("reference"), qPrintable(c.lastError()));
        QVERIFY(c.hasDataset());
        QVERIFY(!c.summary().has_reference);
        QCOMPARE(c.summary().origin, QStringLiteral("without a reference"));
        QVERIFY(c.layers().has(Layer::GriddingKaiserBessel));  // gridding does not need it

        c.openDemo(QStringLiteral("no-such-demo"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Failed));
        QVERIFY2(c.lastError().contains("no-such-demo") && c.lastError().contains(kSmallDemo), qPrintable(c.lastError()));
    }

    // A problem beyond the machine's memory (2^30 voxels: Q's grid alone is 550 GB) is refused
    // before anything is allocated, with the estimate and what is available in the message
    // the status bar shows; the workstation then goes on with the next data set.
    void refusesWhatDoesNotFitInMemory() {
        ReconstructionController c;
        c.setSettings(settingsWith(3));
        QSignalSpy failed(&c, &ReconstructionController::failed);
        auto huge = std::make_shared<recon::Dataset>();
        huge->grid = recon::Grid::make3D(2048, 2048, 256);
        huge->trajectory.dims = 3;
        huge->trajectory.k = {0, 0, 0, 1, 2, 3, -4, 5, -6};
        huge->kspace.assign(3, recon::cdouble(1, 0));
        c.openDataset(huge, QStringLiteral("huge"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Failed));
        QCOMPARE(failed.count(), 1);
        for (const char* part : {"2048x2048x256", "of host memory; ", " is available"})
            QVERIFY2(c.lastError().contains(QLatin1String(part)), qPrintable(c.lastError()));
        QVERIFY(!c.layers().has(Layer::GriddingKaiserBessel));

        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY2(c.state() == JobState::Completed, qPrintable(c.lastError()));
    }
};

QTEST_GUILESS_MAIN(TestController)
#include "test_controller.moc"
