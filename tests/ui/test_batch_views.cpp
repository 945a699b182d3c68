// The window's recipe and batch actions: export the tuned settings as a recipe the
// CLI accepts, open one, and open a real batch's summary whose rows load into the
// same linked views with the row's recipe (docs/BATCH.md).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "recon/io/recipe.hpp"
#include "ui/batch_summary_dialog.hpp"
#include "ui/main_window.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {
MainWindowOptions headless() {
    MainWindowOptions o;
    o.enable_3d = false;
    o.persist_settings = false;
    return o;
}
bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }
}  // namespace

class TestBatchViews : public QObject {
    Q_OBJECT
private slots:
    void exportedRecipeDrivesTheCli() {
        QTemporaryDir dir;
        MainWindow w(headless());
        ReconSettings s = w.controller()->settings();
        s.lambda = 0.7;
        s.iterations = 4;
        s.backend = recon::BackendChoice::Cpu;
        w.controller()->setSettings(s);
        QString error;
        QVERIFY2(w.exportRecipe(dir.filePath("tuned.json"), &error), qPrintable(error));
        // The CLI reconstructs with it: 4 iterations, as tuned.
        QCOMPARE(QProcess::execute(QStringLiteral(RECONSTUDIO_CLI),
                                   {"recon", "--case", "small-2d", "--recipe", dir.filePath("tuned.json"), "--output",
                                    dir.filePath("x.cfl"), "--report", dir.filePath("x.json"), "--quiet"}),
                 0);
        QFile report(dir.filePath("x.json"));
        QVERIFY(report.open(QIODevice::ReadOnly));
        QVERIFY(report.readAll().contains("\"iterations\":4"));
        // Opening it in a window with other settings brings them back.
        MainWindow other(headless());
        QVERIFY2(other.openRecipe(dir.filePath("tuned.json"), &error), qPrintable(error));
        QVERIFY(other.controller()->settings() == s);
        QFile bad(dir.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"reconstudio_recipe": 1, "lambda": -1})");
        bad.close();
        QVERIFY(!other.openRecipe(dir.filePath("bad.json"), &error));
        QVERIFY(error.contains("'lambda'"));
        QVERIFY(other.controller()->settings() == s);
    }

    void summaryRowsOpenInTheViews() {
        QTemporaryDir dir;
        const QString cli = QStringLiteral(RECONSTUDIO_CLI);
        QVERIFY(QDir().mkpath(dir.filePath("in")));
        QCOMPARE(QProcess::execute(cli, {"simulate", "--case", "small-2d", "--output", dir.filePath("in/a.h5"), "--quiet"}), 0);
        QFile recipe(dir.filePath("r.json"));
        QVERIFY(recipe.open(QIODevice::WriteOnly));
        recipe.write(R"({"reconstudio_recipe": 1, "iterations": 6, "lambda": 0.3, "backend": "cpu"})");
        recipe.close();
        QCOMPARE(QProcess::execute(cli, {"batch", "--recipe", dir.filePath("r.json"), "--manifest", dir.filePath("in"),
                                         "--output-dir", dir.filePath("out")}),
                 0);
        MainWindow w(headless());
        w.show();
        QString error;
        QVERIFY(!w.openBatchSummary(dir.filePath("r.json"), &error));  // a recipe is no summary
        QVERIFY(error.contains("not a batch summary"));
        QVERIFY2(w.openBatchSummary(dir.filePath("out/summary.json"), &error), qPrintable(error));
        auto* dialog = w.findChild<BatchSummaryDialog*>("batchSummary");
        QVERIFY(dialog);
        QCOMPARE(dialog->table()->rowCount(), 1);
        QCOMPARE(dialog->table()->item(0, 1)->text(), QStringLiteral("ok"));
        dialog->table()->setCurrentCell(0, 0);
        emit dialog->table()->cellDoubleClicked(0, 0);
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->hasDataset() && finished(*w.controller()), kSolveTimeoutMs);
        QVERIFY2(w.controller()->state() == JobState::Completed, qPrintable(w.controller()->lastError()));
        QCOMPARE(w.controller()->summary().origin, QFileInfo(dir.filePath("in/a.h5")).absoluteFilePath());
        QCOMPARE(w.controller()->settings().iterations, 6);
        QCOMPARE(w.controller()->settings().lambda, 0.3);
    }
};

QTEST_MAIN(TestBatchViews)
#include "test_batch_views.moc"
