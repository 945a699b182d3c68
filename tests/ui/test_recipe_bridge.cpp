// The workstation's settings as a recipe and back, and a summary written by a
// real `reconstudio-cli batch` read for browsing (docs/RECIPE.md, docs/BATCH.md).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "recon/core/errors.hpp"
#include "recon/io/recipe.hpp"
#include "ui/recipe_bridge.hpp"

using namespace studio;

class TestRecipeBridge : public QObject {
    Q_OBJECT
private slots:
    void settingsSurviveARecipeFile() {
        ReconSettings s;
        s.lambda = 12.5;
        s.regularizer = recon::RegularizerKind::AnatomicalFiniteDifference;
        s.iterations = 77;
        s.precision = recon::Precision::Double;
        s.backend = recon::BackendChoice::Cpu;
        s.method = QStringLiteral("direct");
        s.coil_combination = recon::CoilCombination::Sense;
        s.coil_maps = recon::CoilMapMethod::Walsh;
        s.weighting = recon::DataWeighting::Density;
        QTemporaryDir dir;
        const std::string path = dir.filePath("tuned.json").toStdString();
        recon::io::writeRecipe(path, recipeFromSettings(s));
        const recon::io::Recipe r = recon::io::readRecipe(path);
        QCOMPARE(QString::fromStdString(*r.method), QStringLiteral("iterative"));
        QCOMPARE(QString::fromStdString(r.coils), QStringLiteral("sense"));  // what the CLI reads (--coil-combine sense)
        QCOMPARE(QString::fromStdString(*r.coil_maps), QStringLiteral("walsh"));
        QCOMPARE(QString::fromStdString(*r.data_weighting), QStringLiteral("density"));  // --data-weighting density
        QVERIFY(settingsFromRecipe(r, ReconSettings{}) == s);
        // A recipe naming the data term sets it either way; one without keeps the window's.
        ReconSettings weighted;
        weighted.weighting = recon::DataWeighting::Density;
        const auto uniform = recon::io::parseRecipe(R"({"reconstudio_recipe": 1, "data_weighting": "uniform"})", "u");
        QVERIFY(settingsFromRecipe(uniform, weighted).weighting == recon::DataWeighting::Uniform);
        const auto silent = recon::io::parseRecipe(R"({"reconstudio_recipe": 1})", "n");
        QVERIFY(settingsFromRecipe(silent, weighted).weighting == recon::DataWeighting::Density);
    }

    void aPartialRecipeKeepsTheOtherSettings() {
        ReconSettings base;
        base.iterations = 11;
        base.precision = recon::Precision::Double;
        const ReconSettings s = settingsFromRecipe(recon::io::parseRecipe(R"({"reconstudio_recipe": 1, "lambda": 3})", "r"), base);
        QCOMPARE(s.lambda, 3.0);
        QCOMPARE(s.iterations, 11);
        QVERIFY(s.precision == recon::Precision::Double);
    }

    void readsTheSummaryOfARealBatch() {
        QTemporaryDir dir;
        const QString cli = QStringLiteral(RECONSTUDIO_CLI);
        QVERIFY(QDir().mkpath(dir.filePath("in")));
        QCOMPARE(QProcess::execute(cli, {"simulate", "--case", "small-2d", "--output", dir.filePath("in/a.h5"), "--quiet"}), 0);
        QFile damaged(dir.filePath("in/b.h5"));
        QVERIFY(damaged.open(QIODevice::WriteOnly));
        damaged.write("not an HDF5 file");
        damaged.close();
        QFile recipe(dir.filePath("r.json"));
        QVERIFY(recipe.open(QIODevice::WriteOnly));
        recipe.write(R"({"reconstudio_recipe": 1, "iterations": 5, "lambda": 0.1, "backend": "cpu"})");
        recipe.close();
        QProcess batch;
        batch.start(cli, {"batch", "--recipe", dir.filePath("r.json"), "--manifest", dir.filePath("in"), "--output-dir",
                          dir.filePath("out")});
        QVERIFY(batch.waitForFinished(120000));
        QCOMPARE(batch.exitCode(), 1);  // one row failed
        const QVector<BatchSummaryRow> rows = readBatchSummary(dir.filePath("out/summary.json"));
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].status, QStringLiteral("ok"));
        QCOMPARE(rows[0].iterations, 5);
        QVERIFY(rows[0].psnr_db.has_value());
        QVERIFY(QFile::exists(rows[0].output));
        QCOMPARE(rows[1].status, QStringLiteral("failed"));
        QVERIFY(rows[1].message.contains("b.h5"));
        // Opening a row applies the row's recipe: the batch's settings come back.
        const ReconSettings s = settingsFromRecipe(recon::io::readRecipe(rows[0].recipe.toStdString()), ReconSettings{});
        QCOMPARE(s.iterations, 5);
        QCOMPARE(s.lambda, 0.1);
    }

    void aFileThatIsNoSummaryIsNamed() {
        QTemporaryDir dir;
        QFile f(dir.filePath("summary.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"rows\": []}");
        f.close();
        try {
            readBatchSummary(dir.filePath("summary.json"));
            QFAIL("expected an InputError");
        } catch (const recon::InputError& e) {
            QVERIFY(QString(e.what()).contains("summary.json"));
            QVERIFY(QString(e.what()).contains("not a batch summary"));
        }
    }
};

QTEST_GUILESS_MAIN(TestRecipeBridge)
#include "test_recipe_bridge.moc"
