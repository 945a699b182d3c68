// VolumeView renders real content: the phantom covers the pixels its outer
// ellipsoid projects to, window/level and MIP change what is drawn, the slice
// planes move with the cursor, clicks pick the voxel under the mouse, and
// linked views turn together.
#include <QApplication>
#include <QSignalSpy>
#include <QtTest>

#include <vtkCamera.h>
#include <vtkRenderer.h>

#include <cmath>

#include "recon/core/errors.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "ui/vtk/volume_view.hpp"
#include "vtk_test_support.hpp"

using reconstudio::vtkviews::VolumeView;
using namespace vtktest;

namespace {

constexpr int kN = 64;

recon::Grid cubeGrid() {
    recon::Grid g = recon::Grid::cube(3, kN);
    g.fov_mm = {256, 256, 256};  // 4 mm voxels
    return g;
}

std::vector<float> phantomMagnitude(const recon::Grid& g) {
    const recon::ComplexArray img = recon::Phantom::sheppLogan3D().image(g, 2);  // 2^3 points per voxel: smooth edges
    std::vector<float> v(img.size());
    for (std::size_t i = 0; i < img.size(); ++i) v[i] = float(std::abs(img[i]));
    return v;
}

// Straight down the z axis (x right, y up on screen), parallel projection, so
// voxel positions map to pixels exactly.
void lookDownZ(VolumeView& view) {
    vtkCamera* cam = view.camera();
    cam->ParallelProjectionOn();
    cam->SetFocalPoint(0, 0, 0);
    cam->SetPosition(0, 0, 1000);
    cam->SetViewUp(0, 1, 0);
    cam->SetParallelScale(150);  // half the view height: 150 mm, the 256 mm volume fits
    view.renderer()->ResetCameraClippingRange();
}

}  // namespace

class TestVolumeView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void phantomCoversItsProjection();
    void windowLevelDrivesBrightness();
    void mipDiffersFromComposite();
    void dragChangesCamera();
    void movingTheCursorMovesThePlanes();
    void clickOnPlanePicksItsVoxel();
    void clickOnVolumePicksItsSurface();
    void linkedViewsShareOneCamera();
    void liveUpdatesKeepCameraAndCursor();
    void badInputIsRejected();
    void screenshots();

private:
    VolumeView* view_ = nullptr;
};

void TestVolumeView::init() {
    view_ = new VolumeView;
    view_->resize(400, 400);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_));
}

void TestVolumeView::cleanup() {
    delete view_;
    view_ = nullptr;
}

