// The comparison grid's slice views driven by QTest mouse and keyboard events:
// every view follows the one view model, so a wheel, drag or click in any view
// changes what all of them show.
#include <QSignalSpy>
#include <QTest>

#include "ui/comparison_grid.hpp"
#include "ui/readout_table.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/slice_view.hpp"
#include "ui/slice_view_model.hpp"
#include "ui_test_support.hpp"
#include "widget_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {
// The image views (the difference views have offsets so every layer differs).
constexpr std::array<Layer, 7> kViews = kAllLayers;
}

class TestSliceViews : public QObject {
    Q_OBJECT

    ImageLayers* layers_ = nullptr;
    SliceViewModel* model_ = nullptr;
    ComparisonGrid* grid_ = nullptr;
    const recon::Grid volume_grid_ = recon::Grid::make3D(16, 12, 8);

    double expectedValue(Layer l, const std::array<int, 3>& v) const {
        return codedValue(v[0], v[1], v[2]) + int(l);
    }
    QImage grabView(SliceView* v) const { return v->grab().toImage(); }

private slots:
    void init() {
        layers_ = new ImageLayers;
        model_ = new SliceViewModel;
        layers_->reset(volume_grid_);
        for (Layer l : kAllLayers) layers_->set({l, {codedVolume(volume_grid_, int(l)), std::nullopt}});
        model_->setGrid(volume_grid_, codedValue(15, 11, 7) + kLayerCount);
        grid_ = new ComparisonGrid(layers_, model_);
        grid_->resize(1200, 640);
        grid_->show();
        QVERIFY(QTest::qWaitForWindowExposed(grid_));
    }
    void cleanup() {
        delete grid_;
        delete model_;
        delete layers_;
    }

    void everyViewShowsItsLayerAtTheCursor() {
        for (Layer l : kViews) {
            SliceView* v = grid_->view(l);
            QVERIFY(v->cursorValue());
            QCOMPARE(*v->cursorValue(), expectedValue(l, model_->cursor()));
        }
    }

    void wheelChangesTheSliceInAllViews() {
        SliceView* v = grid_->view(Layer::Iterative);
        const int before = model_->slice();
        QSignalSpy cursor(model_, &SliceViewModel::cursorChanged);
        wheel(v, v->rect().center(), +2);
        QCOMPARE(model_->slice(), before + 2);
        QCOMPARE(cursor.count(), 1);
        for (Layer l : kViews) QCOMPARE(*grid_->view(l)->cursorValue(), expectedValue(l, model_->cursor()));
        wheel(grid_->view(Layer::Truth), grid_->view(Layer::Truth)->rect().center(), -5);
        QCOMPARE(model_->slice(), before - 3);
        wheel(v, v->rect().center(), -100);
        QCOMPARE(model_->slice(), 0);  // clamped
        // The pixels follow: the truth view's pixel at a voxel is the grey of that voxel's slice.
        model_->setWindowLevel(WindowLevel::fromRange(0, codedValue(0, 0, 7)));
        SliceView* truth = grid_->view(Layer::Truth);
        const QPoint at = truth->widgetPosition(2, 3).toPoint();
        const int grey0 = qGray(grabView(truth).pixel(at));
        wheel(truth, truth->rect().center(), +7);
        const int grey7 = qGray(grabView(truth).pixel(at));
        QVERIFY2(grey7 > grey0 + 200, qPrintable(QStringLiteral("%1 -> %2").arg(grey0).arg(grey7)));
    }

    void ctrlWheelZoomsAllViews() {
        SliceView* v = grid_->view(Layer::GriddingKaiserBessel);
        const QPointF before = grid_->view(Layer::Truth)->widgetPosition(0, 0);
        wheel(v, v->rect().center(), +2, Qt::ControlModifier);
        QCOMPARE(model_->zoom(), 1.25 * 1.25);
        QCOMPARE(model_->slice(), volume_grid_.n[2] / 2);  // the slice did not move
        // Zoom is about the centre: the first pixel moved away from it in every view.
        const QPointF after = grid_->view(Layer::Truth)->widgetPosition(0, 0);
        QVERIFY(after.x() < before.x() && after.y() < before.y());
    }

    void rightDragChangesWindowLevelForAllViews() {
        SliceView* v = grid_->view(Layer::Iterative);
        for (Layer l : kViews) grid_->view(l)->setDifferenceGain(1);  // amplified differences would saturate here
        const WindowLevel before = model_->windowLevel();
        std::map<Layer, QRgb> pixels;
        for (Layer l : kViews) pixels[l] = grabView(grid_->view(l)).pixel(grid_->view(l)->widgetPosition(8, 6).toPoint());
        drag(v, Qt::RightButton, v->rect().center(), v->rect().center() + QPoint(-40, -60));
        const double step = model_->intensityMax() / 500;
        QVERIFY(std::abs(model_->windowLevel().window - (before.window - 40 * step)) < 1e-6 * before.window);
        QVERIFY(std::abs(model_->windowLevel().level - (before.level - 60 * step)) < 1e-6 * before.window);
        // Narrower window and lower level: the same voxels are brighter in every view.
        for (Layer l : kViews) {
            const QRgb now = grabView(grid_->view(l)).pixel(grid_->view(l)->widgetPosition(8, 6).toPoint());
            QVERIFY2(qGray(now) > qGray(pixels[l]), qPrintable(layerTitle(l)));
        }
        QCOMPARE(model_->slice(), volume_grid_.n[2] / 2);  // a W/L drag is not a slice change
    }

