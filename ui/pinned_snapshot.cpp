#include "ui/pinned_snapshot.hpp"

#include "ui/exports.hpp"

namespace studio {

QString PinnedSnapshot::describe() const {
    QString s = QStringLiteral("%1: lambda %2 x s, %3, %4 iterations%5")
                    .arg(name)
                    .arg(lambda, 0, 'g', 3)
                    .arg(toQString(regularizer) + data_term)
                    .arg(iterations)
                    .arg(warm ? QStringLiteral(" (warm start)") : QString());
    if (quality) s += QStringLiteral(", %1 dB").arg(quality->psnr_db, 0, 'f', 2);
    return s;
}

SnapshotPin::SnapshotPin(ReconstructionController* controller, QObject* parent)
    : QObject(parent), controller_(controller) {
    connect(&controller_->layers(), &ImageLayers::layerChanged, this, [this](Layer l) {
        if (l == Layer::Iterative) updateDifference();
    });
    // layers().reset() already dropped the images of the old data set.
    connect(controller_, &ReconstructionController::datasetChanged, this, [this] {
        if (!snapshot_) return;
        snapshot_.reset();
        emit pinnedChanged();
    });
}

QString SnapshotPin::nextName() const { return QString(QChar('A' + pins_ % 26)); }

bool SnapshotPin::pin(const QString& name) {
    const LayerImage* live = controller_->layers().get(Layer::Iterative);
    if (!live || live->volume.empty()) return false;
    PinnedSnapshot s;
    s.name = name.isEmpty() ? nextName() : name;
    s.lambda = controller_->settings().lambda;
    s.regularizer = controller_->settings().regularizer;
    s.data_term = dataTermSuffix(controller_->settings().weighting, controller_->modality());
    s.iterations = controller_->totalIterations();
    s.warm = controller_->warmStart();
    s.quality = live->quality;
    snapshot_ = s;
    ++pins_;
    controller_->layers().set({Layer::Pinned, *live});  // shares the image: volumes are immutable
    updateDifference();
    emit pinnedChanged();
    return true;
}

void SnapshotPin::clear() {
    snapshot_.reset();
    controller_->layers().clear(Layer::Pinned);
    controller_->layers().clear(Layer::DifferencePinned);
    emit pinnedChanged();
}

void SnapshotPin::updateDifference() {
    const LayerImage* pinned = controller_->layers().get(Layer::Pinned);
    const LayerImage* live = controller_->layers().get(Layer::Iterative);
    if (!snapshot_ || !pinned || !live || pinned->volume.grid != live->volume.grid) return;
    const recon::ComplexArray& a = *live->volume.data;
    const recon::ComplexArray& b = *pinned->volume.data;
    recon::ComplexArray difference(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) difference[i] = a[i] - b[i];
    controller_->layers().set({Layer::DifferencePinned, {Volume::make(live->volume.grid, std::move(difference)), std::nullopt}});
}

}  // namespace studio
