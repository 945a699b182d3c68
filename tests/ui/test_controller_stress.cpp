// The controller under a thousand requests in a row: random lambda changes (each a warm
// re-solve), cancels and restarts from zero, faster than any hand on the slider, with
// the event loop running between them for 0-4 ms so jobs start, get superseded
// mid-solve and finish in every order. Asserted: nothing the worker reports for an older
// request is ever delivered; no slot blocks the GUI thread; a cancel takes effect within
// a bounded time; and after the storm the image shown is exactly the last request's
// (a solve from zero with its lambda, computed here by the engine alone).
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "recon/core/metrics.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "ui/reconstruction_controller.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using studio::testing::kSmallDemo;
using studio::testing::kSolveTimeoutMs;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

// Generous bounds for a loaded two-core CI machine: a slot only posts a request, and the
// worker polls cancel at every CG iteration of a 48^2 solve (milliseconds).
constexpr qint64 kSlowestSlotMs = 250;
constexpr qint64 kSlowestCancelMs = 3000;

}  // namespace

class TestControllerStress : public QObject {
    Q_OBJECT
private slots:
    void thousandLambdaChangesCancelsAndRestarts() {
        ReconstructionController c;
        ReconSettings s;
        s.iterations = 30;
        s.backend = recon::BackendChoice::Cpu;
        c.setSettings(s);
        c.setDebounceInterval(0);  // every lambda change is a request of its own
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));

        // The lambda each request (generation) was issued with. A request is issued by a slot
        // (recorded right after it) or by the debounce timer inside the event loop, which
        // takes the settings as they are: none of the test's slots run there, so a generation
        // first seen in a delivery was issued with the current settings.
        std::map<quint64, double> issued_lambda;
        auto lambdaOf = [&](quint64 generation) {
            return issued_lambda.try_emplace(generation, c.settings().lambda).first->second;
        };
        int deliveries = 0, stale = 0, outcomes = 0;
        QString first_stale;
        // Everything shown belongs to the newest request and carries its lambda.
        connect(&c, &ReconstructionController::iterationAdvanced, this, [&](const IterationUpdate& u) {
            ++deliveries;
            if (u.generation != c.generation() || u.lambda != lambdaOf(u.generation)) {
                if (stale++ == 0)
                    first_stale = QStringLiteral("iteration of generation %1 (lambda %2) shown during %3 (lambda %4)")
                                      .arg(u.generation).arg(u.lambda).arg(c.generation()).arg(lambdaOf(c.generation()));
            }
        });
        connect(&c, &ReconstructionController::jobFinished, this, [&](const JobOutcome& o) {
            ++outcomes;
            if (o.generation != c.generation() || (o.solved && o.lambda != lambdaOf(o.generation))) {
                if (stale++ == 0)
                    first_stale = QStringLiteral("outcome of generation %1 (lambda %2) during %3 (lambda %4)")
                                      .arg(o.generation).arg(o.lambda).arg(c.generation()).arg(lambdaOf(c.generation()));
            }
        });

        std::mt19937 rng(15);
        std::uniform_real_distribution<double> log_lambda(-3, 1);
        qint64 slowest_slot_ns = 0, slowest_cancel_ms = 0;
        int lambda_changes = 0, cancels = 0, restarts = 0, measured_cancels = 0;
        QElapsedTimer clock;
        for (int i = 0; i < 1000; ++i) {
            const unsigned op = rng() % 3;
            lambdaOf(c.generation());  // one the timer issued during the last wait, with the settings unchanged
            clock.start();
            if (op == 0) {
                c.setLambda(std::pow(10.0, log_lambda(rng)));
                ++lambda_changes;
            } else if (op == 1) {
                c.reconstruct();
                ++restarts;
            } else {
                c.cancel();
                ++cancels;
            }
            slowest_slot_ns = std::max(slowest_slot_ns, clock.nsecsElapsed());
            lambdaOf(c.generation());
            if (op == 2 && i % 50 == 0) {
                // Now and then a cancel is left to land: the job must end within the bound.
                QElapsedTimer landed;
                landed.start();
                QTRY_VERIFY_WITH_TIMEOUT(!isActive(c.state()), int(kSlowestCancelMs) * 4);
                slowest_cancel_ms = std::max(slowest_cancel_ms, landed.elapsed());
                ++measured_cancels;
            } else {
                QTest::qWait(int(rng() % 5));
            }
        }
        QVERIFY2(stale == 0, qPrintable(QStringLiteral("%1 stale deliveries; first: %2").arg(stale).arg(first_stale)));
        QVERIFY2(slowest_slot_ns / 1000000 < kSlowestSlotMs,
                 qPrintable(QStringLiteral("a slot blocked the GUI thread for %1 ms").arg(slowest_slot_ns / 1000000)));
        QVERIFY2(slowest_cancel_ms < kSlowestCancelMs,
                 qPrintable(QStringLiteral("a cancel took %1 ms to land").arg(slowest_cancel_ms)));
        QVERIFY(lambda_changes > 250 && cancels > 250 && restarts > 250 && measured_cancels > 0);
        QVERIFY(deliveries > 0 && outcomes > 0);  // solves did run and report between the requests
        qInfo("%d lambda changes, %d cancels, %d restarts; %d iterations and %d outcomes delivered; slowest slot "
              "%.2f ms, slowest cancel %lld ms",
              lambda_changes, cancels, restarts, deliveries, outcomes, slowest_slot_ns / 1e6,
              static_cast<long long>(slowest_cancel_ms));

        // The last request: a solve from zero at a lambda of its own. What is shown, once it
        // completes and for a while after, is exactly that solve's image.
        const double last_lambda = 0.37;
        c.setLambda(last_lambda);
        c.reconstruct();
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QSignalSpy later(&c.layers(), &ImageLayers::layerChanged);
        QTest::qWait(300);
        QCOMPARE(later.count(), 0);

        recon::ReconstructionSession engine(recon::createCpuBackend(c.settings().precision));
        engine.setDataset(c.dataset());
        recon::SolveOptions o;
        o.regularizer = c.settings().regularizer;
        o.lambda = last_lambda;
        o.iterations = c.settings().iterations;
        const recon::ComplexArray expected = engine.solve(o).image;
        const LayerImage* shown = c.layers().get(Layer::Iterative);
        QVERIFY(shown && shown->volume.data);
        const recon::ComplexArray& got = *shown->volume.data;
        QCOMPARE(got.size(), expected.size());
        double diff = 0, norm = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            diff += std::norm(got[i] - expected[i]);
            norm += std::norm(expected[i]);
        }
        QVERIFY2(norm > 0 && std::sqrt(diff / norm) < 1e-6,
                 qPrintable(QStringLiteral("the image shown differs from the last request's by %1").arg(std::sqrt(diff / norm))));
        QCOMPARE(c.totalIterations(), c.settings().iterations);  // from zero, not warm
        QVERIFY(!c.warmStart());
    }
};

QTEST_GUILESS_MAIN(TestControllerStress)
#include "test_controller_stress.moc"
