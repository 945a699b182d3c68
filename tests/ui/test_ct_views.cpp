// CT in the workstation (issue 18): a CT demo case and a CT file run FDK and the
// iterative solve through the same controller, worker and views as MR; what is shown
// equals what the engine's CtSession computes; the sinogram view model shows the
// projections of one detector row; the data panel names the geometry. Also writes
// build/screenshots/ct-*.png (docs/GUI.md, README).
#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/ct/ct_file.hpp"
#include "recon/ct/iterative.hpp"
#include "recon/session/ct_session.hpp"
#include "recon/session/reconstruction.hpp"
#include "ui/comparison_grid.hpp"
#include "ui/ct_scene.hpp"
#include "ui/data_panel.hpp"
#include "ui/main_window.hpp"
#include "ui/readout_table.hpp"
#include "ui/sinogram_view.hpp"
#include "ui/sinogram_view_model.hpp"
#include "ui/slice_view.hpp"
#include "main_window_test_support.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

ReconSettings cpuSettings(ReconSettings s, int iterations) {
    s.iterations = iterations;
    s.backend = recon::BackendChoice::Cpu;
    s.precision = recon::Precision::Single;
    return s;
}

// Largest |a - b| over the voxels, relative to max |b|.
double relativeDifference(const recon::ComplexArray& shown, const std::vector<double>& engine) {
    if (shown.size() != engine.size()) return 1e300;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < engine.size(); ++i) {
        diff = std::max(diff, std::abs(shown[i] - engine[i]));
        scale = std::max(scale, std::abs(engine[i]));
    }
    return diff / std::max(scale, 1e-300);
}

// A small cone-beam scan: 16^3 voxels of 4 mm, a 24 x 20 detector, 12 views.
recon::ct::CtCase smallCone() {
    recon::ct::CtCase c = recon::ct::ctDemoCase("ct-3d");
    c.name = "small-cone";
    c.geometry.volume.size = {16, 16, 16};
    c.geometry.volume.voxel_mm = {4, 4, 4};
    c.geometry.beam.detector_columns = 24;
    c.geometry.beam.detector_rows = 20;
    c.geometry.beam.pixel_u_mm = c.geometry.beam.pixel_v_mm = 6;
    c.geometry.beam.angles_rad = recon::ct::fullScanAngles(12);
    c.subpixels = 1;
    return c;
}

}  // namespace

