// Measurements (issue 16, item 6): ROI statistics on known values (rectangle and
// ellipse), SNR and contrast, the row profile; in the window, Ctrl / Alt drags
// in any view set ROI A / B for every view, the table shows each image's
// statistics and the profile plot each image's row through the cursor.
#include <QAbstractSeries>
#include <QChart>
#include <QLineSeries>
#include <QTableWidget>
#include <QTest>

#include "ui/comparison_grid.hpp"
#include "ui/main_window.hpp"
#include "ui/measurement_panel.hpp"
#include "ui/measurements.hpp"
#include "ui/slice_view.hpp"
#include "ui_test_support.hpp"
#include "widget_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

// value = column + 10 row
SliceData ramp(int width, int height) {
    SliceData s;
    s.width = width;
    s.height = height;
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c) s.values.push_back(float(c + 10 * r));
    return s;
}

}  // namespace

class TestMeasurements : public QObject {
    Q_OBJECT
private slots:
    void statisticsOfKnownValues() {
        const SliceData s = ramp(8, 6);
        const RoiStats r = roiStats(s, {QRect(QPoint(2, 1), QPoint(4, 2)), RoiShape::Rectangle});  // columns 2-4, rows 1-2
        QCOMPARE(r.voxels, 6);
        QCOMPARE(r.mean, 18.0);  // (12+13+14+22+23+24)/6
        QCOMPARE(r.min, 12.0);
        QCOMPARE(r.max, 24.0);
        QVERIFY(std::abs(r.sd - std::sqrt((36 + 25 + 16 + 16 + 25 + 36) / 5.0)) < 1e-12);
        // The ellipse inscribed in a 5x5 square keeps 21 of its 25 voxels (not the corners).
        const RoiStats e = roiStats(ramp(9, 9), {QRect(2, 2, 5, 5), RoiShape::Ellipse});
        QCOMPARE(e.voxels, 21);
        QCOMPARE(e.mean, 4.0 + 10 * 4.0);  // symmetric about the centre voxel (4, 4)
        RoiStats a, b;
        a.mean = 30;
        b.mean = 10;
        b.sd = 2;
        QCOMPARE(roiSnr(a, b), 15.0);
        QCOMPARE(roiContrast(a, b), 0.5);
        QCOMPARE(rowProfile(s, 2), (std::vector<double>{20, 21, 22, 23, 24, 25, 26, 27}));
        QVERIFY(rowProfile(s, 6).empty());
    }

    void roisAreSharedAndMeasuredInEveryImage() {
        MainWindowOptions o;
        o.enable_3d = false;
        o.persist_settings = false;
        MainWindow w(o);
        w.resize(1600, 1000);
        w.show();
        ReconSettings s = w.controller()->settings();
        s.iterations = 3;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        w.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        SliceView* v = w.comparison()->view(Layer::Iterative);
        drag(v, Qt::LeftButton, v->widgetPosition(20, 20).toPoint(), v->widgetPosition(27, 26).toPoint(), Qt::ControlModifier);
        drag(w.comparison()->view(Layer::Truth), Qt::LeftButton, w.comparison()->view(Layer::Truth)->widgetPosition(1, 1).toPoint(),
             w.comparison()->view(Layer::Truth)->widgetPosition(6, 6).toPoint(), Qt::AltModifier);
        QVERIFY(w.measurements()->roi(0) && w.measurements()->roi(1));
        QCOMPARE(w.measurements()->roi(0)->pixels, QRect(QPoint(20, 20), QPoint(27, 26)));
        QCOMPARE(w.measurements()->roi(1)->pixels, QRect(QPoint(1, 1), QPoint(6, 6)));
        QCOMPARE(w.viewModel()->cursor()[0], 24);  // ROI drags leave the cursor where it was (the centre)

        // The table row of each image: its own statistics in ROI A and B.
        const auto& images = MeasurementPanel::images();
        const int row = int(std::find(images.begin(), images.end(), Layer::Iterative) - images.begin());
        const SliceData slice = extractSlice(w.controller()->layers().get(Layer::Iterative)->volume, w.viewModel()->orientation(),
                                             w.viewModel()->slice(), w.viewModel()->displayMode());
        const RoiStats a = roiStats(slice, *w.measurements()->roi(0)), b = roiStats(slice, *w.measurements()->roi(1));
        QTableWidget* t = w.measurementPanel()->table();
        QCOMPARE(t->item(row, 0)->text(), formatReadout(a.mean, w.viewModel()->intensityMax()));
        QCOMPARE(t->item(row, 5)->text(), formatReadout(b.sd, w.viewModel()->intensityMax()));
        QCOMPARE(t->item(row, 6)->text(), QString::number(roiSnr(a, b), 'f', 1));
        QVERIFY(!t->item(0, 0)->text().isEmpty());  // the truth measured too

        // The profile: every image's row through the cursor, one point per column.
        const auto series = w.measurementPanel()->profileChart()->series();
        auto* line = static_cast<QLineSeries*>(series[row]);
        QCOMPARE(line->count(), slice.width);
        const int cursor_row = pixelOf(w.viewModel()->grid(), w.viewModel()->orientation(), w.viewModel()->cursor()).row;
        for (int c = 0; c < slice.width; c += 7) QCOMPARE(float(line->at(c).y()), slice.at(c, cursor_row));
        // A distance: Ctrl + Alt drag, in mm (this grid: 240 mm / 48 = 5 mm voxels).
        drag(v, Qt::LeftButton, v->widgetPosition(10, 10).toPoint(), v->widgetPosition(13, 14).toPoint(),
             Qt::ControlModifier | Qt::AltModifier);
        QVERIFY(w.measurements()->ruler());
        QCOMPARE(w.measurements()->ruler()->to, QPoint(13, 14));
        QVERIFY(std::abs(w.measurements()->rulerMillimetres() - 25.0) < 1e-9);  // (3, 4) voxels of 5 mm
        QCOMPARE(w.measurements()->roi(0)->pixels, QRect(QPoint(20, 20), QPoint(27, 26)));  // the ROIs stay
        // Cleared ROIs leave no numbers behind.
        w.measurements()->clearRois();
        QVERIFY(t->item(row, 0)->text().isEmpty());
    }
};

QTEST_MAIN(TestMeasurements)
#include "test_measurements.moc"