void TestVolumeView::phantomCoversItsProjection() {
    const recon::Grid g = cubeGrid();
    view_->setVolume(g, phantomMagnitude(g), "");
    view_->setSlicePlanesVisible(false);
    view_->setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    view_->setWindowLevel(0.5, 0.25);  // brain (0.2) at 40 % grey, skull (1.0) white
    lookDownZ(*view_);
    const QImage img = frame(view_->vtkWidget());
    const QRgb bg = backgroundOf(view_->renderer());
    const auto isBackground = [&](QRgb p) { return colourDistance(p, bg) < 16; };

    // The outer ellipsoid of the modified 3D Shepp-Logan: semi-axes 0.69 x 0.92 (of the
    // half-FOV) in x and y, its bright skull rim the maximum along z. In mm: 0.345 and 0.46 FOV.
    const double ax = 0.345 * 256, ay = 0.46 * 256;
    const QPointF c = project(view_->vtkWidget(), {0, 0, 0});
    const QPointF ex = project(view_->vtkWidget(), {ax, 0, 0});
    const QPointF ey = project(view_->vtkWidget(), {0, ay, 0});
    const double rx = std::abs(ex.x() - c.x()), ry = std::abs(ey.y() - c.y());
    QVERIFY(rx > 50 && ry > 70);  // the volume fills a good part of the view
    int inside = 0, insideDrawn = 0, outside = 0, outsideEmpty = 0;
    const double dpr = view_->vtkWidget()->devicePixelRatioF();
    const QPointF box = project(view_->vtkWidget(), {128, 128, 0});
    for (int y = 0; y < img.height(); ++y) {
        for (int x = 0; x < img.width(); ++x) {
            const double u = (x / dpr - c.x()) / rx, v = (y / dpr - c.y()) / ry;
            const double r = std::hypot(u, v);
            const bool inBox = std::abs(x / dpr - c.x()) < std::abs(box.x() - c.x()) - 2 &&
                               std::abs(y / dpr - c.y()) < std::abs(box.y() - c.y()) - 2;
            if (r < 0.9) {
                ++inside;
                insideDrawn += isBackground(img.pixel(x, y)) ? 0 : 1;
            } else if (r > 1.1 && inBox) {
                ++outside;
                outsideEmpty += isBackground(img.pixel(x, y)) ? 1 : 0;
            } else if (!inBox && std::abs(x / dpr - c.x()) > std::abs(box.x() - c.x()) + 3) {
                ++outside;
                outsideEmpty += isBackground(img.pixel(x, y)) ? 1 : 0;
            }
        }
    }
    const double drawn = double(insideDrawn) / inside, empty = double(outsideEmpty) / outside;
    qInfo("inside the ellipse %.1f%% drawn, outside %.1f%% background", 100 * drawn, 100 * empty);
    QVERIFY2(drawn > 0.99, "the phantom should cover its projected outline");
    QVERIFY2(empty > 0.99, "nothing should be drawn outside the phantom (except the outline box)");
    // Every ray through the head crosses at least brain tissue (0.2): clearly lit.
    QVERIFY(qGray(img.pixel(devicePixel(view_->vtkWidget(), c))) > 40);
}

void TestVolumeView::windowLevelDrivesBrightness() {
    const recon::Grid g = cubeGrid();
    // A uniform cube of value 0.5: its MIP grey is the ramp's value at 0.5.
    view_->setVolume(g, makeVolume(g, [](int, int, int) { return 0.5f; }), "");
    view_->setSlicePlanesVisible(false);
    view_->setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    lookDownZ(*view_);
    const QPoint centre = devicePixel(view_->vtkWidget(), project(view_->vtkWidget(), {0, 0, 0}));
    int previous = 256;
    for (double level : {0.2, 0.4, 0.6}) {
        view_->setWindowLevel(1.0, level);
        const int grey = qGray(frame(view_->vtkWidget()).pixel(centre));
        // Expected grey ~ (0.5 - (level - 0.5)) * 255, times the opacity of the same ramp.
        qInfo("level %.1f: grey %d", level, grey);
        QVERIFY2(grey < previous - 20, "raising the level must darken the same value");
        previous = grey;
    }
    // Below the window: invisible.
    view_->setWindowLevel(0.2, 0.9);
    QVERIFY(colourDistance(frame(view_->vtkWidget()).pixel(centre), backgroundOf(view_->renderer())) < 16);
}

void TestVolumeView::mipDiffersFromComposite() {
    const recon::Grid g = cubeGrid();
    view_->setVolume(g, phantomMagnitude(g), "");
    view_->setSlicePlanesVisible(false);
    view_->setWindowLevel(1.0, 0.5);
    view_->setRenderMode(VolumeView::RenderMode::Composite);
    const QImage composite = frame(view_->vtkWidget());
    view_->setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    const QImage mip = frame(view_->vtkWidget());
    QVERIFY(differingPixels(composite, mip) > 2000);
    QCOMPARE(view_->renderMode(), VolumeView::RenderMode::MaximumIntensity);
}

