// reconstudio-vtk-bench: frames per second of the 3D views.
//
// Renders a Shepp-Logan volume (default 128^3) in the VolumeView, composite
// and maximum-intensity projection, and a 3D radial trajectory (default
// 8192 spokes x 128 = 1,048,576 points) in the TrajectoryView, turning the
// camera a little every frame. Each frame is a full widget paint through Qt's
// event loop (VTK render, blit into Qt's framebuffer, Qt's composition)
// followed by glFinish, so the time is what a user waits for. "still" is full quality; "interactive" uses
// the update rate VTK requests during a mouse drag (15 Hz), at which the ray
// caster may coarsen its sampling to keep up.
//
// Needs a display: under CI, xvfb-run -a -s "-screen 0 1280x800x24" reconstudio-vtk-bench
// --screenshots DIR also saves what it rendered (docs/images/ comes from here);
// --compare A,B renders two reconstructions in linked views (volume_pair.png).
#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QPainter>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QOpenGLContext>
#include <QOpenGLFunctions>

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkInteractorObserver.h>
#include <vtkPointGaussianMapper.h>
#include <vtkPropCollection.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkRenderer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "recon/io/dataset_io.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/trajectory/trajectories.hpp"
#include "ui/vtk/trajectory_view.hpp"
#include "ui/vtk/volume_view.hpp"
#include "ui/vtk/vtk_widget.hpp"

using namespace reconstudio::vtkviews;

namespace {

struct Timing {
    double firstMs = 0;
    double meanMs = 0;
    double fps = 0;
};

void waitUntilReady(VtkWidget* w) {
    QElapsedTimer t;
    t.start();
    while (!w->isValid() && t.elapsed() < 10000) QApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!w->isValid()) {
        std::fprintf(stderr, "reconstudio-vtk-bench: the OpenGL widget never initialised (is there a display?)\n");
        std::exit(2);
    }
}

void finishFrame(VtkWidget* w) {
    w->makeCurrent();
    QOpenGLContext::currentContext()->functions()->glFinish();
    w->doneCurrent();
}

// Asks for a repaint the way the views do (update()) and runs Qt's event loop
// until the widget has painted it and GL has finished.
void paintOneFrame(VtkWidget* w) {
    const long before = w->framesRendered();
    w->update();
    while (w->framesRendered() == before) QApplication::processEvents(QEventLoop::AllEvents);
    finishFrame(w);
}

// One frame per step, the camera turned 360/frames degrees each time.
Timing measure(VtkWidget* w, int frames, double desiredUpdateRate) {
    w->renderWindow()->SetDesiredUpdateRate(desiredUpdateRate);
    vtkCamera* cam = w->renderer()->GetActiveCamera();
    QElapsedTimer t;
    t.start();
    paintOneFrame(w);
    Timing r;
    r.firstMs = t.nsecsElapsed() * 1e-6;
    t.restart();
    for (int i = 0; i < frames; ++i) {
        cam->Azimuth(360.0 / frames);
        w->renderer()->ResetCameraClippingRange();
        paintOneFrame(w);
    }
    const double total = t.nsecsElapsed() * 1e-9;
    r.meanMs = 1e3 * total / frames;
    r.fps = frames / total;
    return r;
}

void report(const char* what, const char* mode, int w, int h, int frames, const Timing& t) {
    std::printf("%-34s %-12s %4dx%-4d %5d %12.1f %12.2f %8.1f\n", what, mode, w, h, frames, t.firstMs, t.meanMs, t.fps);
    std::fflush(stdout);
}

