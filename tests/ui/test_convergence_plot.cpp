// The convergence plot (issue 16, item 10): the griddings' reference lines stay
// inside the PSNR range across solves, and a warm start's cost is drawn against
// the first cost of its start from zero (it was flat at 1), with the axis saying
// how many iterations came before.
#include <QTest>

#include "ui/convergence_plot.hpp"

using namespace studio;

namespace {

recon::IterationRecord record(int iteration, double cost, double psnr) {
    recon::IterationRecord r;
    r.iteration = iteration;
    r.residual = 1.0 / iteration;
    r.data_term = cost;
    r.penalty_term = 0;
    r.has_truth = true;
    r.psnr_db = psnr;
    r.error_percent = 10;
    return r;
}

}  // namespace

class TestConvergencePlot : public QObject {
    Q_OBJECT
private slots:
    void referenceLinesStayInsideThePsnrRange() {
        ConvergencePlot plot;
        plot.reset(5);
        plot.setReference(Layer::GriddingTrilinear, recon::Quality{0, 12.0, 40});
        plot.setReference(Layer::GriddingKaiserBessel, recon::Quality{0, 14.0, 35});
        for (int i = 1; i <= 5; ++i) plot.addRecord(record(i, 1.0 / i, 30 + i));
        QVERIFY(plot.psnrRange().first <= 12.0 && plot.psnrRange().second >= 35.0);
        // The next solve (a lambda step) keeps the griddings' lines in view.
        plot.reset(5);
        for (int i = 1; i <= 5; ++i) plot.addRecord(record(i, 1.0 / i, 33 + i));
        plot.flush();
        QVERIFY2(plot.psnrRange().first <= 12.0, qPrintable(QString::number(plot.psnrRange().first)));
        QVERIFY(plot.psnrRange().second >= 38.0);
    }

    void warmStartCostIsRelativeToTheStartFromZero() {
        ConvergencePlot plot;
        plot.reset(3);
        QCOMPARE(plot.iterationAxisTitle(), QStringLiteral("CG iteration"));
        // A warm solve whose own costs barely change, after a cold start whose first cost was 100.
        plot.reset(3, 60, 100.0);
        QVERIFY(plot.iterationAxisTitle().contains(QStringLiteral("60 before")));
        for (int i = 1; i <= 3; ++i) plot.addRecord(record(i, 2.0 - 0.01 * i, 30));
        plot.flush();
        QCOMPARE(plot.pointCount(QStringLiteral("cost")), 3);
        QVERIFY(std::abs(plot.point(QStringLiteral("cost"), 0).y() - 0.0199) < 1e-12);  // 1.99 / 100, not 1
    }
};

QTEST_MAIN(TestConvergencePlot)
#include "test_convergence_plot.moc"