void TestVolumeView::dragChangesCamera() {
    const recon::Grid g = cubeGrid();
    view_->setVolume(g, phantomMagnitude(g), "");
    vtkCamera* cam = view_->camera();
    double p0[3];
    cam->GetPosition(p0);
    const QImage before = frame(view_->vtkWidget());
    QWidget* w = view_->vtkWidget();
    const QPoint c(w->width() / 2, w->height() / 2);
    QTest::mousePress(w, Qt::LeftButton, {}, c);
    for (int i = 1; i <= 8; ++i) QTest::mouseMove(w, c + QPoint(0, -8 * i));
    QTest::mouseRelease(w, Qt::LeftButton, {}, c + QPoint(0, -64));
    double p1[3];
    cam->GetPosition(p1);
    const double moved = std::hypot(p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]);
    QVERIFY2(moved > 50, qPrintable(QString("camera moved %1 mm after a drag").arg(moved)));
    QVERIFY(differingPixels(before, frame(view_->vtkWidget())) > 1000);
}

void TestVolumeView::movingTheCursorMovesThePlanes() {
    const recon::Grid g = cubeGrid();
    // Grey level = z / (N - 1): the axial plane's brightness says which z it shows.
    view_->setVolume(g, makeVolume(g, [](int, int, int z) { return float(z) / (kN - 1); }), "");
    view_->setVolumeVisible(false);
    view_->setWindowLevel(1.0, 0.5);
    lookDownZ(*view_);
    VtkWidget* w = view_->vtkWidget();
    // Away from the x and y planes' edge-on lines.
    const QPoint probe = devicePixel(w, project(w, voxelWorld(g, 50, 50, 0)));
    const auto isYellow = [](QRgb p) { return qRed(p) > 180 && qGreen(p) > 150 && qBlue(p) < 120; };
    const auto yellowNearColumn = [&](const QImage& img, double wx) {
        const int col = devicePixel(w, project(w, voxelWorld(g, wx, 0, 0))).x();
        const int row = devicePixel(w, project(w, voxelWorld(g, 0, 40, 0))).y();  // off the green line
        for (int dx = -2; dx <= 2; ++dx)
            if (isYellow(img.pixel(col + dx, row))) return true;
        return false;
    };

    view_->setCursor(20, 10, 10);
    QImage img = frame(w);
    const int greyAt10 = qGray(img.pixel(probe));
    QVERIFY2(std::abs(greyAt10 - 10 * 255 / (kN - 1)) < 12, qPrintable(QString("axial plane at z=10 shows grey %1").arg(greyAt10)));
    QVERIFY2(yellowNearColumn(img, 20), "the sagittal plane's frame should be at x = 20");
    QVERIFY(!yellowNearColumn(img, 44));

    view_->setCursor(44, 10, 52);
    img = frame(w);
    const int greyAt52 = qGray(img.pixel(probe));
    QVERIFY2(std::abs(greyAt52 - 52 * 255 / (kN - 1)) < 12, qPrintable(QString("axial plane at z=52 shows grey %1").arg(greyAt52)));
    QVERIFY2(yellowNearColumn(img, 44), "the sagittal plane's frame should have moved to x = 44");
    QVERIFY(!yellowNearColumn(img, 20));

    const auto c = view_->cursorVoxel();
    QCOMPARE(c[0], 44);
    QCOMPARE(c[2], 52);
    view_->setCursor(-5, 1000, 3);  // clamped to the grid
    QCOMPARE(view_->cursorVoxel()[0], 0);
    QCOMPARE(view_->cursorVoxel()[1], kN - 1);
}

