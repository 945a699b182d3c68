// The reconstruction panel against its controller (offscreen): the lambda field
// always shows the lambda the solve uses, the panel says how the image shown was
// started, the slider's tooltip states its real range, and the GUI's default
// iteration count is the engine's (and so reconstudio-cli's); the data term
// chosen is the one the controller's solve uses.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTest>

#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "ui/pinned_snapshot.hpp"
#include "ui/reconstruction_controller.hpp"
#include "ui/tune_panel.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

// Short solves on the CPU (the same everywhere), restarted 10 ms after a change.
void quickCpuSolves(ReconstructionController& c, int iterations) {
    ReconSettings s = c.settings();
    s.iterations = iterations;
    s.backend = recon::BackendChoice::Cpu;
    c.setSettings(s);
    c.setDebounceInterval(10);
}

}  // namespace

class TestTunePanel : public QObject {
    Q_OBJECT
private slots:
    // Issue 16, item 1: type lambda = 30 + Enter, then open a case tuned for
    // another lambda: the field must show the lambda the solve will use.
    void lambdaFieldFollowsTheSolveEvenWhenFocused() {
        ReconstructionController c;
        c.setAutoReconstruct(false);
        TunePanel panel(&c);
        panel.show();
        QApplication::setActiveWindow(&panel);
        QVERIFY(QTest::qWaitForWindowActive(&panel));
        QLineEdit* field = panel.lambdaField();
        field->setFocus();
        QTRY_VERIFY(field->hasFocus());
        field->selectAll();
        QTest::keyClicks(field, QStringLiteral("30"));
        QTest::keyClick(field, Qt::Key_Return);
        QCOMPARE(c.settings().lambda, 30.0);
        QVERIFY(field->hasFocus());  // Enter keeps the focus in the field

        const double tuned = recon::demoCase("radial-3d-noisy").lambda;
        QVERIFY(tuned != 30.0);
        c.openDemo(QStringLiteral("radial-3d-noisy"));  // adopts the case's lambda at once
        QCOMPARE(c.settings().lambda, tuned);
        QCOMPARE(QLocale::c().toDouble(field->text()), tuned);
        QCOMPARE(panel.lambdaSlider()->value(), TunePanel::sliderPosition(tuned));

        // Text being typed (not committed) survives a change of another setting...
        field->selectAll();
        QTest::keyClicks(field, QStringLiteral("4"));
        ReconSettings s = c.settings();
        s.iterations += 1;
        c.setSettings(s);
        QCOMPARE(field->text(), QStringLiteral("4"));
        // ...and leaving the field commits it.
        QTest::keyClick(field, Qt::Key_Return);
        QCOMPARE(c.settings().lambda, 4.0);
    }

    // Issue 16, item 10: the tooltip states the slider's real range.
    void sliderTooltipStatesItsRange() {
        ReconstructionController c;
        TunePanel panel(&c);
        const QString tip = panel.lambdaSlider()->toolTip();
        QVERIFY2(tip.contains(QStringLiteral("1e-06")) && tip.contains(QStringLiteral("1e+03")), qPrintable(tip));
        QCOMPARE(TunePanel::lambdaAt(panel.lambdaSlider()->maximum()), 1e3);
    }

    // Issue 16, item 3: the GUI starts with the engine's (and the CLI's) iteration count.
    void defaultIterationsAreTheEngines() {
        ReconstructionController c;
        TunePanel panel(&c);
        QCOMPARE(c.settings().iterations, recon::SolveOptions{}.iterations);
        QCOMPARE(panel.iterationsBox()->value(), recon::SolveOptions{}.iterations);
    }

    // Issue 16, item 2: the panel says whether the image continued from an earlier one.
    void startLabelSaysWarmOrFromZero() {
        ReconstructionController c;
        quickCpuSolves(c, 4);
        TunePanel panel(&c);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY2(panel.startLabel()->text().contains(QStringLiteral("from zero: 4 ")),
                 qPrintable(panel.startLabel()->text()));
        const quint64 generation = c.generation();
        panel.lambdaSlider()->setValue(panel.lambdaSlider()->value() + 10);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
        // The change runs until the first solve's residual, within its budget of 4.
        QVERIFY(c.totalIterations() > 4 && c.totalIterations() <= 8);
        QVERIFY2(panel.startLabel()->text().contains(QStringLiteral("Warm start")) &&
                     panel.startLabel()->text().contains(QStringLiteral("%1 CG iterations since").arg(c.totalIterations())),
                 qPrintable(panel.startLabel()->text()));
        QTest::mouseClick(panel.reconstructButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 2 && finished(c), kSolveTimeoutMs);
        QVERIFY2(panel.startLabel()->text().contains(QStringLiteral("from zero: 4 ")),
                 qPrintable(panel.startLabel()->text()));
    }

