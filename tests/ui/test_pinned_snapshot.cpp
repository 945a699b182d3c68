// Pin a result (issue 16, item 7): the pinned image and how it was made stay
// while lambda changes; the difference map is the live iterate minus the pinned
// one, voxel for voxel, after every solve; the Pinned tab shows all three; a
// DICOM export carries the pin; a new data set clears it.
#include <QLabel>
#include <QTest>

#include "ui/dicom_export.hpp"
#include "ui/pin_panel.hpp"
#include "ui/pinned_snapshot.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

}  // namespace

class TestPinnedSnapshot : public QObject {
    Q_OBJECT
private slots:
    void pinKeepsAnImageAndItsDifferenceFollowsTheLiveOne() {
        ReconstructionController c;
        ReconSettings s = c.settings();
        s.iterations = 4;
        s.lambda = 0.02;
        s.backend = recon::BackendChoice::Cpu;
        c.setSettings(s);
        c.setDebounceInterval(10);
        SliceViewModel model;
        PinPanel panel(&c, &model);
        SnapshotPin& pin = *panel.pin();
        QVERIFY(!pin.pin(QStringLiteral("too early")));  // no iterative image yet
        c.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        model.setGrid(c.summary().grid, c.summary().truth_max);

        QVERIFY(pin.pin(QStringLiteral("A")));
        const recon::ComplexArray pinned = *c.layers().get(Layer::Pinned)->volume.data;
        QCOMPARE(pinned, *c.layers().get(Layer::Iterative)->volume.data);
        QCOMPARE(pin.snapshot()->name, QStringLiteral("A"));
        QCOMPARE(pin.snapshot()->iterations, 4);
        QVERIFY2(pin.snapshot()->describe().contains(QStringLiteral("lambda 0.02 x s, fd, 4 iterations")),
                 qPrintable(pin.snapshot()->describe()));
        QVERIFY(panel.descriptionLabel()->text().contains(QStringLiteral("Pinned A")));

        // Another lambda: the pin stays, the difference is live - pinned.
        c.setLambda(0.5);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c) && c.warmStart(), kSolveTimeoutMs);
        QCOMPARE(*c.layers().get(Layer::Pinned)->volume.data, pinned);
        const recon::ComplexArray& live = *c.layers().get(Layer::Iterative)->volume.data;
        const recon::ComplexArray& difference = *c.layers().get(Layer::DifferencePinned)->volume.data;
        double largest = 0;
        for (std::size_t i = 0; i < live.size(); ++i) {
            QVERIFY(std::abs(difference[i] - (live[i] - pinned[i])) < 1e-12);
            largest = std::max(largest, std::abs(difference[i]));
        }
        QVERIFY(largest > 1e-3);  // lambda 0.5 smooths visibly more than 0.02
        QVERIFY(panel.view(Layer::DifferencePinned)->cursorValue().has_value());

        // A DICOM export carries the pin as a series of its own.
        const recon::DicomExportSpec spec = dicomExportFor(c, &*pin.snapshot());
        QCOMPARE(spec.series.back().folder, std::string("pinned"));
        QVERIFY2(QString::fromStdString(spec.series.back().description).startsWith(QStringLiteral("Pinned A: lambda 0.02")),
                 spec.series.back().description.c_str());
        QVERIFY(spec.series.back().description.size() <= 64);

        pin.clear();
        QVERIFY(!c.layers().has(Layer::Pinned) && !c.layers().has(Layer::DifferencePinned));
        QVERIFY(pin.pin(QString()));
        QCOMPARE(pin.snapshot()->name, QStringLiteral("B"));  // default names count up
        c.openDemo(kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QVERIFY(!pin.snapshot());  // a new data set: nothing to compare with
    }
};

QTEST_MAIN(TestPinnedSnapshot)
#include "test_pinned_snapshot.moc"
