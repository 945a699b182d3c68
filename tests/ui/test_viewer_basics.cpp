// Viewer basics (issue 16, item 5): window/level as editable numbers with the
// preset box following manual changes; orientation letters per orientation;
// a scale bar whose length on screen is its length in mm.
#include <QComboBox>
#include <QLineEdit>
#include <QTest>

#include "ui/comparison_grid.hpp"
#include "ui/main_window.hpp"
#include "ui/slice_view.hpp"
#include "ui_test_support.hpp"
#include "widget_test_support.hpp"

using namespace studio;
using namespace studio::testing;

class TestViewerBasics : public QObject {
    Q_OBJECT
private slots:
    void windowLevelNumbersAndPresets() {
        MainWindowOptions o;
        o.enable_3d = false;
        o.persist_settings = false;
        MainWindow w(o);
        w.resize(1400, 900);
        w.show();
        w.viewModel()->setGrid(recon::Grid::make2D(32, 32), 2.0);
        QCOMPARE(w.presetBox()->currentText(), QStringLiteral("Full range"));
        QCOMPARE(w.windowField()->text(), formatReadout(2.0, 2.0));
        QCOMPARE(w.levelField()->text(), formatReadout(1.0, 2.0));

        w.viewModel()->applyPreset(QStringLiteral("Soft tissue"));
        QCOMPARE(w.presetBox()->currentText(), QStringLiteral("Soft tissue"));
        QCOMPARE(w.windowField()->text(), formatReadout(1.0, 2.0));
        // A manual change (a right drag does this) is no preset any more...
        w.viewModel()->dragWindowLevel(-20, 10);
        QCOMPARE(w.presetBox()->currentText(), QStringLiteral("Custom"));
        QCOMPARE(w.windowField()->text(), formatReadout(w.viewModel()->windowLevel().window, 2.0));
        // ...and typed numbers set the window and level of every view.
        w.windowField()->setText(QStringLiteral("0.8"));
        w.levelField()->setText(QStringLiteral("0.6"));
        QMetaObject::invokeMethod(w.levelField(), "editingFinished");
        QCOMPARE(w.viewModel()->windowLevel().window, 0.8);
        QCOMPARE(w.viewModel()->windowLevel().level, 0.6);
        w.viewModel()->applyPreset(QStringLiteral("Full range"));
        QCOMPARE(w.presetBox()->currentText(), QStringLiteral("Full range"));
        QCOMPARE(w.presetBox()->findText(QStringLiteral("Custom")), -1);
    }

    void orientationLettersAndScaleBar() {
        ImageLayers layers;
        SliceViewModel model;
        recon::Grid g = recon::Grid::make3D(40, 30, 20);
        g.fov_mm = {200.0, 150.0, 100.0};  // 5 mm voxels
        model.setGrid(g, 1.0);
        layers.reset(g);
        layers.set({Layer::Iterative, {codedVolume(g), std::nullopt}});
        SliceView v(Layer::Iterative, &layers, &model);
        v.resize(400, 320);
        v.show();
        QCOMPARE(v.orientationLabels(), (std::array<QString, 4>{"L", "R", "P", "A"}));
        model.setOrientation(Orientation::Coronal);
        QCOMPARE(v.orientationLabels(), (std::array<QString, 4>{"L", "R", "S", "I"}));
        model.setOrientation(Orientation::Sagittal);
        QCOMPARE(v.orientationLabels(), (std::array<QString, 4>{"P", "A", "S", "I"}));
        // The bar's pixels: its mm over 5 mm per voxel times the screen pixels per voxel.
        const auto [mm, pixels] = v.scaleBar();
        const double pixels_per_voxel = v.widgetPosition(1, 0).x() - v.widgetPosition(0, 0).x();
        QVERIFY(std::abs(pixels - mm / (150.0 / 30) * pixels_per_voxel) < 1e-9);
        QVERIFY(pixels <= v.width() / 5.0 + 1e-9 && pixels > v.width() / 15.0);
        QCOMPARE(v.colourBarUnit(), QStringLiteral("a.u."));
        model.setDisplayMode(DisplayMode::Phase);
        QCOMPARE(v.colourBarUnit(), QStringLiteral("rad"));
        model.setZoom(2.0);
        QVERIFY(v.scaleBar().first < mm || v.scaleBar().second > pixels);  // follows the zoom
    }
};

QTEST_MAIN(TestViewerBasics)
#include "test_viewer_basics.moc"