    // Issue 13: the sparse priors are offered, choosing one starts from its own default lambda,
    // and Suggest shows the chosen lambda with its rule until lambda is changed by hand.
    void sparsePriorsAndSuggestedLambda() {
        ReconstructionController c;
        quickCpuSolves(c, 20);
        TunePanel panel(&c);
        c.openDemo(kSmallDemo);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QComboBox* box = panel.regularizerBox();
        for (auto kind : {recon::RegularizerKind::TotalVariation, recon::RegularizerKind::Wavelet,
                          recon::RegularizerKind::AnatomicalTotalVariation})
            QVERIFY(box->findData(int(kind)) >= 0);
        box->setCurrentIndex(box->findData(int(recon::RegularizerKind::Wavelet)));
        QCOMPARE(int(c.settings().regularizer), int(recon::RegularizerKind::Wavelet));
        QCOMPARE(c.settings().lambda, recon::defaultSparseLambda(recon::RegularizerKind::Wavelet));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(panel.autoLambdaLabel()->text().isEmpty());

        const quint64 generation = c.generation();
        QTest::mouseClick(panel.suggestButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() > generation && finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(panel.lambdaField()->text(), QString::number(c.settings().lambda, 'g', 3));
        const QString label = panel.autoLambdaLabel()->text();
        QVERIFY2(label.startsWith(QStringLiteral("auto: lambda = ")) && label.contains(QStringLiteral("x m")),
                 qPrintable(label));
        QVERIFY(label.contains(c.lambdaRule()));
        c.setLambda(0.05);
        QVERIFY(panel.autoLambdaLabel()->text().isEmpty());
    }

    // Issue 17: choosing "Density-weighted" re-solves from zero with the weighted data term: the image is the
    // engine's density-weighted solve for the same settings (what reconstudio-cli --data-weighting density
    // runs), not the least-squares one, with its own s, and the panel and a pin name it.
    void densityWeightedDataTermReachesTheSolve() {
        ReconstructionController c;
        quickCpuSolves(c, 8);
        const ReconSettings s = c.settings();
        TunePanel panel(&c);
        SnapshotPin pin(&c);
        QComboBox* box = panel.dataTermBox();
        QCOMPARE(box->currentData().toInt(), int(recon::DataWeighting::Uniform));  // the engine's default
        c.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        const recon::ComplexArray uniform = *c.layers().get(Layer::Iterative)->volume.data;
        QCOMPARE(c.lambdaScale(), c.summary().lambda_scale);
        QVERIFY(box->isEnabled());

        const quint64 generation = c.generation();
        box->setCurrentIndex(box->findData(int(recon::DataWeighting::Density)));
        QVERIFY(c.settings().weighting == recon::DataWeighting::Density);
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 1 && finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QVERIFY(!c.warmStart());  // another problem: from zero, as a regulariser change
        QCOMPARE(c.totalIterations(), 8);
        const recon::ComplexArray weighted = *c.layers().get(Layer::Iterative)->volume.data;

        recon::ReconstructionSession reference(recon::createCpuBackend(recon::Precision::Single));
        reference.setDataset(c.dataset());
        recon::SolveOptions o;
        o.regularizer = s.regularizer;
        o.lambda = s.lambda;
        o.iterations = s.iterations;
        o.weighting = recon::DataWeighting::Density;
        recon::CallbackMonitor quiet;
        const recon::SolveResult expected = reference.solve(o, quiet);
        QCOMPARE(weighted.size(), expected.image.size());
        double to_expected = 0, to_uniform = 0, largest = 0;
        for (std::size_t i = 0; i < weighted.size(); ++i) {
            to_expected = std::max(to_expected, std::abs(weighted[i] - expected.image[i]));
            to_uniform = std::max(to_uniform, std::abs(weighted[i] - uniform[i]));
            largest = std::max(largest, std::abs(expected.image[i]));
        }
        QVERIFY2(to_expected <= 1e-5 * largest && to_uniform > 1e-2 * largest,
                 qPrintable(QStringLiteral("from the weighted solve %1, from least squares %2, of %3")
                                .arg(to_expected).arg(to_uniform).arg(largest)));
        // Its s is Q_D(0), not Q(0), and the panel says so.
        QVERIFY(std::abs(c.lambdaScale() - expected.lambda_scale) <= 1e-12 * expected.lambda_scale);
        QVERIFY(std::abs(c.lambdaScale() - c.summary().lambda_scale) > 1e-3 * c.summary().lambda_scale);
        QVERIFY(pin.pin(QStringLiteral("W")));
        QVERIFY2(pin.snapshot()->describe().contains(QStringLiteral("fd, density-weighted, 8 iterations")),
                 qPrintable(pin.snapshot()->describe()));

        // Back to least squares: the first image again (a solve from zero is reproducible).
        box->setCurrentIndex(box->findData(int(recon::DataWeighting::Uniform)));
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() == generation + 2 && finished(c), kSolveTimeoutMs);
        const recon::ComplexArray& again = *c.layers().get(Layer::Iterative)->volume.data;
        double back = 0;
        for (std::size_t i = 0; i < again.size(); ++i) back = std::max(back, std::abs(again[i] - uniform[i]));
        QVERIFY2(back <= 1e-6 * largest, qPrintable(QString::number(back)));
        QCOMPARE(c.lambdaScale(), c.summary().lambda_scale);
    }
};

QTEST_MAIN(TestTunePanel)
#include "test_tune_panel.moc"