    void clickSetsTheCursorInAllViews() {
        SliceView* v = grid_->view(Layer::GriddingTrilinear);
        const QPoint at = v->widgetPosition(11, 2).toPoint();
        QTest::mouseClick(v, Qt::LeftButton, Qt::NoModifier, at);
        const std::array<int, 3> expected{11, 2, volume_grid_.n[2] / 2};
        QCOMPARE(model_->cursor(), expected);
        for (Layer l : kViews) {
            QCOMPARE(*grid_->view(l)->cursorValue(), expectedValue(l, expected));
            // The crosshair passes through that voxel in every view.
            const QPointF c = grid_->view(l)->widgetPosition(11, 2);
            const QRgb cross = grabView(grid_->view(l)).pixel(QPoint(int(c.x()), int(c.y()) - 30));
            QVERIFY2(qRed(cross) > qBlue(cross) + 60, qPrintable(layerTitle(l)));  // the yellow line
        }
        // The readout table shows the value of each image there.
        QCOMPARE(grid_->readouts()->cell(Layer::Iterative, 2),
                 formatReadout(expectedValue(Layer::Iterative, expected), model_->intensityMax()));
        // A click outside the image leaves the cursor alone.
        QTest::mouseClick(v, Qt::LeftButton, Qt::NoModifier, QPoint(1, 1));
        QCOMPARE(model_->cursor(), expected);
    }

    void dragsPanWithMiddleOrShiftLeft() {
        SliceView* v = grid_->view(Layer::Truth);
        const QPointF before = v->widgetPosition(0, 0);
        drag(v, Qt::MiddleButton, QPoint(100, 100), QPoint(130, 110));
        QPointF after = v->widgetPosition(0, 0);
        QVERIFY(std::abs(after.x() - before.x() - 30) < 1 && std::abs(after.y() - before.y() - 10) < 1);
        // Linked: another view panned by the same amount of its own pixels.
        const std::array<int, 3> cursor = model_->cursor();
        drag(v, Qt::LeftButton, QPoint(130, 110), QPoint(100, 100), Qt::ShiftModifier);
        after = v->widgetPosition(0, 0);
        QVERIFY(std::abs(after.x() - before.x()) < 1 && std::abs(after.y() - before.y()) < 1);
        QCOMPARE(model_->cursor(), cursor);  // shift-drag pans, it does not move the cursor
    }

    void keyboardStepsSlicesZoomsAndResets() {
        SliceView* v = grid_->view(Layer::Iterative);
        v->setFocus();
        const int before = model_->slice();
        QTest::keyClick(v, Qt::Key_Up);
        QTest::keyClick(v, Qt::Key_PageUp);
        QCOMPARE(model_->slice(), before + 2);
        QTest::keyClick(v, Qt::Key_Down);
        QCOMPARE(model_->slice(), before + 1);
        QTest::keyClick(v, Qt::Key_Plus);
        QCOMPARE(model_->zoom(), 1.25);
        QTest::keyClick(v, Qt::Key_R);
        QCOMPARE(model_->zoom(), 1.0);
        QTest::keyClick(v, Qt::Key_A);  // auto W/L from this view's slice
        const WindowLevel wl = model_->windowLevel();
        QVERIFY(wl.low() >= codedValue(0, 0, model_->slice()) && wl.high() <= codedValue(15, 11, model_->slice()) + kLayerCount);
    }

    void orientationChangeShowsTheOtherPlane() {
        model_->setOrientation(Orientation::Sagittal);
        SliceView* v = grid_->view(Layer::Truth);
        // Sagittal: columns run along y, rows along z (superior up).
        QTest::mouseClick(v, Qt::LeftButton, Qt::NoModifier, v->widgetPosition(3, 0).toPoint());
        QCOMPARE(model_->cursor(), (std::array<int, 3>{volume_grid_.n[0] / 2, 3, volume_grid_.n[2] - 1}));
        wheel(v, v->rect().center(), +1);
        QCOMPARE(model_->cursor()[0], volume_grid_.n[0] / 2 + 1);  // the wheel moves along x now
    }

    void differenceMapsAreAmplifiedForDisplayOnly() {
        SliceView* diff = grid_->view(Layer::DifferenceIterative);
        diff->setDifferenceGain(3);
        // Window [0, 765]: a value v is drawn at grey v / 3, so at grey v when amplified 3x.
        model_->setWindowLevel(WindowLevel::fromRange(0, 765));
        model_->setCursor({8, 0, 0});
        const double raw = expectedValue(Layer::DifferenceIterative, model_->cursor());  // 14
        QCOMPARE(*diff->cursorValue(), raw);  // the readout is the true value
        const QPoint inside = diff->widgetPosition(8, 0).toPoint() + QPoint(4, 4);  // off the crosshair
        QVERIFY(std::abs(qGray(diff->grab().toImage().pixel(inside)) - raw) <= 1);
        QVERIFY(diff->title().contains("x3"));
        QVERIFY(!grid_->view(Layer::Iterative)->title().contains("(x"));
    }

    void viewsWaitForImagesThatAreNotThereYet() {
        layers_->reset(volume_grid_);  // a new data set: nothing reconstructed yet
        SliceView* v = grid_->view(Layer::Iterative);
        QVERIFY(!v->cursorValue());
        grabView(v);  // draws the "waiting" note without touching an image
        layers_->set({Layer::Iterative, {codedVolume(volume_grid_), recon::Quality{0, 31.5, 2.25}}});
        QVERIFY(v->cursorValue());
        QVERIFY(v->title().contains("31.50 dB"));
        QCOMPARE(grid_->readouts()->cell(Layer::Iterative, 0), QStringLiteral("31.50"));
        QCOMPARE(grid_->readouts()->cell(Layer::Iterative, 1), QStringLiteral("2.25"));
    }
};

QTEST_MAIN(TestSliceViews)
#include "test_slice_views.moc"
