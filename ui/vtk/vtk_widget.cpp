#include "ui/vtk/vtk_widget.hpp"

#include <QCursor>
#include <QEnterEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QWheelEvent>

#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>

#include <cmath>
#include <string>

namespace reconstudio::vtkviews {
namespace {

// A press and release closer than this (logical pixels) is a click, not a drag.
constexpr double kClickSlop = 4.0;

// The render-window events a vtkGenericOpenGLRenderWindow delegates to its host.
constexpr unsigned long kWindowEvents[] = {
    vtkCommand::WindowMakeCurrentEvent, vtkCommand::WindowIsCurrentEvent,
    vtkCommand::WindowFrameEvent,       vtkCommand::WindowSupportsOpenGLEvent,
    vtkCommand::WindowIsDirectEvent,
};

// A Qt key as VTK's key code and key sym. Styles read the sym for named keys
// and the code for letters ('r' resets the camera). An empty sym: not forwarded.
struct VtkKey {
    char code = 0;
    std::string sym;
};

VtkKey vtkKey(const QKeyEvent* e) {
    switch (e->key()) {
        case Qt::Key_Left: return {0, "Left"};
        case Qt::Key_Right: return {0, "Right"};
        case Qt::Key_Up: return {0, "Up"};
        case Qt::Key_Down: return {0, "Down"};
        case Qt::Key_PageUp: return {0, "Prior"};
        case Qt::Key_PageDown: return {0, "Next"};
        case Qt::Key_Home: return {0, "Home"};
        case Qt::Key_End: return {0, "End"};
        case Qt::Key_Escape: return {27, "Escape"};
        case Qt::Key_Return:
        case Qt::Key_Enter: return {13, "Return"};
        case Qt::Key_Space: return {' ', "space"};
        case Qt::Key_Shift: return {0, "Shift_L"};
        case Qt::Key_Control: return {0, "Control_L"};
        default: break;
    }
    const QString text = e->text();
    if (text.size() != 1 || text[0].unicode() >= 128 || !text[0].isPrint()) return {};
    const char c = char(text[0].unicode());
    // Keys the trackball style would act on that make no sense here: 'e'/'q'
    // ask the application to exit, '3' toggles stereo, 'w'/'s' switch every
    // actor to wireframe/surface, 'p' draws a pick box, 'f' flies the camera.
    if (std::string("eEqQ3wWsSpPfF").find(c) != std::string::npos) return {};
    return {c, std::string(1, c)};
}

}  // namespace

QSurfaceFormat VtkWidget::surfaceFormat() {
    QSurfaceFormat f;
    f.setRenderableType(QSurfaceFormat::OpenGL);
    f.setVersion(3, 2);
    f.setProfile(QSurfaceFormat::CoreProfile);
    f.setRedBufferSize(8);
    f.setGreenBufferSize(8);
    f.setBlueBufferSize(8);
    f.setAlphaBufferSize(8);
    f.setDepthBufferSize(24);
    f.setStencilBufferSize(0);
    f.setSamples(0);  // VTK's own framebuffer is single-sampled; a multisampled Qt FBO would not blit
    f.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
    return f;
}

void VtkWidget::setDefaultSurfaceFormat() { QSurfaceFormat::setDefaultFormat(surfaceFormat()); }

VtkWidget::VtkWidget(QWidget* parent) : QOpenGLWidget(parent) {
    setFormat(surfaceFormat());
    setFocusPolicy(Qt::StrongFocus);
    setUpdateBehavior(QOpenGLWidget::NoPartialUpdate);
    setMinimumSize(64, 64);

    window_ = vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New();
    // Not before initializeGL: there is no context until then.
    window_->SetReadyForRendering(false);
    window_->SetFrameBlitModeToNoBlit();  // paintGL blits into Qt's framebuffer itself
    window_->SetMultiSamples(0);
    for (unsigned long id : kWindowEvents) window_->AddObserver(id, this, &VtkWidget::onWindowEvent);

    renderer_ = vtkSmartPointer<vtkRenderer>::New();
    // VTK clears to alpha 0 by default; blitted into Qt's RGBA framebuffer that
    // would make the whole widget transparent (black when grabbed).
    renderer_->SetBackgroundAlpha(1.0);
    window_->AddRenderer(renderer_);

    interactor_ = vtkSmartPointer<vtkGenericRenderWindowInteractor>::New();
    interactor_->SetRenderWindow(window_);
    vtkNew<vtkInteractorStyleTrackballCamera> style;
    interactor_->SetInteractorStyle(style);
    // The interactor must not render by itself (outside paintGL there may be no
    // current context, and Qt composes the widget only after paintGL): it asks
    // for a repaint instead.
    interactor_->EnableRenderOff();
    interactor_->AddObserver(vtkCommand::RenderEvent, this, &VtkWidget::onWindowEvent);
    interactor_->Enable();
}

VtkWidget::~VtkWidget() {
    interactor_->RemoveObservers(vtkCommand::RenderEvent);
    releaseGraphics();
    window_->RemoveAllObservers();
}

vtkGenericOpenGLRenderWindow* VtkWidget::renderWindow() const { return window_; }
vtkGenericRenderWindowInteractor* VtkWidget::interactor() const { return interactor_; }
vtkRenderer* VtkWidget::renderer() const { return renderer_; }

void VtkWidget::onWindowEvent(vtkObject*, unsigned long eventId, void* callData) {
    switch (eventId) {
        case vtkCommand::WindowMakeCurrentEvent: {
            // Make Qt's context current directly: QOpenGLWidget::makeCurrent()
            // would also rebind Qt's framebuffer behind VTK's back (black frames).
            QOpenGLContext* ctx = context();
            if (ctx && QOpenGLContext::currentContext() != ctx) ctx->makeCurrent(ctx->surface());
            break;
        }
        case vtkCommand::WindowIsCurrentEvent: {
            QOpenGLContext* ctx = context();
            *static_cast<bool*>(callData) = ctx && QOpenGLContext::currentContext() == ctx;
            break;
        }
        case vtkCommand::WindowSupportsOpenGLEvent:
        case vtkCommand::WindowIsDirectEvent:
            *static_cast<int*>(callData) = 1;
            break;
        case vtkCommand::WindowFrameEvent:
        case vtkCommand::RenderEvent:
            // VTK finished (or wants) a frame outside paintGL: let Qt schedule a paint.
            if (!inPaint_) update();
            break;
        default: break;
    }
}

void VtkWidget::initializeGL() {
    // A re-parented widget gets a new context: release what lived in the old one.
    connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &VtkWidget::releaseGraphics,
            Qt::UniqueConnection);
    window_->SetOwnContext(false);
    window_->SetReadyForRendering(true);
    window_->SetMapped(true);
    syncSize();
    window_->OpenGLInitContext();
}

