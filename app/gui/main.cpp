// reconstudio: the Qt 6 workstation. Parses the command line, refuses politely
// where there is no display, opens the data (a file, a demo case, or the
// default demo) and, with --screenshot, saves the window after the solve and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "recon/core/errors.hpp"
#include "recon/core/host_memory.hpp"
#include "recon/core/version.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/session/demo_cases.hpp"
#include "ui/main_window.hpp"
#ifdef RECONSTUDIO_HAVE_VTK_VIEWS
#include "ui/vtk/vtk_widget.hpp"
#endif

namespace {

void describeApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("ReconStudio"));
    QCoreApplication::setApplicationName(QStringLiteral("reconstudio"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RECONSTUDIO_VERSION));
}

struct Options {
    QCommandLineOption demo{QStringLiteral("demo"), QStringLiteral("Open the built-in demo case NAME (default: \"default\"; CT: ct-2d, ct-2d-sparse, ct-2d-lowdose, ct-2d-short, ct-3d)."),
                            QStringLiteral("NAME")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Reconstruct, save the window as a PNG image to FILE, and exit (status 0 when the solve completed)."),
        QStringLiteral("FILE")};
    QCommandLineOption iterations{QStringLiteral("iterations"), QStringLiteral("CG iterations (default: the last used, or 60 as reconstudio-cli)."),
                                  QStringLiteral("N")};
    QCommandLineOption lambda{QStringLiteral("lambda"), QStringLiteral("Regularisation weight lambda (it multiplies s = Q(0))."),
                              QStringLiteral("VALUE")};
    QCommandLineOption backend{QStringLiteral("backend"), QStringLiteral("auto, cpu or cuda (default: auto)."),
                               QStringLiteral("KIND")};
    QCommandLineOption size{QStringLiteral("size"),
                            QStringLiteral("Window size for --screenshot, e.g. 1366x768 (default: 1600x1000)."),
                            QStringLiteral("WxH")};

    void addTo(QCommandLineParser& p) {
        p.setApplicationDescription(
            QStringLiteral("ReconStudio %1: non-Cartesian MRI reconstruction, gridding and the iterative method side by side.\n"
                           "Without a display, run it as: xvfb-run -a reconstudio [options]")
                .arg(QStringLiteral(RECONSTUDIO_VERSION)));
        p.addHelpOption();
        p.addVersionOption();
        p.addOptions({demo, screenshot, iterations, lambda, backend, size});
        p.addPositionalArgument(QStringLiteral("file"),
                                QStringLiteral("A data set to open (ReconStudio HDF5, ISMRMRD, BART cfl/hdr)."),
                                QStringLiteral("[file]"));
    }
};

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        for (const char* flag : {"-h", "--help", "--help-all", "-v", "--version"})
            if (std::strcmp(argv[i], flag) == 0) return true;
    return false;
}

