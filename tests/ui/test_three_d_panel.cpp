// The 3D tab inside the workstation (OpenGL, so under Xvfb): the VTK views
// follow the shared view model (images, window/level, cursor) and a pick in 3D
// moves the cursor of every slice view.
#include <QComboBox>
#include <QSpinBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>

#include "ui/main_window.hpp"
#include "ui/three_d_panel.hpp"
#include "ui/vtk/trajectory_view.hpp"
#include "ui/vtk/volume_view.hpp"
#include "ui/vtk/vtk_widget.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using reconstudio::vtkviews::TrajectoryView;
using namespace studio::testing;
using reconstudio::vtkviews::VolumeView;

class TestThreeDPanel : public QObject {
    Q_OBJECT
private slots:
    void followsTheModelsAndMovesTheCursor() {
        MainWindowOptions o;
        o.persist_settings = false;
        MainWindow w(o);
        QVERIFY(w.has3D());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ReconSettings s = w.controller()->settings();
        s.iterations = 4;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(!isActive(w.controller()->state()) && w.controller()->state() != JobState::Idle,
                                 kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Completed));

        auto* panel = w.findChild<ThreeDPanel*>();
        QVERIFY(panel);
        auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
        tabs->setCurrentWidget(panel);
        QTRY_VERIFY(panel->volumeView(1)->hasVolume());
        QVERIFY(panel->volumeView(0)->hasVolume());
        QCOMPARE(panel->volumeView(1)->grid().n, w.controller()->layers().grid().n);

        // Window/level and cursor follow the slice views' model.
        w.viewModel()->setWindowLevel(WindowLevel::fromRange(0.05, 0.45));
        for (int side = 0; side < 2; ++side) {
            QVERIFY(std::abs(panel->volumeView(side)->window() - 0.4) < 1e-12);
            QVERIFY(std::abs(panel->volumeView(side)->level() - 0.25) < 1e-12);
        }
        w.viewModel()->setCursor({7, 30, 0});
        QCOMPARE(panel->volumeView(0)->cursorVoxel(), (std::array<int, 3>{7, 30, 0}));
        // A pick in 3D moves the one shared cursor.
        emit panel->volumeView(1)->cursorPicked(11, 12, 0);
        QCOMPARE(w.viewModel()->cursor(), (std::array<int, 3>{11, 12, 0}));
        QCOMPARE(panel->volumeView(0)->cursorVoxel(), (std::array<int, 3>{11, 12, 0}));

        // The trajectory of the loaded data, every sample of this small case drawn.
        panel->findChild<QTabWidget*>()->setCurrentIndex(1);
        QTRY_COMPARE(panel->trajectoryView()->totalPoints(), std::size_t(w.controller()->dataset()->samples()));
        QVERIFY(panel->trajectoryView()->drawnPoints() > 0);

        // Issue 16, item 10: colour by density works with the weights gridding computed
        // (this data set has none of its own).
        QVERIFY(w.controller()->dataset()->density.empty());
        QVERIFY(panel->colourByBox()->isEnabled());
        panel->colourByBox()->setCurrentIndex(1);
        QCOMPARE(int(panel->trajectoryView()->colourBy()), int(TrajectoryView::ColourBy::Density));

        // The window renders (a non-blank 3D view) and is saved for a look.
        tabs->setCurrentIndex(0);
        tabs->setCurrentWidget(panel);
        panel->findChild<QTabWidget*>()->setCurrentIndex(0);
        const QImage shot = panel->volumeView(1)->vtkWidget()->grabImage();
        QVERIFY(!shot.isNull());
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/workstation-3d.png")));

        // Issue 16, item 10: the slice planes can be hidden or made translucent...
        panel->planesBox()->setCurrentIndex(panel->planesBox()->findText(QStringLiteral("Planes hidden")));
        for (int side = 0; side < 2; ++side) QVERIFY(!panel->volumeView(side)->slicePlanesVisible());
        panel->planesBox()->setCurrentIndex(panel->planesBox()->findText(QStringLiteral("Planes translucent")));
        for (int side = 0; side < 2; ++side) {
            QVERIFY(panel->volumeView(side)->slicePlanesVisible());
            QVERIFY(panel->volumeView(side)->slicePlaneOpacity() < 1);
        }
        // ...and the 3D views draw in the chosen colour map: grey has no hue, hot has red.
        auto hue = [panel] {
            const QImage image = panel->volumeView(1)->vtkWidget()->grabImage();
            int most = 0;
            for (int y = 0; y < image.height(); y += 3)
                for (int x = 0; x < image.width(); x += 3) {
                    const QRgb p = image.pixel(x, y);
                    most = std::max(most, qRed(p) - qBlue(p));
                }
            return most;
        };
        w.viewModel()->setColorMap(ColorMap::Gray);
        QTest::qWait(50);
        const int grey = hue();
        w.viewModel()->setColorMap(ColorMap::Hot);
        QTest::qWait(50);
        const int hot = hue();
        QVERIFY2(hot > grey + 60, qPrintable(QStringLiteral("red - blue: grey %1, hot %2").arg(grey).arg(hot)));
    }

    // CT (issue 18): the source orbit, the detector at the chosen view and the rays to its
    // corners are drawn around the volumes; none for MR.
    void ctScanAroundTheVolume() {
        MainWindowOptions o;
        o.persist_settings = false;
        MainWindow w(o);
        QVERIFY(w.has3D());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ReconSettings s = w.controller()->settings();
        s.iterations = 10;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        w.openDemo(QStringLiteral("ct-2d-sparse"));
        QTRY_VERIFY_WITH_TIMEOUT(!isActive(w.controller()->state()) && w.controller()->state() != JobState::Idle,
                                 kSolveTimeoutMs);
        auto* panel = w.findChild<ThreeDPanel*>();
        auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
        tabs->setCurrentWidget(panel);
        QTRY_VERIFY(panel->volumeView(1)->hasVolume());
        QCOMPARE(panel->volumeView(0)->sceneLineCount(), 6);  // orbit, detector, 4 rays
        QVERIFY(panel->ctViewBox()->isVisible());
        QCOMPARE(panel->ctViewBox()->maximum(), 59);
        panel->ctViewBox()->setValue(10);  // 60 degrees
        QCOMPARE(panel->volumeView(1)->sceneLineCount(), 6);
        panel->volumeView(0)->resetCamera();
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/ct-3d.png")));

        w.controller()->setAutoReconstruct(false);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->modality() == Modality::Mr, kSolveTimeoutMs);
        QCOMPARE(panel->volumeView(0)->sceneLineCount(), 0);
        QVERIFY(!panel->ctViewBox()->isVisible());
    }
};

int main(int argc, char** argv) {
    reconstudio::vtkviews::VtkWidget::setDefaultSurfaceFormat();  // before QApplication
    QApplication app(argc, argv);
    TestThreeDPanel t;
    return QTest::qExec(&t, argc, argv);
}
#include "test_three_d_panel.moc"
