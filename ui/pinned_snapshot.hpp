// Pin a result (the A/B comparison lambda tuning needs): the iterative image
// shown now, kept with how it was made (name, lambda, regulariser, iterations
// since its start from zero, quality), shown as Layer::Pinned next to the live
// iterative image with Layer::DifferencePinned = iterative - pinned, which
// follows every new iterate. Widget-free; a new data set clears the pin.
#pragma once

#include <QObject>
#include <QString>

#include <optional>

#include "ui/reconstruction_controller.hpp"

namespace studio {

struct PinnedSnapshot {
    QString name;
    double lambda = 0;
    recon::RegularizerKind regularizer{};
    QString data_term;  // dataTermSuffix of its solve: empty (least squares) or ", density-weighted"
    int iterations = 0;  // since the start from zero
    bool warm = false;   // it continued an earlier image (lambda tuning)
    std::optional<recon::Quality> quality;
    QString describe() const;  // "A: lambda 0.02 x s, fd, 60 iterations, 31.2 dB"; "fd, density-weighted, ..."
};

class SnapshotPin : public QObject {
    Q_OBJECT
public:
    explicit SnapshotPin(ReconstructionController* controller, QObject* parent = nullptr);

    // Keeps the iterative image shown now; false (nothing changes) when there is none.
    bool pin(const QString& name);
    void clear();
    const std::optional<PinnedSnapshot>& snapshot() const { return snapshot_; }
    // A default name for the next pin ("A", "B", ...).
    QString nextName() const;

signals:
    void pinnedChanged();

private:
    void updateDifference();

    ReconstructionController* controller_;
    std::optional<PinnedSnapshot> snapshot_;
    int pins_ = 0;
};

}  // namespace studio
