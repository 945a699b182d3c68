// The bridge between Qt 6 and VTK: a QOpenGLWidget that hosts a
// vtkGenericOpenGLRenderWindow and forwards Qt's input to a VTK interactor.
//
// Debian 12's VTK 9.1 builds its Qt module (QVTKOpenGLNativeWidget) for Qt 5
// only, and this application is Qt 6, so this class does that module's job.
// VTK renders into its own framebuffer inside Qt's context; every paintGL
// blits the result into the widget's framebuffer. Rendering happens only in
// paintGL: the interactor asks for a frame by scheduling update().
//
// Before QApplication is constructed, call VtkWidget::setDefaultSurfaceFormat()
// (all QOpenGLWidgets of a window share one context, and VTK needs a 3.2 core one).
#pragma once

#include <QOpenGLWidget>
#include <QPoint>
#include <QSurfaceFormat>

#include <array>

#include <vtkNew.h>
#include <vtkSmartPointer.h>

class vtkGenericOpenGLRenderWindow;
class vtkGenericRenderWindowInteractor;
class vtkRenderer;
class vtkObject;

namespace reconstudio::vtkviews {

class VtkWidget : public QOpenGLWidget {
    Q_OBJECT
public:
    explicit VtkWidget(QWidget* parent = nullptr);
    ~VtkWidget() override;

    // OpenGL 3.2 core, RGBA8, 24-bit depth, no multisampling: what VTK's
    // OpenGL2 backend needs and what llvmpipe under Xvfb provides.
    static QSurfaceFormat surfaceFormat();
    // Install surfaceFormat() as Qt's default; call before QApplication exists.
    static void setDefaultSurfaceFormat();

    vtkGenericOpenGLRenderWindow* renderWindow() const;
    vtkGenericRenderWindowInteractor* interactor() const;
    // The one renderer this widget shows (created with the widget).
    vtkRenderer* renderer() const;

    // Widget coordinates (logical pixels, y down) to VTK display coordinates
    // (device pixels, y up), and back.
    std::array<double, 2> toDisplay(QPointF widgetPos) const;
    QPointF fromDisplay(double x, double y) const;

    // The current image as Qt would show it (renders a fresh frame).
    QImage grabImage();
    // Render and write a PNG; false (and a warning naming the file) on failure.
    bool saveScreenshot(const QString& pngPath);

    // Frames drawn by paintGL since construction (for tests and the benchmark).
    long framesRendered() const { return frames_; }

signals:
    // A left-button press and release with the mouse moved less than a few
    // pixels in between: a click, as opposed to a rotate drag. Widget coordinates.
    void clicked(QPointF widgetPos);

protected:
    void initializeGL() override;
    void resizeGL(int w, int h) override;
    void paintGL() override;

    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void keyReleaseEvent(QKeyEvent* e) override;
    void enterEvent(QEnterEvent* e) override;
    void leaveEvent(QEvent* e) override;

private:
    void onWindowEvent(vtkObject* caller, unsigned long eventId, void* callData);
    void releaseGraphics();
    void setEventPosition(QPointF pos, Qt::KeyboardModifiers mods, bool repeat = false);
    void syncSize();

    vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
    vtkSmartPointer<vtkGenericRenderWindowInteractor> interactor_;
    vtkSmartPointer<vtkRenderer> renderer_;
    bool inPaint_ = false;
    long frames_ = 0;
    QPointF pressPos_;
    bool leftDown_ = false;
    bool movedSincePress_ = false;
};

}  // namespace reconstudio::vtkviews