void VtkWidget::syncSize() {
    const qreal dpr = devicePixelRatioF();
    const int w = std::max(1, int(std::lround(width() * dpr)));
    const int h = std::max(1, int(std::lround(height() * dpr)));
    int* now = window_->GetSize();
    if (now[0] != w || now[1] != h) {
        window_->SetSize(w, h);
        interactor_->SetSize(w, h);
    }
}

void VtkWidget::resizeGL(int, int) { syncSize(); }

void VtkWidget::paintGL() {
    if (!window_->GetReadyForRendering()) return;
    inPaint_ = true;
    syncSize();
    // Qt and VTK share this context: record Qt's state, let VTK render into its
    // own framebuffer, copy the result into Qt's framebuffer, restore Qt's state.
    // The reset on every paint matters: a stale state cache gave black frames.
    vtkOpenGLState* state = window_->GetState();
    state->Reset();
    state->Push();
    window_->Render();
    state->vtkglBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
    window_->BlitDisplayFramebuffer();
    state->Pop();
    ++frames_;
    inPaint_ = false;
}

void VtkWidget::releaseGraphics() {
    if (!window_ || !window_->GetReadyForRendering()) return;
    if (context()) {
        makeCurrent();
        window_->ReleaseGraphicsResources(window_);
        doneCurrent();
    }
    window_->SetReadyForRendering(false);
    window_->SetMapped(false);
}

// Pixel row r from the top is VTK row H - 1 - r from the bottom (H in device pixels),
// the same flip vtkRenderWindowInteractor::SetEventInformationFlipY makes.
std::array<double, 2> VtkWidget::toDisplay(QPointF p) const {
    const qreal dpr = devicePixelRatioF();
    return {p.x() * dpr, height() * dpr - 1.0 - p.y() * dpr};
}

QPointF VtkWidget::fromDisplay(double x, double y) const {
    const qreal dpr = devicePixelRatioF();
    return {x / dpr, (height() * dpr - 1.0 - y) / dpr};
}

QImage VtkWidget::grabImage() { return grabFramebuffer(); }

bool VtkWidget::saveScreenshot(const QString& pngPath) {
    const QImage img = grabImage();
    if (img.isNull()) {
        qWarning("VtkWidget: nothing to save to %s (the view has no OpenGL context yet)",
                 qUtf8Printable(pngPath));
        return false;
    }
    if (!img.save(pngPath, "PNG")) {
        qWarning("VtkWidget: could not write %s", qUtf8Printable(pngPath));
        return false;
    }
    return true;
}

// ---- input: Qt events to VTK events (y up, device pixels) ----