class TestCtViews : public QObject {
    Q_OBJECT
private slots:
    // ct-2d-sparse through the controller: FDK, then CG with progress per iteration;
    // the images shown are the session's, the iterative one beats FDK; a λ change is warm.
    void sparseDemoEqualsSession() {
        ReconstructionController c;
        c.setDebounceInterval(10);
        c.setSettings(cpuSettings(c.settings(), 20));
        QSignalSpy iterations(&c, &ReconstructionController::iterationAdvanced);
        QSignalSpy progress(&c, &ReconstructionController::progressChanged);
        c.openDemo(QStringLiteral("ct-2d-sparse"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.state() == JobState::Completed);
        QVERIFY(c.modality() == Modality::Ct);
        QVERIFY(c.ctData());
        QVERIFY(c.settings().regularizer == recon::RegularizerKind::FiniteDifference);
        QCOMPARE(c.settings().lambda, recon::ct::defaultLambda(recon::RegularizerKind::FiniteDifference));
        QVERIFY(c.layers().modality() == Modality::Ct);
        QCOMPARE(c.layers().title(Layer::GriddingKaiserBessel), QStringLiteral("FDK"));
        QCOMPARE(c.layers().title(Layer::Iterative), QStringLiteral("Iterative (WLS)"));
        QVERIFY(!c.layers().has(Layer::GriddingTrilinear));
        for (Layer l : layersOf(Modality::Ct)) QVERIFY2(c.layers().has(l), qPrintable(layerKey(l)));
        QVERIFY(iterations.count() >= 1);  // records batched at most every 40 ms
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last().at(0).toInt(), 20);
        QCOMPARE(int(c.history().size()), 20);
        QVERIFY(c.summary().lambda_scale > 0);

        // The engine on its own, same data, backend, options.
        auto data = std::make_shared<const recon::ct::CtData>(recon::ct::simulate(recon::ct::ctDemoCase("ct-2d-sparse")));
        std::string note;
        recon::CtSession session(recon::createBackend(recon::BackendChoice::Cpu, recon::Precision::Single, &note), data);
        recon::CallbackMonitor monitor;
        const recon::CtResult fdk = session.fdk(recon::ct::FdkOptions{}, monitor);
        recon::CtSolveOptions o;
        o.iterative.prior = recon::RegularizerKind::FiniteDifference;
        o.iterative.lambda = c.settings().lambda;
        o.iterations = 20;
        const recon::CtResult it = session.solve(o, monitor);
        QCOMPARE(c.summary().lambda_scale, it.lambda_scale);

        const LayerImage* shown_fdk = c.layers().get(Layer::GriddingKaiserBessel);
        const LayerImage* shown_it = c.layers().get(Layer::Iterative);
        const double d_fdk = relativeDifference(*shown_fdk->volume.data, fdk.image);
        const double d_it = relativeDifference(*shown_it->volume.data, it.image);
        QVERIFY2(d_fdk == 0, qPrintable(QString::number(d_fdk)));
        QVERIFY2(d_it <= 1e-12, qPrintable(QString::number(d_it)));
        const recon::ComplexArray truth(data->truth.begin(), data->truth.end());
        const recon::Quality q_fdk = recon::measureQuality(recon::ComplexArray(fdk.image.begin(), fdk.image.end()), truth, false);
        const recon::Quality q_it = recon::measureQuality(recon::ComplexArray(it.image.begin(), it.image.end()), truth, false);
        QVERIFY(shown_fdk->quality && shown_it->quality);
        QCOMPARE(shown_fdk->quality->psnr_db, q_fdk.psnr_db);
        QVERIFY(std::abs(shown_it->quality->psnr_db - q_it.psnr_db) < 1e-9);
        qInfo("ct-2d-sparse, 20 CG iterations, lambda %g: FDK %.2f dB / %.2f %%, Iterative (WLS) %.2f dB / %.2f %%",
              c.settings().lambda, q_fdk.psnr_db, q_fdk.error_percent, q_it.psnr_db, q_it.error_percent);
        QVERIFY(q_it.psnr_db > q_fdk.psnr_db);
        // The difference maps are image - truth.
        const LayerImage* diff = c.layers().get(Layer::DifferenceKaiserBessel);
        QCOMPARE((*diff->volume.data)[1000], (*shown_fdk->volume.data)[1000] - truth[1000]);

        // λ tuning continues the resident solve warm: 20 more iterations on top of 20.
        const recon::ComplexArray before = *shown_it->volume.data;
        c.setLambda(0.2);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c) && c.warmStart(), kSolveTimeoutMs);
        QVERIFY(c.state() == JobState::Completed);
        QCOMPARE(c.totalIterations(), 40);
        QVERIFY(*c.layers().get(Layer::Iterative)->volume.data != before);
        // The engine's warm continuation gives the same image.
        o.iterative.lambda = 0.2;
        o.warm_start = true;
        const recon::CtResult warm = session.solve(o, monitor);
        QVERIFY(warm.warm_started);
        QVERIFY(relativeDifference(*c.layers().get(Layer::Iterative)->volume.data, warm.image) <= 1e-12);
        // Reconstruct starts from zero again.
        c.reconstruct();
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(!c.warmStart());
        QCOMPARE(c.totalIterations(), 20);
    }

    // Cancel mid-solve keeps the last complete iterate.
    void cancelKeepsLastIterate() {
        ReconstructionController c;
        c.setSettings(cpuSettings(c.settings(), 2000));
        c.openDemo(QStringLiteral("ct-2d-sparse"));
        QTRY_VERIFY_WITH_TIMEOUT(c.history().size() >= 3, kSolveTimeoutMs);
        c.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.state() == JobState::Cancelled);
        QVERIFY(c.layers().has(Layer::Iterative));
        QVERIFY(c.totalIterations() < 2000);
        // A prior CT has no use for is refused with the engine's reason; FDK stays shown.
        ReconSettings s = c.settings();
        s.iterations = 3;
        s.regularizer = recon::RegularizerKind::AnatomicalFiniteDifference;
        c.setSettings(s);
        c.reconstruct();
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.state() == JobState::Failed);
        QVERIFY2(c.lastError().contains(QStringLiteral("not available")), qPrintable(c.lastError()));
        QVERIFY(c.layers().has(Layer::GriddingKaiserBessel));
    }

    // File ▸ Open on a CT HDF5 file takes the CT path.
    void openCtFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("scan.h5"));
        recon::ct::writeCtFile(path.toStdString(), recon::ct::simulate(smallCone()));
        ReconstructionController c;
        c.setSettings(cpuSettings(c.settings(), 4));
        c.openFile(path);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.state() == JobState::Completed);
        QVERIFY(c.modality() == Modality::Ct);
        QCOMPARE(c.summary().grid.dims, 3);
        QCOMPARE(c.summary().ct_geometry.beam.detector_rows, 20);
        QVERIFY(c.layers().has(Layer::GriddingKaiserBessel) && c.layers().has(Layer::Iterative));
        // An MR demo afterwards is MR again.
        c.setSettings(cpuSettings(c.settings(), 2));
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(c.modality() == Modality::Mr);
        QCOMPARE(c.layers().title(Layer::GriddingKaiserBessel), QStringLiteral("Gridding (Kaiser-Bessel)"));
        QVERIFY(c.layers().has(Layer::GriddingTrilinear));
    }

    // The sinogram view model's image is the projections of its detector row.
    void sinogramEqualsProjectionRow() {
        auto scan = std::make_shared<const recon::ct::CtData>(recon::ct::simulate(smallCone()));
        SinogramViewModel m;
        QSignalSpy changed(&m, &SinogramViewModel::changed);
        m.setScan(scan);
        QCOMPARE(m.rows(), 20);
        QCOMPARE(m.row(), 10);  // the central row
        QCOMPARE(m.views(), 12);
        QCOMPARE(m.columns(), 24);
        m.setRow(7);
        QCOMPARE(changed.count(), 2);
        const int nu = 24, nv = 20;
        for (int view = 0; view < 12; ++view)
            for (int u = 0; u < nu; ++u)
                QCOMPARE(m.image()[std::size_t(view * nu + u)], scan->projections[std::size_t((view * nv + 7) * nu + u)]);
        const QImage image = m.render();
        QCOMPARE(image.size(), QSize(24, 12));
        const auto hi = std::max_element(m.image().begin(), m.image().end());
        const auto lo = std::min_element(m.image().begin(), m.image().end());
        QVERIFY(*hi > *lo);
        QCOMPARE(qGray(image.pixel(int(hi - m.image().begin()) % nu, int(hi - m.image().begin()) / nu)), 255);
        QCOMPARE(qGray(image.pixel(int(lo - m.image().begin()) % nu, int(lo - m.image().begin()) / nu)), 0);
        m.setRow(99);
        QCOMPARE(m.row(), 19);
        QVERIFY(std::abs(m.angleDegrees(3) - 90.0) < 1e-9);
        // The widget follows the model; its spin box sets the row.
        SinogramView view(&m);
        QCOMPARE(view.rowBox()->maximum(), 19);
        view.rowBox()->setValue(4);
        QCOMPARE(m.row(), 4);
        QVERIFY(view.caption().contains(QStringLiteral("12 views")));
        m.setScan(nullptr);
        QVERIFY(m.image().empty() && m.render().isNull());
    }

    // The 3D tab's scene: the orbit at D_so in z = 0, the source at β, the detector centred
    // D_sd - D_so behind the isocentre, facing the source, n_u p_u wide.
    void sceneGeometry() {
        const recon::ct::CtCase c = smallCone();
        const auto& beam = c.geometry.beam;
        const CtScene s = ctScene(beam, 3, 64);
        QCOMPARE(int(s.orbit.size()), 65);
        for (const Point3& p : s.orbit) {
            QVERIFY(std::abs(std::hypot(p[0], p[1]) - beam.source_to_isocentre_mm) < 1e-9);
            QCOMPARE(p[2], 0.0);
        }
        const double b = beam.angles_rad[3];
        QVERIFY(std::abs(s.source[0] - beam.source_to_isocentre_mm * std::cos(b)) < 1e-9);
        QVERIFY(std::abs(s.source[1] - beam.source_to_isocentre_mm * std::sin(b)) < 1e-9);
        Point3 centre{0, 0, 0};
        for (const Point3& p : s.detector)
            for (int a = 0; a < 3; ++a) centre[a] += p[a] / 4;
        // Source to detector centre: D_sd along −(cos β, sin β).
        const double dx = centre[0] - s.source[0], dy = centre[1] - s.source[1];
        QVERIFY(std::abs(std::hypot(dx, dy) - beam.source_to_detector_mm) < 1e-9);
        QVERIFY(std::abs(dx * std::sin(b) - dy * std::cos(b)) < 1e-9);
        const double width = std::hypot(s.detector[1][0] - s.detector[0][0], s.detector[1][1] - s.detector[0][1]);
        QVERIFY(std::abs(width - beam.detector_columns * beam.pixel_u_mm) < 1e-9);
        QVERIFY(std::abs(s.detector[2][2] - s.detector[1][2] - beam.detector_rows * beam.pixel_v_mm) < 1e-9);
        QCOMPARE(ctScene(beam, 99).angle_rad, beam.angles_rad.back());  // clamped
    }

    // The window: data panel names the geometry, the sinogram tab is there for CT only,
    // the views are titled FDK / Iterative (WLS); the screenshots for docs/GUI.md and the README.
    void windowShowsCt() {
        const auto window = showMainWindow(QSize(1366, 768));
        MainWindow& w = *window;
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // The low-dose scan's facts (loaded only), then the sparse-view scan solved.
        w.controller()->setSettings(cpuSettings(w.controller()->settings(), 40));
        w.controller()->setAutoReconstruct(false);
        w.openDemo(QStringLiteral("ct-2d-lowdose"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        QVERIFY(w.controller()->modality() == Modality::Ct);
        const recon::ct::CtGeometry g = recon::ct::ctDemoCase("ct-2d-lowdose").geometry;
        DataPanel* p = w.dataPanel();
        const QString geometry = p->field(QStringLiteral("Geometry"));
        QVERIFY2(geometry.contains(QStringLiteral("fan beam")), qPrintable(geometry));
        QVERIFY2(geometry.contains(QStringLiteral("D_so %1 mm").arg(g.beam.source_to_isocentre_mm)), qPrintable(geometry));
        QVERIFY2(geometry.contains(QStringLiteral("D_sd %1 mm").arg(g.beam.source_to_detector_mm)), qPrintable(geometry));
        const QString detector = p->field(QStringLiteral("Detector"));
        QVERIFY2(detector.contains(QStringLiteral("%1 x 1 pixels of %2 x").arg(g.beam.detector_columns).arg(g.beam.pixel_u_mm)),
                 qPrintable(detector));
        const QString views = p->field(QStringLiteral("Views"));
        QVERIFY2(views.startsWith(QStringLiteral("360 over 360.0 deg (full scan)")), qPrintable(views));
        const QString volume = p->field(QStringLiteral("Volume"));
        QVERIFY2(volume.contains(QStringLiteral("128 x 128 x 1 voxels of 2 x 2 x 2 mm")), qPrintable(volume));
        const QString photons = p->field(QStringLiteral("Photons"));
        const double i0 = recon::ct::ctDemoCase("ct-2d-lowdose").photons;
        QVERIFY2(photons.contains(QStringLiteral("%1 per pixel").arg(i0)), qPrintable(photons));
        const double tuned = recon::ct::ctDemoCase("ct-2d-lowdose").fd_lambda;
        QCOMPARE(w.controller()->settings().lambda, tuned > 0 ? tuned : recon::ct::defaultLambda(recon::RegularizerKind::FiniteDifference));
        QVERIFY(p->field(QStringLiteral("lambda scale")).contains(QStringLiteral("trace(A^T W A)")));
        QVERIFY(p->field(QStringLiteral("Samples")).contains(QStringLiteral("69120 projection values (360 views x 192 pixels)")));
        qInfo("data panel: %s | %s | %s | %s | %s", qPrintable(geometry), qPrintable(detector), qPrintable(views),
              qPrintable(volume), qPrintable(photons));

        QVERIFY(w.centreTabs()->isTabVisible(w.centreTabs()->indexOf(w.sinogramView())));
        QCOMPARE(w.sinogramModel()->views(), 360);

        w.controller()->setAutoReconstruct(true);
        w.openDemo(QStringLiteral("ct-2d-sparse"));
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()) && w.controller()->layers().has(Layer::Iterative), kSolveTimeoutMs);
        QVERIFY(w.controller()->state() == JobState::Completed);
        QVERIFY(p->field(QStringLiteral("Photons")).contains(QStringLiteral("noiseless")));
        QVERIFY(p->field(QStringLiteral("Views")).startsWith(QStringLiteral("60 over 360.0 deg")));
        QVERIFY(p->field(QStringLiteral("lambda scale")).contains(QStringLiteral("= ")));
        QCOMPARE(w.sinogramModel()->views(), 60);
        QVERIFY(!w.comparison()->view(Layer::GriddingTrilinear)->isVisible());
        QVERIFY(w.comparison()->view(Layer::GriddingKaiserBessel)->title().startsWith(QStringLiteral("FDK  ")));
        QVERIFY(w.comparison()->view(Layer::Iterative)->title().startsWith(QStringLiteral("Iterative (WLS)  ")));
        QVERIFY(!w.comparison()->readouts()->cell(Layer::Iterative, 0).isEmpty());
        const double fdk = w.controller()->layers().get(Layer::GriddingKaiserBessel)->quality->psnr_db;
        const double iterative = w.controller()->layers().get(Layer::Iterative)->quality->psnr_db;
        qInfo("ct-2d-sparse, 40 CG iterations: FDK %.2f dB, Iterative (WLS) %.2f dB", fdk, iterative);
        QVERIFY(iterative > fdk);

        // File ▸ Save Images: NAME_truth, NAME_fdk, NAME_iterative (NIfTI with the signed values);
        // the MR-only HDF5 record is refused with a reason.
        QTemporaryDir out;
        QString error;
        QVERIFY2(w.saveImages(out.filePath(QStringLiteral("ct.nii")), &error), qPrintable(error));
        for (const char* key : {"truth", "fdk", "iterative"})
            QVERIFY2(QFileInfo::exists(out.filePath(QStringLiteral("ct_%1.nii").arg(QLatin1String(key)))), key);
        QVERIFY(!QFileInfo::exists(out.filePath(QStringLiteral("ct_gridding-kb.nii"))));
        QVERIFY(!w.saveImages(out.filePath(QStringLiteral("ct.h5")), &error));
        QVERIFY2(error.contains(QStringLiteral("NIfTI")), qPrintable(error));
        QVERIFY(!w.exportDicom(out.filePath(QStringLiteral("dcm")), &error));
        QVERIFY2(error.contains(QStringLiteral("MR Image series")), qPrintable(error));
        QVERIFY(!QFileInfo::exists(out.filePath(QStringLiteral("dcm"))));

        QTest::qWait(150);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/ct-workstation.png")));
        w.centreTabs()->setCurrentWidget(w.sinogramView());
        QTest::qWait(100);
        QVERIFY(w.grab().save(QStringLiteral(RECONSTUDIO_GUI_SCREENSHOT_DIR "/ct-sinogram.png")));

        // An MR data set hides the sinogram and the CT rows again.
        w.controller()->setAutoReconstruct(false);
        w.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->modality() == Modality::Mr && finished(*w.controller()), kSolveTimeoutMs);
        QVERIFY(!w.centreTabs()->isTabVisible(w.centreTabs()->indexOf(w.sinogramView())));
        QCOMPARE(w.centreTabs()->currentWidget(), static_cast<QWidget*>(w.comparison()));
        QVERIFY(w.comparison()->view(Layer::GriddingTrilinear)->isVisible());
    }
};

QTEST_MAIN(TestCtViews)
#include "test_ct_views.moc"
