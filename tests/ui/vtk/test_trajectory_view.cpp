// TrajectoryView draws the sample points where they are, coloured by readout
// or by density weight, decimated by whole readouts.
#include <QApplication>
#include <QtTest>

#include <vtkCamera.h>
#include <vtkRenderer.h>

#include <cmath>
#include <set>

#include "recon/core/errors.hpp"
#include "recon/trajectory/trajectories.hpp"
#include "ui/vtk/trajectory_view.hpp"
#include "vtk_test_support.hpp"

using reconstudio::vtkviews::TrajectoryView;
using namespace vtktest;

namespace {

void lookDownZ(TrajectoryView& view, double halfHeight) {
    vtkCamera* cam = view.renderer()->GetActiveCamera();
    cam->ParallelProjectionOn();
    cam->SetFocalPoint(0, 0, 0);
    cam->SetPosition(0, 0, 100);
    cam->SetViewUp(0, 1, 0);
    cam->SetParallelScale(halfHeight);
    view.renderer()->ResetCameraClippingRange();
}

}  // namespace

class TestTrajectoryView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void drawsPointsWhereTheSamplesAre();
    void densityColoursFollowTheWeights();
    void decimatesByWholeReadouts();
    void dragsDrawTheCoarseLevel();
    void badInputIsRejected();
    void screenshots();

private:
    TrajectoryView* view_ = nullptr;
};

void TestTrajectoryView::init() {
    view_ = new TrajectoryView;
    view_->resize(400, 400);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_));
}

void TestTrajectoryView::cleanup() {
    delete view_;
    view_ = nullptr;
}

void TestTrajectoryView::drawsPointsWhereTheSamplesAre() {
    const recon::Trajectory t = recon::radial3D(32, 400, 32);
    view_->setTrajectory(t, nullptr, TrajectoryView::ColourBy::Readout);
    QCOMPARE(view_->totalPoints(), t.samples());
    QCOMPARE(view_->drawnPoints(), t.samples());
    const auto ext = view_->extent();
    QVERIFY(ext[1] > 15 && ext[1] < 16 && ext[4] < 0);  // spokes reach |k| = 15.5 (half-sample offset)
    lookDownZ(*view_, 20);
    VtkWidget* w = view_->vtkWidget();
    const QImage img = frame(w);
    const QRgb bg = backgroundOf(view_->renderer());
    const auto lit = [&](QRgb p) { return colourDistance(p, bg) > 40; };
    const QPointF c = project(w, {0, 0, 0});
    const double r = std::abs(project(w, {15.5, 0, 0}).x() - c.x());
    const double dpr = w->devicePixelRatioF();
    // Inside the sampled ball (|k| < 8 in projection) points are dense; outside |k| = 17
    // (but away from the axes annotation at the box's edges) there are none.
    const QRect core(devicePixel(w, c - QPointF(r / 2, r / 2)), devicePixel(w, c + QPointF(r / 2, r / 2)));
    QVERIFY2(fraction(img, core, lit) > 0.5, "the centre of k-space should be densely drawn");
    int outside = 0, outsideLit = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width() * 0.85; ++x) {  // the colour bar is on the right
            const double rr = std::hypot(x / dpr - c.x(), y / dpr - c.y());
            // Inside the box, clear of its tick marks.
            const bool insideBox = std::abs(x / dpr - c.x()) < r * 0.93 && std::abs(y / dpr - c.y()) < r * 0.93;
            if (rr > r * 1.06 && insideBox) {  // between the ball and the extent box's corners
                ++outside;
                outsideLit += lit(img.pixel(x, y)) ? 1 : 0;
            }
        }
    QVERIFY(outside > 1000);
    if (outsideLit) frame(w).save(screenshotPath("failed_trajectory_top.png"));
    QVERIFY2(outsideLit == 0, qPrintable(QString("%1 lit pixels outside the sampled sphere").arg(outsideLit)));
    // Coloured by readout: many readouts, many distinct colours.
    std::set<QRgb> colours;
    for (int y = core.top(); y <= core.bottom(); y += 3)
        for (int x = core.left(); x <= core.right(); x += 3)
            if (lit(img.pixel(x, y))) colours.insert(img.pixel(x, y) & 0xf0f0f0);
    QVERIFY2(colours.size() > 20, qPrintable(QString("only %1 colours").arg(colours.size())));
}

void TestTrajectoryView::densityColoursFollowTheWeights() {
    // One readout along kx from -10 to 10, weight |kx|: dark (viridis' low end)
    // at the centre, yellow (its top) at the ends.
    recon::Trajectory t;
    t.dims = 3;
    t.readout_length = 41;
    std::vector<double> weight;
    for (int j = 0; j <= 40; ++j) {
        const double k = -10 + 0.5 * j;
        t.k.insert(t.k.end(), {k, 0, 0});
        weight.push_back(std::abs(k) + 0.01);
    }
    view_->setTrajectory(t, &weight, TrajectoryView::ColourBy::Density);
    view_->setPointSize(8);
    lookDownZ(*view_, 14);
    VtkWidget* w = view_->vtkWidget();
    QImage img = frame(w);
    const QRgb end = img.pixel(devicePixel(w, project(w, {10, 0, 0})));
    const QRgb mid = img.pixel(devicePixel(w, project(w, {0, 0, 0})));
    QVERIFY2(qRed(end) > 200 && qGreen(end) > 180 && qBlue(end) < 100,
             qPrintable(QString("highest weight should be yellow, got %1").arg(end, 0, 16)));
    QVERIFY2(qRed(mid) < 110 && qGreen(mid) < 60 && qBlue(mid) > 50,
             qPrintable(QString("lowest weight should be dark purple, got %1").arg(mid, 0, 16)));
    // Switching to readout colouring: one readout, one colour along the line.
    view_->setColourBy(TrajectoryView::ColourBy::Readout);
    img = frame(w);
    const QRgb a = img.pixel(devicePixel(w, project(w, {10, 0, 0})));
    const QRgb b = img.pixel(devicePixel(w, project(w, {0, 0, 0})));
    QVERIFY(colourDistance(a, b) < 12);
}

