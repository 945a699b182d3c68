// The pictures docs/GUI.md shows (issue 16), made from a real session at
// 1366x768 and 1920x1080: a lambda pinned and compared with another, ROI
// statistics and the profile through the cursor. Each state is checked before
// it is saved (build/screenshots/gui-*.png; copied to docs/images by hand).
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
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

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
        MainWindowOptions o;
        o.enable_3d = false;
        o.persist_settings = false;
        MainWindow w(o);
        w.resize(size);
        w.show();
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
};

QTEST_MAIN(TestDocsScreenshots)
#include "test_docs_screenshots.moc"
