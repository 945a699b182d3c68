// The data panel's frame chooser (issue 14): an ISMRMRD file of 2 slices x 2 repetitions, written
// with ISMRMRD's API (tests/recon/io/frames_files.hpp), opens at frame 0; the panel names the
// frames, and choosing frame 3 reloads and reconstructs that frame through the controller.
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "frames_files.hpp"
#include "recon/io/dataset_io.hpp"
#include "ui/data_panel.hpp"
#include "ui/reconstruction_controller.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using studio::testing::kSolveTimeoutMs;

namespace {
bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

// |image| against |truth| after the least-squares scale (the noise scan's whitening scales the data).
double relativeError(const recon::ComplexArray& image, const recon::ComplexArray& truth) {
    double ab = 0, aa = 0;
    for (std::size_t i = 0; i < image.size(); ++i) {
        ab += std::abs(image[i]) * std::abs(truth[i]);
        aa += std::norm(image[i]);
    }
    const double scale = ab / aa;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < image.size(); ++i) {
        num += std::pow(scale * std::abs(image[i]) - std::abs(truth[i]), 2);
        den += std::norm(truth[i]);
    }
    return std::sqrt(num / den);
}
}  // namespace

class TestFrameChooser : public QObject {
    Q_OBJECT
private slots:
    void choosingAFrameReloadsAndReconstructsIt() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("slices.h5")).toStdString();
        const recon::test::FramesTruth truth = recon::test::writeMultiSliceFile(path);
        recon::InputSpec spec;
        spec.input = path;
        const recon::Frames frames = recon::readFrames(spec);

        ReconstructionController c;
        ReconSettings s;
        s.iterations = 15;
        s.backend = recon::BackendChoice::Cpu;
        c.setSettings(s);
        DataPanel panel(&c);
        auto* chooser = panel.findChild<QSpinBox*>(QStringLiteral("frame-chooser"));
        QVERIFY(chooser);
        QVERIFY(!chooser->isVisibleTo(&panel));  // nothing open: no frames

        c.openFile(QString::fromStdString(path));
        QTRY_VERIFY_WITH_TIMEOUT(finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(c.summary().frames, 4);
        QCOMPARE(c.dataset()->kspace, frames.frames[0].data->kspace);
        QVERIFY(chooser->isVisibleTo(&panel));
        QCOMPARE(chooser->maximum(), 3);
        QCOMPARE(chooser->value(), 0);
        QCOMPARE(panel.field(QStringLiteral("Frame")), QStringLiteral("slice 0, repetition 0 (of 4: 2 slices x 2 repetitions)"));
        const double first = relativeError(*c.layers().get(Layer::Iterative)->volume.data, truth.truth[0]);
        QVERIFY2(first < 0.25, qPrintable(QString::number(first)));

        const quint64 generation = c.generation();
        chooser->setValue(3);  // the user's choice: a new load and solve
        QTRY_VERIFY_WITH_TIMEOUT(c.generation() > generation && finished(c), kSolveTimeoutMs);
        QCOMPARE(toString(c.state()), toString(JobState::Completed));
        QCOMPARE(c.summary().frame, 3);
        QCOMPARE(c.dataset()->kspace, frames.frames[3].data->kspace);
        QCOMPARE(panel.field(QStringLiteral("Frame")), QStringLiteral("slice 1, repetition 1 (of 4: 2 slices x 2 repetitions)"));
        const recon::ComplexArray& image = *c.layers().get(Layer::Iterative)->volume.data;
        const double own = relativeError(image, truth.truth[3]), other_slice = relativeError(image, truth.truth[0]);
        QVERIFY2(own < 0.25 && other_slice > 2 * own, qPrintable(QStringLiteral("%1 vs %2").arg(own).arg(other_slice)));

        // A demo case has one frame: the chooser goes away.
        c.openDemo(studio::testing::kSmallDemo, false);
        QTRY_VERIFY_WITH_TIMEOUT(finished(c) && c.summary().frames == 1, kSolveTimeoutMs);
        QVERIFY(!chooser->isVisibleTo(&panel));
    }
};

QTEST_MAIN(TestFrameChooser)
#include "test_frame_chooser.moc"
