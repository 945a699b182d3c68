// File > Export DICOM (issue 16, item 8): every image shown becomes one series,
// described by its method and parameters (the warm-start chain included), in a
// new folder; a second export into that folder is refused and changes nothing.
// The files themselves are checked against DCMTK, dcmdump, pydicom and dciodvfy
// in tests/recon/io/test_dicom_io.cpp.
#include <QDir>
#include <QFile>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "ui/dicom_export.hpp"
#include "ui/main_window.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

}  // namespace

class TestDicomExport : public QObject {
    Q_OBJECT
private slots:
    void describesEveryImageShown() {
        ReconstructionController c;
        ReconSettings s = c.settings();
        s.iterations = 4;
        s.lambda = 0.03;
        s.backend = recon::BackendChoice::Cpu;
        c.setSettings(s);
        c.setDebounceInterval(10);
        c.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        recon::DicomExportSpec spec = dicomExportFor(c);
        QCOMPARE(int(spec.series.size()), 4);
        QCOMPARE(spec.grid.n[0], 48);
        QCOMPARE(spec.series[0].folder, std::string("truth"));
        QCOMPARE(spec.series[2].folder, std::string("gridding-kb"));
        QCOMPARE(spec.series[3].image, c.layers().get(Layer::Iterative)->volume.data.get());
        QCOMPARE(spec.series[3].description, std::string("Iterative CG fd lambda 0.03 x s, 4 it"));
        for (const auto& series : spec.series) QVERIFY(series.description.size() <= 64);

        // After a lambda step the description names the warm start and its chain.
        c.setLambda(0.05);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c) && c.warmStart(), kSolveTimeoutMs);
        spec = dicomExportFor(c);
        const int warm = c.totalIterations() - 4;  // until the first solve's residual, within the budget of 4
        QVERIFY(warm >= 1 && warm <= 4);
        QCOMPARE(spec.series[3].description, "Iterative CG fd lambda 0.05 x s, 4+" + std::to_string(warm) + " it warm");
        QVERIFY2(QString::fromStdString(spec.series[3].comments).contains(QStringLiteral("%1 CG iterations").arg(4 + warm)),
                 spec.series[3].comments.c_str());
    }

    void windowExportsIntoANewFolderOnly() {
        if (!recon::dicomExportAvailable()) QSKIP("built without DCMTK");
        QTemporaryDir dir;
        MainWindowOptions o;
        o.enable_3d = false;
        o.persist_settings = false;
        MainWindow w(o);
        w.show();
        ReconSettings s = w.controller()->settings();
        s.iterations = 3;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        w.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()), kSolveTimeoutMs);
        const QString out = dir.filePath("export");
        QString error;
        QVERIFY2(w.exportDicom(out, &error), qPrintable(error));
        QVERIFY2(w.statusBar()->currentMessage().contains(out), qPrintable(w.statusBar()->currentMessage()));
        const QStringList series = QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        QCOMPARE(series, (QStringList{"01-truth", "02-gridding-trilinear", "03-gridding-kb", "04-iterative"}));
        QFile iterative(out + "/04-iterative/IM0001.dcm");
        QVERIFY(iterative.open(QIODevice::ReadOnly));
        const QByteArray bytes = iterative.readAll();
        QCOMPARE(bytes.mid(128, 4), QByteArray("DICM"));  // a DICOM Part 10 file
        QVERIFY(bytes.contains("Iterative CG fd lambda 0.02 x s, 3 it"));

        QVERIFY(!w.exportDicom(out, &error));
        QVERIFY2(error.contains(QStringLiteral("not empty")), qPrintable(error));
        QCOMPARE(QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name), series);
    }
};

QTEST_MAIN(TestDicomExport)
#include "test_dicom_export.moc"