void TestVolumeView::clickOnPlanePicksItsVoxel() {
    const recon::Grid g = cubeGrid();
    view_->setVolume(g, makeVolume(g, [](int, int, int z) { return float(z) / (kN - 1); }), "");
    view_->setVolumeVisible(false);
    view_->setCursor(10, 10, 40);
    lookDownZ(*view_);
    QSignalSpy spy(view_, &VolumeView::cursorPicked);
    VtkWidget* w = view_->vtkWidget();
    QTest::mouseClick(w, Qt::LeftButton, {}, project(w, voxelWorld(g, 40, 30, 40)).toPoint());
    QCOMPARE(spy.count(), 1);
    const int x = spy.at(0).at(0).toInt(), y = spy.at(0).at(1).toInt(), z = spy.at(0).at(2).toInt();
    qInfo("picked (%d, %d, %d), expected (40, 30, 40)", x, y, z);
    QVERIFY(std::abs(x - 40) <= 1 && std::abs(y - 30) <= 1);
    QCOMPARE(z, 40);  // the axial plane the ray hits
    // Outside the volume: nothing to pick, no signal.
    QTest::mouseClick(w, Qt::LeftButton, {}, QPoint(3, 3));
    QCOMPARE(spy.count(), 1);
}

void TestVolumeView::clickOnVolumePicksItsSurface() {
    const recon::Grid g = cubeGrid();
    // A ball of radius 15 voxels at the centre.
    view_->setVolume(g, makeVolume(g, [](int x, int y, int z) {
                         return std::hypot(x - 32.0, y - 32.0, z - 32.0) <= 15 ? 1.0f : 0.0f;
                     }), "");
    view_->setSlicePlanesVisible(false);
    view_->setWindowLevel(1.0, 0.5);
    lookDownZ(*view_);
    QSignalSpy spy(view_, &VolumeView::cursorPicked);
    VtkWidget* w = view_->vtkWidget();
    QTest::mouseClick(w, Qt::LeftButton, {}, project(w, voxelWorld(g, 40, 30, 0)).toPoint());
    QCOMPARE(spy.count(), 1);
    const int x = spy.at(0).at(0).toInt(), y = spy.at(0).at(1).toInt(), z = spy.at(0).at(2).toInt();
    // The ray down z enters the ball at z = 32 + sqrt(15^2 - 8^2 - 2^2) = 44.5.
    qInfo("picked (%d, %d, %d), expected about (40, 30, 44)", x, y, z);
    QVERIFY(std::abs(x - 40) <= 1 && std::abs(y - 30) <= 1);
    QVERIFY(std::abs(z - 44) <= 2);
    // Beside the ball: the ray crosses only zeros.
    QTest::mouseClick(w, Qt::LeftButton, {}, project(w, voxelWorld(g, 60, 60, 0)).toPoint());
    QCOMPARE(spy.count(), 1);
}

void TestVolumeView::linkedViewsShareOneCamera() {
    const recon::Grid g = cubeGrid();
    const auto values = phantomMagnitude(g);
    VolumeView other;
    other.resize(400, 400);
    other.move(420, 0);
    other.show();
    QVERIFY(QTest::qWaitForWindowExposed(&other));
    view_->setVolume(g, values, "gridding");
    other.setVolume(g, values, "iterative");
    view_->linkCamera(&other);
    QCOMPARE(other.camera(), view_->camera());
    const QImage before = frame(other.vtkWidget());
    QWidget* w = view_->vtkWidget();
    const QPoint c(w->width() / 2, w->height() / 2);
    QTest::mousePress(w, Qt::LeftButton, {}, c);
    for (int i = 1; i <= 8; ++i) QTest::mouseMove(w, c + QPoint(8 * i, 0));
    QTest::mouseRelease(w, Qt::LeftButton, {}, c + QPoint(64, 0));
    // The other view was asked to repaint and shows the turned scene.
    QVERIFY(differingPixels(before, frame(other.vtkWidget())) > 1000);
    // The same camera and the same data: the same picture (below the labels, which differ).
    const auto scene = [](const QImage& img) { return img.copy(0, img.height() / 8, img.width(), img.height() * 7 / 8); };
    QVERIFY(differingPixels(scene(frame(view_->vtkWidget())), scene(frame(other.vtkWidget()))) < 100);

    other.unlinkCamera();
    QVERIFY(other.camera() != view_->camera());
    double a[3], b[3];
    view_->camera()->GetPosition(a);
    other.camera()->GetPosition(b);
    QVERIFY(std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) < 1e-9);  // the copy starts where it was
    view_->camera()->Azimuth(30);
    other.camera()->GetPosition(b);
    QVERIFY(std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) < 1e-9);  // and no longer follows
}