// Two reconstructions side by side through one camera (what the workstation's
// 3D tab shows), each windowed to its own 99.5th percentile, saved as one PNG.
int comparePair(const QString& a, const QString& b, int width, int height, const QString& shots) {
    QWidget pair;
    auto* layout = new QHBoxLayout(&pair);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    VolumeView left, right;
    layout->addWidget(&left);
    layout->addWidget(&right);
    pair.resize(2 * width, height);
    pair.show();
    waitUntilReady(left.vtkWidget());
    waitUntilReady(right.vtkWidget());
    VolumeView* views[2] = {&left, &right};
    const QString files[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
        recon::Grid grid;
        recon::ComplexArray img;
        try {
            img = recon::readImage(files[i].toStdString(), &grid);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "reconstudio-vtk-bench: %s\n", e.what());
            return 2;
        }
        std::vector<float> mag(img.size());
        for (std::size_t v = 0; v < img.size(); ++v) mag[v] = float(std::abs(img[v]));
        std::vector<float> sorted = mag;
        const std::size_t p = std::size_t(0.995 * double(sorted.size() - 1));
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(p), sorted.end());
        const double top = sorted[p] > 0 ? sorted[p] : 1.0;
        views[i]->setVolume(grid, mag, QFileInfo(files[i]).completeBaseName());
        views[i]->setWindowLevel(0.6 * top, 0.3 * top);
    }
    left.linkCamera(&right);
    left.resetCamera();
    const auto savePair = [&](const char* name) {
        QImage out(pair.size() * pair.devicePixelRatioF(), QImage::Format_RGB32);
        out.fill(Qt::black);
        QPainter painter(&out);
        painter.drawImage(QPoint(0, 0), left.vtkWidget()->grabImage());
        painter.drawImage(QPoint(int(right.x() * pair.devicePixelRatioF()), 0), right.vtkWidget()->grabImage());
        painter.end();
        const QString path = shots + "/" + name;
        if (!out.save(path)) return false;
        std::printf("saved %s\n", qPrintable(path));
        return true;
    };
    if (!savePair("volume_pair.png")) return 3;
    // MIP without the planes: streaks and noise stand out as the brightest samples.
    for (VolumeView* v : views) {
        v->setSlicePlanesVisible(false);
        v->setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    }
    if (!savePair("volume_pair_mip.png")) return 3;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    VtkWidget::setDefaultSurfaceFormat();
    QApplication app(argc, argv);
    QApplication::setApplicationName("reconstudio-vtk-bench");
    QCommandLineParser cli;
    cli.setApplicationDescription("Frames per second of ReconStudio's VTK volume and trajectory views.");
    cli.addHelpOption();
    cli.addOption({"volume", "Volume edge length in voxels.", "n", "128"});
    cli.addOption({"spokes", "3D radial spokes (points = spokes x readout).", "count", "8192"});
    cli.addOption({"readout", "Samples per spoke.", "count", "128"});
    cli.addOption({"frames", "Frames timed per case.", "count", "60"});
    cli.addOption({"width", "View width in pixels.", "px", "800"});
    cli.addOption({"height", "View height in pixels.", "px", "600"});
    cli.addOption({"screenshots", "Also save each view as PNG into this folder.", "dir"});
    cli.addOption({"compare", "With --screenshots: two image files (any format reconstudio-cli writes, "
                              "e.g. gridding.cfl,iterative.cfl) shown in two linked views.", "a,b"});
    cli.process(app);
    const QString shots = cli.value("screenshots");
    if (!shots.isEmpty() && !QDir().mkpath(shots)) {
        std::fprintf(stderr, "reconstudio-vtk-bench: cannot create %s\n", qPrintable(shots));
        return 2;
    }
    const auto save = [&](auto& view, const char* name) {
        if (shots.isEmpty()) return;
        const QString path = shots + "/" + name;
        if (!view.saveScreenshot(path)) std::exit(3);
        std::printf("saved %s\n", qPrintable(path));
    };
    const QStringList compare = cli.value("compare").split(',', Qt::SkipEmptyParts);
    if (!compare.isEmpty() && (compare.size() != 2 || shots.isEmpty())) {
        std::fprintf(stderr, "reconstudio-vtk-bench: --compare takes two files, A,B, and needs --screenshots\n");
        return 2;
    }
    const int n = cli.value("volume").toInt();
    const int spokes = cli.value("spokes").toInt();
    const int readout = cli.value("readout").toInt();
    const int frames = cli.value("frames").toInt();
    const int width = cli.value("width").toInt(), height = cli.value("height").toInt();
    if (n < 2 || spokes < 1 || readout < 1 || frames < 1 || width < 64 || height < 64) {
        std::fprintf(stderr, "reconstudio-vtk-bench: --volume >= 2, --spokes, --readout, --frames >= 1, "
                             "--width/--height >= 64\n");
        return 2;
    }

    // The volume: magnitude of the 3D Shepp-Logan phantom, voxel centres.
    const recon::Grid grid = recon::Grid::cube(3, n);
    const recon::ComplexArray truth = recon::Phantom::sheppLogan3D().image(grid, 1);
    std::vector<float> magnitude(truth.size());
    for (std::size_t i = 0; i < truth.size(); ++i) magnitude[i] = float(std::abs(truth[i]));

    VolumeView volume;
    volume.resize(width, height);
    volume.show();
    waitUntilReady(volume.vtkWidget());
    {
        QOpenGLContext* ctx = volume.vtkWidget()->context();
        auto* f = ctx->functions();
        std::printf("OpenGL: %s | %s | %s\n", reinterpret_cast<const char*>(f->glGetString(GL_VENDOR)),
                    reinterpret_cast<const char*>(f->glGetString(GL_RENDERER)),
                    reinterpret_cast<const char*>(f->glGetString(GL_VERSION)));
    }
    std::printf("%-34s %-12s %9s %5s %12s %12s %8s\n", "case", "mode", "size", "frames", "first(ms)", "mean(ms)", "fps");
    volume.setVolume(grid, magnitude, "Shepp-Logan");
    volume.setWindowLevel(1.0, 0.5);
    const QString volumeCase = QString("volume %1^3").arg(n);

    volume.setSlicePlanesVisible(false);
    volume.setRenderMode(VolumeView::RenderMode::Composite);
    report(qPrintable(volumeCase), "composite", width, height, frames, measure(volume.vtkWidget(), frames, 0.0001));
    report(qPrintable(volumeCase), "comp/inter", width, height, frames, measure(volume.vtkWidget(), frames, 15));
    volume.setRenderMode(VolumeView::RenderMode::MaximumIntensity);
    report(qPrintable(volumeCase), "mip", width, height, frames, measure(volume.vtkWidget(), frames, 0.0001));
    save(volume, "volume_mip.png");
    report(qPrintable(volumeCase), "mip/inter", width, height, frames, measure(volume.vtkWidget(), frames, 15));
    volume.setRenderMode(VolumeView::RenderMode::Composite);
    volume.setSlicePlanesVisible(true);
    report(qPrintable(volumeCase + " + 3 planes"), "composite", width, height, frames,
           measure(volume.vtkWidget(), frames, 0.0001));
    if (!shots.isEmpty()) {
        volume.setWindowLevel(0.6, 0.3);  // brain-and-skull window: the inside shows
        volume.resetCamera();
        save(volume, "volume_composite_planes.png");
    }
    volume.hide();

    const recon::Trajectory traj = recon::radial3D(n, spokes, readout);
    // Radial density compensation ~ |k|^2, as a plausible weight to colour by.
    std::vector<double> density(traj.samples());
    for (std::size_t m = 0; m < traj.samples(); ++m)
        density[m] = traj.kx(m) * traj.kx(m) + traj.ky(m) * traj.ky(m) + traj.kz(m) * traj.kz(m);
    TrajectoryView trajectory;
    trajectory.resize(width, height);
    trajectory.setMaximumPoints(traj.samples());  // draw them all when still: this measures the full count
    trajectory.show();
    waitUntilReady(trajectory.vtkWidget());
    QElapsedTimer build;
    build.start();
    trajectory.setTrajectory(traj, &density, TrajectoryView::ColourBy::Readout);
    const double buildMs = build.nsecsElapsed() * 1e-6;
    const QString trajCase = QString("trajectory %1 points").arg(trajectory.drawnPoints());
    report(qPrintable(trajCase), "readout", width, height, frames, measure(trajectory.vtkWidget(), frames, 0.0001));
    save(trajectory, "trajectory_readout.png");
    trajectory.setColourBy(TrajectoryView::ColourBy::Density);
    report(qPrintable(trajCase), "density", width, height, frames, measure(trajectory.vtkWidget(), frames, 0.0001));
    save(trajectory, "trajectory_density.png");
    // What a drag shows: the style announces the interaction, the view switches
    // to its coarse level (TrajectoryView::kDefaultInteractivePoints).
    vtkInteractorObserver* style = trajectory.vtkWidget()->interactor()->GetInteractorStyle();
    style->InvokeEvent(vtkCommand::StartInteractionEvent);
    report(qPrintable(QString("trajectory, dragging: %1 points").arg(trajectory.drawnPointsInteractive())), "density",
           width, height, frames, measure(trajectory.vtkWidget(), frames, 15));
    style->InvokeEvent(vtkCommand::EndInteractionEvent);
    // The same points without the extent box's axes and the colour bar: what
    // the annotation costs per frame.
    vtkPropCollection* props = trajectory.renderer()->GetViewProps();
    props->InitTraversal();
    while (vtkProp* p = props->GetNextProp()) {
        auto* actor = vtkActor::SafeDownCast(p);
        if (!actor || !vtkPointGaussianMapper::SafeDownCast(actor->GetMapper())) p->VisibilityOff();
    }
    report(qPrintable(trajCase + " only"), "density", width, height, frames, measure(trajectory.vtkWidget(), frames, 0.0001));
    std::printf("trajectory setTrajectory (%zu samples): %.1f ms\n", traj.samples(), buildMs);
    trajectory.hide();
    if (!compare.isEmpty()) return comparePair(compare[0], compare[1], width, height, shots);
    return 0;
}