void VtkWidget::setEventPosition(QPointF pos, Qt::KeyboardModifiers mods, bool repeat) {
    const auto d = toDisplay(pos);
    interactor_->SetEventInformation(int(std::lround(d[0])), int(std::lround(d[1])),
                                     (mods & Qt::ControlModifier) ? 1 : 0, (mods & Qt::ShiftModifier) ? 1 : 0,
                                     0, repeat ? 1 : 0);
    interactor_->SetAltKey((mods & Qt::AltModifier) ? 1 : 0);
}

void VtkWidget::mousePressEvent(QMouseEvent* e) {
    setEventPosition(e->position(), e->modifiers());
    switch (e->button()) {
        case Qt::LeftButton:
            leftDown_ = true;
            movedSincePress_ = false;
            pressPos_ = e->position();
            interactor_->InvokeEvent(vtkCommand::LeftButtonPressEvent, e);
            break;
        case Qt::MiddleButton: interactor_->InvokeEvent(vtkCommand::MiddleButtonPressEvent, e); break;
        case Qt::RightButton: interactor_->InvokeEvent(vtkCommand::RightButtonPressEvent, e); break;
        default: break;
    }
    e->accept();
}

void VtkWidget::mouseDoubleClickEvent(QMouseEvent* e) {
    // VTK marks the second press of a double click with the repeat flag.
    setEventPosition(e->position(), e->modifiers(), true);
    if (e->button() == Qt::LeftButton) {
        leftDown_ = true;
        movedSincePress_ = false;
        pressPos_ = e->position();
        interactor_->InvokeEvent(vtkCommand::LeftButtonPressEvent, e);
    }
    e->accept();
}

void VtkWidget::mouseReleaseEvent(QMouseEvent* e) {
    setEventPosition(e->position(), e->modifiers());
    switch (e->button()) {
        case Qt::LeftButton: {
            interactor_->InvokeEvent(vtkCommand::LeftButtonReleaseEvent, e);
            const bool click = leftDown_ && !movedSincePress_;
            leftDown_ = false;
            if (click) emit clicked(e->position());
            break;
        }
        case Qt::MiddleButton: interactor_->InvokeEvent(vtkCommand::MiddleButtonReleaseEvent, e); break;
        case Qt::RightButton: interactor_->InvokeEvent(vtkCommand::RightButtonReleaseEvent, e); break;
        default: break;
    }
    e->accept();
}

void VtkWidget::mouseMoveEvent(QMouseEvent* e) {
    if (leftDown_) {
        const QPointF d = e->position() - pressPos_;
        if (std::hypot(d.x(), d.y()) > kClickSlop) movedSincePress_ = true;
    }
    setEventPosition(e->position(), e->modifiers());
    interactor_->InvokeEvent(vtkCommand::MouseMoveEvent, e);
    e->accept();
}

void VtkWidget::wheelEvent(QWheelEvent* e) {
    setEventPosition(e->position(), e->modifiers());
    const int dy = e->angleDelta().y();
    if (dy > 0) interactor_->InvokeEvent(vtkCommand::MouseWheelForwardEvent, e);
    if (dy < 0) interactor_->InvokeEvent(vtkCommand::MouseWheelBackwardEvent, e);
    e->accept();
}

void VtkWidget::keyPressEvent(QKeyEvent* e) {
    const VtkKey key = vtkKey(e);
    if (key.sym.empty()) return QOpenGLWidget::keyPressEvent(e);
    setEventPosition(mapFromGlobal(QCursor::pos()), e->modifiers(), e->isAutoRepeat());
    interactor_->SetKeyCode(key.code);
    interactor_->SetKeySym(key.sym.c_str());
    interactor_->InvokeEvent(vtkCommand::KeyPressEvent, e);
    interactor_->InvokeEvent(vtkCommand::CharEvent, e);
    e->accept();
}

void VtkWidget::keyReleaseEvent(QKeyEvent* e) {
    const VtkKey key = vtkKey(e);
    if (key.sym.empty()) return QOpenGLWidget::keyReleaseEvent(e);
    interactor_->SetKeyCode(key.code);
    interactor_->SetKeySym(key.sym.c_str());
    interactor_->InvokeEvent(vtkCommand::KeyReleaseEvent, e);
    e->accept();
}

void VtkWidget::enterEvent(QEnterEvent* e) {
    setEventPosition(e->position(), e->modifiers());
    interactor_->InvokeEvent(vtkCommand::EnterEvent, e);
    QOpenGLWidget::enterEvent(e);
}

void VtkWidget::leaveEvent(QEvent* e) {
    interactor_->InvokeEvent(vtkCommand::LeaveEvent, e);
    QOpenGLWidget::leaveEvent(e);
}

}  // namespace reconstudio::vtkviews