void TestVolumeView::liveUpdatesKeepCameraAndCursor() {
    // CG iterates arrive every iteration on the same grid: the user's view must not jump.
    const recon::Grid g = cubeGrid();
    view_->setVolume(g, phantomMagnitude(g), "iteration 1");
    view_->setCursor(10, 20, 30);
    view_->camera()->Azimuth(40);
    double before[3];
    view_->camera()->GetPosition(before);
    const QImage first = frame(view_->vtkWidget());
    view_->setVolume(g, makeVolume(g, [](int, int, int) { return 0.5f; }), "iteration 2");
    double after[3];
    view_->camera()->GetPosition(after);
    QCOMPARE(view_->cursorVoxel(), (std::array<int, 3>{10, 20, 30}));
    QVERIFY(std::hypot(after[0] - before[0], after[1] - before[1], after[2] - before[2]) < 1e-9);
    QVERIFY(differingPixels(first, frame(view_->vtkWidget())) > 1000);  // the new values are shown
    // A new grid: cursor centred, camera reset.
    recon::Grid h = recon::Grid::cube(3, 32);
    h.fov_mm = {256, 256, 256};
    view_->setVolume(h, std::vector<float>(h.voxels(), 0.5f), "other grid");
    QCOMPARE(view_->cursorVoxel(), (std::array<int, 3>{16, 16, 16}));
    view_->camera()->GetPosition(after);
    QVERIFY(std::hypot(after[0] - before[0], after[1] - before[1], after[2] - before[2]) > 1);
}

void TestVolumeView::badInputIsRejected() {
    const recon::Grid g = cubeGrid();
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setVolume(g, std::vector<float>(10), "x"));
    std::vector<float> v(g.voxels(), 0.f);
    v[123] = std::nanf("");
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setVolume(g, v, "x"));
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setWindowLevel(std::nan(""), 0.5));
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setWindowLevel(1, HUGE_VAL));
    QVERIFY(!view_->hasVolume());
    // A zero window (a constant image's auto window) is a threshold, not an error.
    view_->setWindowLevel(0, 0.5);
    QVERIFY(view_->window() > 0 && view_->window() < 1e-5);
}

void TestVolumeView::screenshots() {
    const recon::Grid g = cubeGrid();
    const auto values = phantomMagnitude(g);
    view_->resize(480, 480);
    view_->setVolume(g, values, "Shepp-Logan 64^3 - composite");
    view_->setWindowLevel(0.6, 0.3);
    view_->setCursor(32, 36, 30);
    view_->resetCamera();
    const QString composite = screenshotPath("volume_composite.png");
    QVERIFY(view_->saveScreenshot(composite));
    view_->setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    view_->setSlicePlanesVisible(false);
    view_->setWindowLevel(1.0, 0.5);
    view_->setVolume(g, values, "Shepp-Logan 64^3 - MIP");
    const QString mip = screenshotPath("volume_mip.png");
    QVERIFY(view_->saveScreenshot(mip));
    for (const QString& f : {composite, mip}) {
        QImage img(f);
        QVERIFY2(!img.isNull(), qPrintable(f));
        // Real content, not a blank frame: a good share of pixels off the background.
        const QRgb bg = backgroundOf(view_->renderer());
        QVERIFY(fraction(img.convertToFormat(QImage::Format_RGB32), img.rect(),
                         [&](QRgb p) { return colourDistance(p, bg) > 30; }) > 0.1);
    }
}

int main(int argc, char** argv) {
    reconstudio::vtkviews::VtkWidget::setDefaultSurfaceFormat();
    QApplication app(argc, argv);
    TestVolumeView t;
    return QTest::qExec(&t, argc, argv);
}

#include "test_volume_view.moc"