void TestTrajectoryView::decimatesByWholeReadouts() {
    const recon::Trajectory t = recon::radial3D(64, 100, 64);  // 6400 samples
    view_->setMaximumPoints(1000);
    view_->setTrajectory(t, nullptr, TrajectoryView::ColourBy::Readout);
    QCOMPARE(view_->totalPoints(), std::size_t(6400));
    // 15 readouts fit in 1000 points: every 7th of 100 readouts -> 15 readouts, 960 points.
    QCOMPARE(view_->drawnPoints(), std::size_t(960));
    // The box is the extent of all samples, not of the drawn ones.
    double maxAbs = 0;
    for (double v : t.k) maxAbs = std::max(maxAbs, std::abs(v));
    const auto ext = view_->extent();
    QCOMPARE(std::max({-ext[0], ext[1], -ext[2], ext[3], -ext[4], ext[5]}), maxAbs);
}

void TestTrajectoryView::dragsDrawTheCoarseLevel() {
    const recon::Trajectory t = recon::radial3D(64, 400, 64);  // 25600 samples
    view_->setInteractivePoints(1500);
    view_->setTrajectory(t, nullptr, TrajectoryView::ColourBy::Readout);
    QCOMPARE(view_->drawnPoints(), std::size_t(25600));
    // 23 readouts fit in 1500 points: every 18th of 400 readouts -> 23 readouts of 64.
    QCOMPARE(view_->drawnPointsInteractive(), std::size_t(1472));
    VtkWidget* w = view_->vtkWidget();
    lookDownZ(*view_, 40);
    const QImage still = frame(w);
    const QRgb bg = backgroundOf(view_->renderer());
    const auto lit = [&](QRgb p) { return colourDistance(p, bg) > 40; };
    const QRect core(devicePixel(w, project(w, {-8, 8, 0})), devicePixel(w, project(w, {8, -8, 0})));
    const double stillCover = fraction(still, core, lit);

    const QPoint c(w->width() / 2, w->height() / 2);
    QTest::mousePress(w, Qt::LeftButton, {}, c);
    QTest::mouseMove(w, c + QPoint(1, 0));  // a drag starts: the style begins rotating
    QVERIFY(view_->interacting());
    const double movingCover = fraction(frame(w), core, lit);
    qInfo("lit share of the centre: still %.2f, while dragging %.2f", stillCover, movingCover);
    QVERIFY2(movingCover < 0.5 * stillCover, "the coarse level should draw far fewer points");
    QTest::mouseRelease(w, Qt::LeftButton, {}, c + QPoint(1, 0));
    QVERIFY(!view_->interacting());
    QVERIFY(fraction(frame(w), core, lit) > 0.8 * stillCover);
}

void TestTrajectoryView::badInputIsRejected() {
    recon::Trajectory t;
    t.k = {1, 2};  // not a multiple of 3
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setTrajectory(t, nullptr, TrajectoryView::ColourBy::Readout));
    const recon::Trajectory ok = recon::radial3D(16, 4, 16);
    std::vector<double> shortDensity(3, 1.0);
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setTrajectory(ok, &shortDensity, TrajectoryView::ColourBy::Density));
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setTrajectory(ok, nullptr, TrajectoryView::ColourBy::Density));
    view_->setTrajectory(ok, nullptr, TrajectoryView::ColourBy::Readout);
    QVERIFY_THROWS_EXCEPTION(recon::InputError, view_->setColourBy(TrajectoryView::ColourBy::Density));
}

void TestTrajectoryView::screenshots() {
    view_->resize(560, 480);
    const recon::Trajectory t = recon::radial3D(64, 1200, 64);
    std::vector<double> density(t.samples());
    for (std::size_t m = 0; m < t.samples(); ++m)
        density[m] = t.kx(m) * t.kx(m) + t.ky(m) * t.ky(m) + t.kz(m) * t.kz(m);
    view_->setTrajectory(t, &density, TrajectoryView::ColourBy::Readout);
    QVERIFY(view_->saveScreenshot(screenshotPath("trajectory_readout.png")));
    view_->setColourBy(TrajectoryView::ColourBy::Density);
    QVERIFY(view_->saveScreenshot(screenshotPath("trajectory_density.png")));
    const QImage img(screenshotPath("trajectory_density.png"));
    QVERIFY(!img.isNull());
    const QRgb bg = backgroundOf(view_->renderer());
    QVERIFY(fraction(img.convertToFormat(QImage::Format_RGB32), img.rect(),
                     [&](QRgb p) { return colourDistance(p, bg) > 40; }) > 0.05);
}

int main(int argc, char** argv) {
    reconstudio::vtkviews::VtkWidget::setDefaultSurfaceFormat();
    QApplication app(argc, argv);
    TestTrajectoryView t;
    return QTest::qExec(&t, argc, argv);
}

#include "test_trajectory_view.moc"