// True when Qt will find a display (or has been told which platform to use).
bool haveDisplay(int argc, char** argv) {
    auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    if (set("QT_QPA_PLATFORM") || set("DISPLAY") || set("WAYLAND_DISPLAY")) return true;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    recon::retainLargeHostAllocations();
    describeApplication();
    if (asksForHelpOrVersion(argc, argv)) {
        // --help and --version need no display: answer them before any window system is touched.
        QCoreApplication probe(argc, argv);
        QCommandLineParser parser;
        Options options;
        options.addTo(parser);
        parser.process(probe);  // prints and exits
        return 0;
    }
    if (!haveDisplay(argc, argv)) {
        std::fprintf(stderr,
                     "reconstudio: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
                     "  Run it under a virtual X server:      xvfb-run -a reconstudio [options]\n"
                     "  or without a window system at all:    QT_QPA_PLATFORM=offscreen reconstudio --screenshot out.png\n"
                     "  (the offscreen platform has no OpenGL, so the 3D views are left out there).\n");
        return 2;
    }
#ifdef RECONSTUDIO_HAVE_VTK_VIEWS
    reconstudio::vtkviews::VtkWidget::setDefaultSurfaceFormat();  // VTK needs OpenGL 3.2 core; before QApplication
#endif
    QApplication app(argc, argv);
    describeApplication();
    QCommandLineParser parser;
    Options options;
    options.addTo(parser);
    parser.process(app);

    // QOpenGLWidget does not work on the offscreen or minimal platforms.
    const QString platform = QGuiApplication::platformName();
    studio::MainWindowOptions window_options;
    window_options.enable_3d = platform != QLatin1String("offscreen") && platform != QLatin1String("minimal");
    const QString screenshot = parser.value(options.screenshot);
    window_options.persist_settings = screenshot.isEmpty();  // a screenshot is the same on every machine

    studio::MainWindow window(window_options);
    studio::ReconSettings settings = window.controller()->settings();
    QSize screenshot_size(1600, 1000);
    try {
        if (parser.isSet(options.iterations)) {
            bool ok = false;
            settings.iterations = parser.value(options.iterations).toInt(&ok);
            if (!ok || settings.iterations < 1)
                throw recon::InputError("--iterations: expected a positive integer, got '" +
                                        parser.value(options.iterations).toStdString() + "'");
        }
        if (parser.isSet(options.lambda)) {
            bool ok = false;
            settings.lambda = parser.value(options.lambda).toDouble(&ok);
            if (!ok || settings.lambda < 0)
                throw recon::InputError("--lambda: expected a number >= 0, got '" + parser.value(options.lambda).toStdString() + "'");
        }
        if (parser.isSet(options.backend))
            settings.backend = recon::parseBackendChoice(parser.value(options.backend).toStdString());
        if (parser.isSet(options.size)) {
            const QStringList wh = parser.value(options.size).split(QLatin1Char('x'));
            bool ok_w = false, ok_h = false;
            screenshot_size = wh.size() == 2 ? QSize(wh[0].toInt(&ok_w), wh[1].toInt(&ok_h)) : QSize();
            if (!ok_w || !ok_h || screenshot_size.width() < 200 || screenshot_size.height() < 200)
                throw recon::InputError("--size: expected WIDTHxHEIGHT such as 1366x768, got '" +
                                        parser.value(options.size).toStdString() + "'");
        }
        if (parser.isSet(options.demo) && !recon::ct::isCtCase(parser.value(options.demo).toStdString())) {
            try {
                recon::demoCase(parser.value(options.demo).toStdString());  // names the valid MR ones
            } catch (const recon::InputError& e) {
                std::string ct;
                for (const recon::ct::CtCase& c : recon::ct::ctDemoCases()) ct += (ct.empty() ? "" : ", ") + c.name;
                throw recon::InputError(std::string(e.what()) + "; CT: " + ct);
            }
        }
        if (parser.positionalArguments().size() > 1) throw recon::InputError("give at most one file to open");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reconstudio: %s\n", e.what());
        return 1;
    }
    window.controller()->setSettings(settings);

    if (!screenshot.isEmpty()) {
        window.resize(screenshot_size);
        // Save once the job has ended, whatever way it ended; the exit status says how.
        QObject::connect(window.controller(), &studio::ReconstructionController::jobFinished, &window,
                         [&window, &app, screenshot](const studio::JobOutcome& outcome) {
                             QTimer::singleShot(100, &window, [&window, &app, screenshot, outcome] {
                                 const bool saved = window.grab().save(screenshot, "PNG");
                                 if (!saved) std::fprintf(stderr, "reconstudio: could not write %s\n", qPrintable(screenshot));
                                 if (outcome.state != studio::JobState::Completed)
                                     std::fprintf(stderr, "reconstudio: the reconstruction %s%s%s\n",
                                                  qPrintable(studio::toString(outcome.state)),
                                                  outcome.message.isEmpty() ? "" : ": ", qPrintable(outcome.message));
                                 else
                                     std::printf("reconstudio: saved %s (%d CG iterations in %.2f s)\n",
                                                 qPrintable(screenshot), outcome.iterations_done, outcome.seconds);
                                 app.exit(saved && outcome.state == studio::JobState::Completed ? 0 : 1);
                             });
                         });
    }
    window.show();

    const QStringList files = parser.positionalArguments();
    if (!files.isEmpty()) {
        window.openFile(QFileInfo(files.front()).absoluteFilePath());
    } else {
        // The case's tuned lambda and regulariser, unless --lambda chose one.
        window.openDemo(parser.isSet(options.demo) ? parser.value(options.demo) : QStringLiteral("default"),
                        !parser.isSet(options.lambda));
    }
    return app.exec();
}
