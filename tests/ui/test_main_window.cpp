// The whole window on the offscreen platform: a solve on a demo case with the
// status bar, panels and plot following it; the screenshot the docs use; the
// saves (images through the engine's writers, comparison PNG, CSV, settings);
// drag and drop; and closing in the middle of a solve.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "recon/io/dataset_io.hpp"
#include "ui/comparison_grid.hpp"
#include "ui/convergence_plot.hpp"
#include "ui/data_panel.hpp"
#include "ui/main_window.hpp"
#include "ui/readout_table.hpp"
#include "ui/slice_view.hpp"
#include "ui/tune_panel.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

MainWindowOptions headless() {
    MainWindowOptions o;
    o.enable_3d = false;  // no OpenGL on the offscreen platform
    o.persist_settings = false;
    return o;
}

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

void useSettings(MainWindow& w, int iterations) {
    ReconSettings s = w.controller()->settings();
    s.iterations = iterations;
    s.backend = recon::BackendChoice::Cpu;
    w.controller()->setSettings(s);
}

// Standard deviation of the grey levels in a widget's area of a window capture.
double contrast(const QImage& shot, const QRect& area) {
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); y += 2)
        for (int x = area.left(); x <= area.right(); x += 2) {
            const double g = qGray(shot.pixel(x, y));
            sum += g;
            sum2 += g * g;
            ++n;
        }
    const double mean = sum / n;
    return std::sqrt(std::max(0.0, sum2 / n - mean * mean));
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void solvesADemoAndSavesTheScreenshot() {
        MainWindow w(headless());
        w.resize(1366, 768);  // the smallest screen it is laid out for (issue 16)
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.windowTitle().startsWith("ReconStudio"));
        useSettings(w, 15);
        QSignalSpy records(w.controller(), &ReconstructionController::iterationAdvanced);
        // The 128^2 radial case: small enough for a test, large enough to show what
        // the methods do (docs/images/workstation.png is this screenshot).
        const QString demo = QStringLiteral("radial-2d");
        w.openDemo(demo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Completed));

        QVERIFY(w.windowTitle().startsWith("ReconStudio"));
        QVERIFY(w.windowTitle().contains(demo));
        // Status bar: per-iteration progress at its end, and what the session cached.
        QCOMPARE(w.progressBar()->maximum(), 15);
        QCOMPARE(w.progressBar()->value(), 15);
        QVERIFY(w.cacheLabel()->text().contains("Q, F^H d"));
        QVERIFY(w.cacheLabel()->toolTip().contains("Q ("));  // how each was made
        // Data panel: the engine's facts and the conventions.
        QVERIFY(w.dataPanel()->field("Matrix").startsWith("128x128"));
        QVERIFY(w.dataPanel()->field("Samples").startsWith(QLocale::c().toString(qint64(w.controller()->dataset()->samples()))));
        QVERIFY(w.dataPanel()->field("lambda scale").contains(QString::number(w.controller()->summary().lambda_scale, 'g', 5)));
        QVERIFY(w.dataPanel()->field("Memory needed").contains("float32"));
        QVERIFY(!w.dataPanel()->field("Device").isEmpty());
        // Convergence plot: one point per iteration, and the gridding reference lines.
        QCOMPARE(records.count(), 15);
        QCOMPARE(w.convergence()->pointCount("residual"), 15);
        QCOMPARE(w.convergence()->pointCount("psnr"), 15);
        QCOMPARE(w.convergence()->pointCount("ref-gridding-kb"), 2);
        QCOMPARE(w.convergence()->pointCount("ref-gridding-trilinear"), 2);
        QCOMPARE(w.convergence()->pointCount("ref-floor"), 2);
        QCOMPARE(w.comparison()->readouts()->floorCell(0),
                 QString::number(w.controller()->layers().floor()->psnr_db, 'f', 2));
        // The tune panel's lambda is the controller's.
        QCOMPARE(TunePanel::lambdaAt(w.tunePanel()->lambdaSlider()->value()),
                 TunePanel::lambdaAt(TunePanel::sliderPosition(w.controller()->settings().lambda)));

        // The screenshot: every image view shows an image, not a blank.
        const QImage shot = w.grab().toImage();
        QVERIFY(!shot.isNull());
        for (Layer l : {Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel, Layer::Iterative}) {
            SliceView* v = w.comparison()->view(l);
            const QRect area(v->mapTo(&w, QPoint(0, 0)), v->size());
            QVERIFY2(contrast(shot, area) > 20, qPrintable(layerTitle(l)));
        }
        const QString path = QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/workstation.png");
        QVERIFY(shot.save(path, "PNG"));
        qInfo("screenshot: %s", qPrintable(path));
    }

    void tuningLambdaRerunsOnlyCgAfterTheDebounce() {
        MainWindow w(headless());
        w.show();
        useSettings(w, 4);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        const quint64 generation = w.controller()->generation();
        QStringList phases;
        connect(w.controller(), &ReconstructionController::phaseChanged, this,
                [&phases](const QString& p) { if (!phases.contains(p)) phases << p; });

        // Three slider steps in a row (as keys do): lambda follows at once, one solve follows.
        QSlider* slider = w.tunePanel()->lambdaSlider();
        const int start = slider->value();
        for (int k = 0; k < 3; ++k) QTest::keyClick(slider, Qt::Key_PageUp);
        QCOMPARE(slider->value(), start + 3 * slider->pageStep());
        QVERIFY(std::abs(w.controller()->settings().lambda / TunePanel::lambdaAt(slider->value()) - 1) < 1e-12);
        QCOMPARE(w.tunePanel()->lambdaField()->text(), QString::number(w.controller()->settings().lambda, 'g', 3));
        QCOMPARE(w.controller()->generation(), generation);  // debounced
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->generation() == generation + 1, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Completed));
        QCOMPARE(phases, QStringList{QStringLiteral("CG")});  // Q, F^H d and gridding were cached

        // A typed value moves the slider too.
        w.tunePanel()->lambdaField()->setText(QStringLiteral("0.1"));
        emit w.tunePanel()->lambdaField()->editingFinished();
        QCOMPARE(w.controller()->settings().lambda, 0.1);
        QCOMPARE(slider->value(), TunePanel::sliderPosition(0.1));
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->generation() == generation + 2, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        // The lambda change's own iterations: until the first solve's residual, within the budget of 4.
        QVERIFY(!w.controller()->history().empty() && w.controller()->history().size() <= std::size_t(4));
    }

    void savesImagesPngCsvAndSettings() {
        QTemporaryDir dir;
        MainWindow w(headless());
        w.resize(1400, 900);
        w.show();
        useSettings(w, 5);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Completed));

        // Images through the engine's writers, read back through its readers.
        QString error;
        QVERIFY2(w.saveImages(dir.filePath("result.cfl"), &error), qPrintable(error));
        for (const char* key : {"truth", "gridding-trilinear", "gridding-kb", "iterative"})
            QVERIFY2(QFile::exists(dir.filePath(QStringLiteral("result_%1.cfl").arg(key))), key);
        recon::Grid g;
        const recon::ComplexArray back = recon::readImage(dir.filePath("result_iterative.cfl").toStdString(), &g);
        const recon::ComplexArray& shown = *w.controller()->layers().get(Layer::Iterative)->volume.data;
        QCOMPARE(back.size(), shown.size());
        for (std::size_t i = 0; i < back.size(); i += 31) QVERIFY(std::abs(back[i] - shown[i]) <= 1e-6 * std::abs(shown[i]) + 1e-12);

        QVERIFY(w.saveComparisonPng(dir.filePath("comparison.png")));
        const QImage png(dir.filePath("comparison.png"));
        QCOMPARE(png.size(), w.comparison()->size() * w.comparison()->devicePixelRatio());

        QVERIFY2(w.saveConvergenceCsv(dir.filePath("convergence.csv"), &error), qPrintable(error));
        QFile csv(dir.filePath("convergence.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(csv.readAll().trimmed().split('\n').size(), 1 + 5);

        QVERIFY2(w.saveSettings(dir.filePath("settings.json"), &error), qPrintable(error));
        const ReconSettings saved = w.controller()->settings();
        useSettings(w, 9);
        QVERIFY2(w.loadSettings(dir.filePath("settings.json"), &error), qPrintable(error));
        QCOMPARE(w.controller()->settings(), saved);
        QVERIFY(!w.loadSettings(dir.filePath("missing.json"), &error));
        QVERIFY(error.contains("missing.json"));
        QVERIFY(!w.saveConvergenceCsv(dir.filePath("no/such/dir/c.csv"), &error));
        QVERIFY(error.contains("c.csv"));
    }

    // Issue 16, item 9: a failed open says so in a dialog and stays out of Open
    // Recent; a save says where it wrote; About says the software is not for diagnosis.
    void failedOpenShowsADialogAndStaysOutOfRecent() {
        QTemporaryDir dir;
        MainWindow w(headless());
        w.show();
        useSettings(w, 3);
        const QString bad = dir.filePath("not-a-scan.h5");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not HDF5");
        f.close();
        w.openFile(bad);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Failed));
        auto* dialog = w.findChild<QMessageBox*>(QStringLiteral("error-dialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        QVERIFY2(dialog->text().contains(QStringLiteral("not-a-scan.h5")), qPrintable(dialog->text()));
        QVERIFY(!w.recentFiles().contains(QFileInfo(bad).absoluteFilePath()));
        dialog->close();
    }

    void savesSayWhereTheyWrote() {
        QTemporaryDir dir;
        MainWindow w(headless());
        w.show();
        useSettings(w, 3);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QString error;
        QVERIFY2(w.saveConvergenceCsv(dir.filePath("history.csv"), &error), qPrintable(error));
        QVERIFY2(w.statusBar()->currentMessage().contains(QFileInfo(dir.filePath("history.csv")).absoluteFilePath()),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY2(w.saveSettings(dir.filePath("s.json"), &error), qPrintable(error));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("s.json")));
        QVERIFY(MainWindow::aboutText().contains(QStringLiteral("Not for diagnostic use")));
    }

    // Issue 16, item 10: after Cancel the bar keeps no stale "time left".
    void cancelLeavesNoTimeLeft() {
        MainWindow w(headless());
        w.show();
        useSettings(w, 100000);
        bool iterating = false;
        connect(w.controller(), &ReconstructionController::iterationAdvanced, this, [&] { iterating = true; });
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(iterating && w.progressBar()->format().contains(QStringLiteral("left")), kSolveTimeoutMs);
        w.controller()->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QCOMPARE(toString(w.controller()->state()), toString(JobState::Cancelled));
        QVERIFY2(!w.progressBar()->format().contains(QStringLiteral("left")), qPrintable(w.progressBar()->format()));
        QVERIFY2(w.progressBar()->format().contains(toString(JobState::Cancelled)), qPrintable(w.progressBar()->format()));
    }

    void dropOpensAFileAndRemembersIt() {
        bool hdf5 = false;
        for (const auto& f : recon::supportedInputFormats()) hdf5 |= f.find("ReconStudio HDF5") != std::string::npos;
        if (!hdf5) QSKIP("built without HDF5: no single-file data set format to drop");
        QTemporaryDir dir;
        MainWindow w(headless());
        w.show();
        useSettings(w, 3);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        // A data set written by the engine's writer, dropped on the window.
        const QString file = dir.filePath("dropped.h5");
        recon::writeDataset(file.toStdString(), *w.controller()->dataset());
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(file)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QSignalSpy changed(w.controller(), &ReconstructionController::datasetChanged);
        QCoreApplication::sendEvent(&w, &drop);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QVERIFY2(w.controller()->state() == JobState::Completed, qPrintable(w.controller()->lastError()));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(w.controller()->summary().origin, file);
        QCOMPARE(w.recentFiles().value(0), QFileInfo(file).absoluteFilePath());
    }

    void closingMidSolveDoesNotCrash() {
        auto* w = new MainWindow(headless());
        w->show();
        useSettings(*w, 100000);
        bool iterating = false;
        connect(w->controller(), &ReconstructionController::iterationAdvanced, this, [&] { iterating = true; });
        w->openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(iterating, kSolveTimeoutMs);
        QVERIFY(w->close());
        QElapsedTimer t;
        t.start();
        delete w;
        QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));  // cancel lands at the next iteration
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
