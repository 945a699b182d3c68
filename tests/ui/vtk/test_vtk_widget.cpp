// The Qt 6 / VTK bridge: frames reach Qt's framebuffer the right way up and
// stay valid over repaints, and Qt input reaches VTK with y flipped.
#include <QApplication>
#include <QSignalSpy>
#include <QtTest>

#include <vtkActor.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSphereSource.h>

#include "vtk_test_support.hpp"
#include "ui/vtk/vtk_widget.hpp"

using reconstudio::vtkviews::VtkWidget;
using namespace vtktest;

class TestVtkWidget : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void frameIsUprightWithBackgroundAndGeometry();
    void repeatedPaintsStayValid();
    void mouseDragRotatesCamera();
    void wheelZooms();
    void pressReachesVtkWithYFlipped();
    void clickedOnlyForClicksNotDrags();
    void keyRResetsTheCamera();

private:
    VtkWidget* widget_ = nullptr;
    vtkSmartPointer<vtkActor> sphere_;
};

void TestVtkWidget::init() {
    widget_ = new VtkWidget;
    widget_->resize(320, 240);
    vtkRenderer* ren = widget_->renderer();
    ren->SetBackground(0.2, 0.4, 0.6);
    // A red sphere in the upper half of the view: the frame must show it at the top.
    vtkNew<vtkSphereSource> src;
    src->SetCenter(0.3, 0.5, 0);  // off the y axis, so turning about y moves it
    src->SetRadius(0.3);
    src->SetThetaResolution(32);
    src->SetPhiResolution(32);
    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputConnection(src->GetOutputPort());
    sphere_ = vtkSmartPointer<vtkActor>::New();
    sphere_->SetMapper(mapper);
    sphere_->GetProperty()->SetColor(1, 0, 0);
    sphere_->GetProperty()->SetAmbient(1);
    sphere_->GetProperty()->SetDiffuse(0);
    ren->AddActor(sphere_);
    vtkCamera* cam = ren->GetActiveCamera();
    cam->ParallelProjectionOn();
    cam->SetFocalPoint(0, 0, 0);
    cam->SetPosition(0, 0, 5);
    cam->SetViewUp(0, 1, 0);
    cam->SetParallelScale(1.0);  // half the view height is 1 world unit
    ren->ResetCameraClippingRange();
    widget_->show();
    QVERIFY(QTest::qWaitForWindowExposed(widget_));
}

void TestVtkWidget::cleanup() {
    sphere_ = nullptr;
    delete widget_;
    widget_ = nullptr;
}

void TestVtkWidget::frameIsUprightWithBackgroundAndGeometry() {
    // ctest also runs this suite at a device pixel ratio of 2 (QT_SCALE_FACTOR=2).
    if (qEnvironmentVariableIsSet("RECONSTUDIO_EXPECT_DPR"))
        QCOMPARE(widget_->devicePixelRatioF(), qEnvironmentVariable("RECONSTUDIO_EXPECT_DPR").toDouble());
    const QImage img = frame(widget_);
    QCOMPARE(img.size(), widget_->size() * widget_->devicePixelRatioF());
    const QRgb bg = qRgb(51, 102, 153);
    // Corners: background.
    for (QPoint p : {QPoint(2, 2), QPoint(img.width() - 3, 2), QPoint(2, img.height() - 3),
                     QPoint(img.width() - 3, img.height() - 3)}) {
        QVERIFY2(colourDistance(img.pixel(p), bg) < 12, qPrintable(QString("corner (%1,%2) is %3, expected background")
                                                                      .arg(p.x()).arg(p.y()).arg(img.pixel(p), 0, 16)));
    }
    // World y = 0.5 is a quarter of the height from the top; y = -0.5 must be empty.
    const QPoint top = devicePixel(widget_, project(widget_, {0.3, 0.5, 0}));
    const QPoint bottom = devicePixel(widget_, project(widget_, {0.3, -0.5, 0}));
    QVERIFY2(std::abs(top.y() - img.height() / 4) <= 2, "projection does not put world +y at the top");
    const QRgb atTop = img.pixel(top), atBottom = img.pixel(bottom);
    QVERIFY2(qRed(atTop) > 200 && qGreen(atTop) < 40 && qBlue(atTop) < 40,
             qPrintable(QString("expected the red sphere at the top, got %1").arg(atTop, 0, 16)));
    QVERIFY2(colourDistance(atBottom, bg) < 12, "the lower half should be background: is the frame upside down?");
}

void TestVtkWidget::repeatedPaintsStayValid() {
    // Black frames after the first paint were the symptom of a stale GL state cache.
    const long before = widget_->framesRendered();
    for (int i = 0; i < 6; ++i) {
        const QImage img = frame(widget_);
        QVERIFY2(colourDistance(img.pixel(2, 2), qRgb(51, 102, 153)) < 12, qPrintable(QString("paint %1 lost the frame").arg(i)));
        const QPoint top = devicePixel(widget_, project(widget_, {0.3, 0.5, 0}));
        QVERIFY(qRed(img.pixel(top)) > 200);
        widget_->update();  // and through Qt's normal paint path in between
        QCoreApplication::processEvents();
    }
    QVERIFY(widget_->framesRendered() >= before + 6);
}

