// The pictures docs/GUI.md and the README show, made from a real session: a lambda
// pinned and compared with another, ROI statistics and the profile through the
// cursor (issue 16, at 1366x768 and 1920x1080), and total variation against the
// best quadratic prior and gridding (issue 13). Each state is checked before it is
// saved (build/screenshots/gui-*.png; copied to docs/images by hand).
#include <QDockWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

#include "ui/comparison_grid.hpp"
#include "ui/main_window.hpp"
#include "ui/measurement_panel.hpp"
#include "ui/measurements.hpp"
#include "ui/pin_panel.hpp"
#include "ui/slice_view.hpp"
#include "main_window_test_support.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

double lastPsnr(const ReconstructionController& c) { return c.history().empty() ? 0.0 : c.history().back().psnr_db; }

}  // namespace

class TestDocsScreenshots : public QObject {
    Q_OBJECT
private slots:
    void pinnedComparisonRoisAndProfile_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }
    void pinnedComparisonRoisAndProfile() {
        QFETCH(QSize, size);
        const auto window = showMainWindow(size);
        MainWindow& w = *window;
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ReconSettings s = w.controller()->settings();
        s.iterations = 15;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        w.controller()->setDebounceInterval(10);
        w.openDemo(QStringLiteral("radial-2d-noisy"));  // tuned lambda 30, anatomical prior, 30 dB SNR
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QVERIFY(w.pinPanel()->pin()->pin(QStringLiteral("lambda 30")));
        // A much weaker lambda: noisier, and the difference map shows where.
        w.controller()->setLambda(0.3);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()) && w.controller()->warmStart(), kSolveTimeoutMs);
        QVERIFY(w.controller()->layers().has(Layer::DifferencePinned));

        // ROI A inside the phantom (grey matter), B in the background (noise only).
        w.measurements()->setRoi(0, {QRect(QPoint(50, 70), QPoint(76, 88)), RoiShape::Ellipse});
        w.measurements()->setRoi(1, {QRect(QPoint(2, 2), QPoint(20, 20)), RoiShape::Rectangle});
        w.viewModel()->setCursor({64, 78, 0});
        QVERIFY(!w.measurementPanel()->table()->item(3, 0)->text().isEmpty());

        const QString tag = QStringLiteral("%1x%2").arg(size.width()).arg(size.height());
        auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
        tabs->setCurrentWidget(w.pinPanel());
        w.findChild<QDockWidget*>(QStringLiteral("measurement-dock"))->raise();
        QTest::qWait(100);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/gui-pinned-measurements-%1.png").arg(tag)));
        tabs->setCurrentWidget(w.comparison());
        QTest::qWait(100);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/gui-compare-rois-%1.png").arg(tag)));
    }

    // radial-2d-noisy: the best quadratic prior without a reference (finite differences at the
    // sweep's best lambda, README "Compressed sensing on the 2D demo cases") pinned, then total
    // variation at its sweep's best lambda; the Compare tab shows TV beside both griddings.
    void totalVariationAgainstQuadraticAndGridding() {
        const auto window = showMainWindow(QSize(1366, 768));
        MainWindow& w = *window;
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ReconSettings s = w.controller()->settings();
        s.iterations = 60;
        s.backend = recon::BackendChoice::Cpu;
        s.regularizer = recon::RegularizerKind::FiniteDifference;
        s.lambda = 0.3;
        w.controller()->setSettings(s);
        w.controller()->setDebounceInterval(10);
        w.openDemo(QStringLiteral("radial-2d-noisy"), false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()) && !w.controller()->history().empty(), kSolveTimeoutMs);
        const double quadratic = lastPsnr(*w.controller());
        QVERIFY(w.pinPanel()->pin()->pin(QStringLiteral("finite differences, lambda 0.3")));

        s = w.controller()->settings();
        s.regularizer = recon::RegularizerKind::TotalVariation;
        s.lambda = 0.2;
        s.iterations = 200;
        w.controller()->setSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()) && w.controller()->outerIteration() > 0 &&
                                     w.controller()->settings().regularizer == recon::RegularizerKind::TotalVariation,
                                 kSolveTimeoutMs);
        const double tv = lastPsnr(*w.controller());
        qInfo("radial-2d-noisy: finite differences %.2f dB, total variation %.2f dB", quadratic, tv);
        // Measured 24.7 and 34.9 dB (README); the margin asserted leaves half of it.
        QVERIFY2(tv > quadratic + 5.0, qPrintable(QStringLiteral("TV %1 dB, fd %2 dB").arg(tv).arg(quadratic)));
        QVERIFY(w.controller()->layers().has(Layer::DifferencePinned));

        auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
        tabs->setCurrentWidget(w.comparison());
        QTest::qWait(100);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/gui-tv-compare-1366x768.png")));
        tabs->setCurrentWidget(w.pinPanel());
        QTest::qWait(100);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/gui-tv-pinned-fd-1366x768.png")));
    }
};

QTEST_MAIN(TestDocsScreenshots)
#include "test_docs_screenshots.moc"