void TestVtkWidget::mouseDragRotatesCamera() {
    vtkCamera* cam = widget_->renderer()->GetActiveCamera();
    double before[3];
    cam->GetDirectionOfProjection(before);
    const QImage img0 = frame(widget_);
    const QPoint c(widget_->width() / 2, widget_->height() / 2);
    QTest::mousePress(widget_, Qt::LeftButton, {}, c);
    for (int i = 1; i <= 10; ++i) QTest::mouseMove(widget_, c + QPoint(6 * i, 0));
    QTest::mouseRelease(widget_, Qt::LeftButton, {}, c + QPoint(60, 0));
    double after[3];
    cam->GetDirectionOfProjection(after);
    const double dot = before[0] * after[0] + before[1] * after[1] + before[2] * after[2];
    QVERIFY2(dot < 0.99, qPrintable(QString("a 60-pixel drag did not rotate the camera (cos = %1)").arg(dot)));
    // A horizontal drag turns about the view-up axis (y): the direction gains an x component.
    QVERIFY(std::abs(after[0]) > 0.1);
    QVERIFY(differingPixels(img0, frame(widget_)) > 100);
}

void TestVtkWidget::wheelZooms() {
    vtkCamera* cam = widget_->renderer()->GetActiveCamera();
    const double scale0 = cam->GetParallelScale();
    const QPointF c(widget_->width() / 2.0, widget_->height() / 2.0);
    QWheelEvent forward(c, widget_->mapToGlobal(c), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                        Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget_, &forward);
    QVERIFY2(cam->GetParallelScale() < scale0, "wheel forward should zoom in");
    QWheelEvent backward(c, widget_->mapToGlobal(c), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                         Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget_, &backward);
    QApplication::sendEvent(widget_, &backward);
    QVERIFY2(cam->GetParallelScale() > scale0, "wheel backward should zoom out");
}

void TestVtkWidget::pressReachesVtkWithYFlipped() {
    int seen[2] = {-1, -1};
    vtkNew<vtkCallbackCommand> cb;
    cb->SetClientData(seen);
    cb->SetCallback([](vtkObject* caller, unsigned long, void* client, void*) {
        auto* iren = static_cast<vtkRenderWindowInteractor*>(caller);
        int* out = static_cast<int*>(client);
        out[0] = iren->GetEventPosition()[0];
        out[1] = iren->GetEventPosition()[1];
    });
    widget_->interactor()->AddObserver(vtkCommand::LeftButtonPressEvent, cb, 1.0);
    QTest::mousePress(widget_, Qt::LeftButton, {}, QPoint(10, 20));
    QTest::mouseRelease(widget_, Qt::LeftButton, {}, QPoint(10, 20));
    const double dpr = widget_->devicePixelRatioF();
    QCOMPARE(seen[0], int(std::lround(10 * dpr)));
    QCOMPARE(seen[1], int(std::lround(widget_->height() * dpr - 1 - 20 * dpr)));
}

void TestVtkWidget::clickedOnlyForClicksNotDrags() {
    QSignalSpy spy(widget_, &VtkWidget::clicked);
    QTest::mouseClick(widget_, Qt::LeftButton, {}, QPoint(50, 60));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toPointF(), QPointF(50, 60));
    QTest::mousePress(widget_, Qt::LeftButton, {}, QPoint(50, 60));
    QTest::mouseMove(widget_, QPoint(90, 60));
    QTest::mouseRelease(widget_, Qt::LeftButton, {}, QPoint(90, 60));
    QCOMPARE(spy.count(), 1);
}

void TestVtkWidget::keyRResetsTheCamera() {
    // The trackball style's 'r' recentres on the visible props: the sphere at (0.3, 0.5, 0).
    QTest::keyClick(widget_, Qt::Key_Q);  // 'q' would ask the application to exit: not forwarded
    QTest::keyClick(widget_, Qt::Key_R);
    double f[3];
    widget_->renderer()->GetActiveCamera()->GetFocalPoint(f);
    QVERIFY2(std::abs(f[0] - 0.3) < 1e-6 && std::abs(f[1] - 0.5) < 1e-6,
             qPrintable(QString("focal point (%1, %2) after 'r'").arg(f[0]).arg(f[1])));
}

int main(int argc, char** argv) {
    VtkWidget::setDefaultSurfaceFormat();
    QApplication app(argc, argv);
    TestVtkWidget t;
    return QTest::qExec(&t, argc, argv);
}

#include "test_vtk_widget.moc"
