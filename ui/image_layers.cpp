#include "ui/image_layers.hpp"

#include <algorithm>
#include <cmath>

namespace studio {

Volume Volume::make(const recon::Grid& g, recon::ComplexArray values) {
    return Volume{g, std::make_shared<const recon::ComplexArray>(std::move(values))};
}

double Volume::maxMagnitude() const {
    double m = 0;
    if (data)
        for (const auto& v : *data) m = std::max(m, std::abs(v));
    return m;
}

QString layerTitle(Layer l, Modality m) {
    if (m == Modality::Ct) {
        switch (l) {
            case Layer::GriddingKaiserBessel: return QStringLiteral("FDK");
            case Layer::Iterative: return QStringLiteral("Iterative (WLS)");
            case Layer::DifferenceKaiserBessel: return QStringLiteral("FDK - truth");
            case Layer::DifferenceIterative: return QStringLiteral("Iterative (WLS) - truth");
            default: break;
        }
    }
    switch (l) {
        case Layer::Truth: return QStringLiteral("Truth");
        case Layer::GriddingTrilinear: return QStringLiteral("Gridding (trilinear)");
        case Layer::GriddingKaiserBessel: return QStringLiteral("Gridding (Kaiser-Bessel)");
        case Layer::Iterative: return QStringLiteral("Iterative");
        case Layer::DifferenceTrilinear: return QStringLiteral("Trilinear - truth");
        case Layer::DifferenceKaiserBessel: return QStringLiteral("Kaiser-Bessel - truth");
        case Layer::DifferenceIterative: return QStringLiteral("Iterative - truth");
        case Layer::Pinned: return QStringLiteral("Pinned");
        case Layer::DifferencePinned: return QStringLiteral("Iterative - pinned");
    }
    return {};
}

QString layerKey(Layer l) {
    switch (l) {
        case Layer::Truth: return QStringLiteral("truth");
        case Layer::GriddingTrilinear: return QStringLiteral("gridding-trilinear");
        case Layer::GriddingKaiserBessel: return QStringLiteral("gridding-kb");
        case Layer::Iterative: return QStringLiteral("iterative");
        case Layer::DifferenceTrilinear: return QStringLiteral("difference-trilinear");
        case Layer::DifferenceKaiserBessel: return QStringLiteral("difference-kb");
        case Layer::DifferenceIterative: return QStringLiteral("difference-iterative");
        case Layer::Pinned: return QStringLiteral("pinned");
        case Layer::DifferencePinned: return QStringLiteral("difference-pinned");
    }
    return {};
}

std::vector<Layer> layersOf(Modality m) {
    if (m == Modality::Ct)
        return {Layer::Truth, Layer::GriddingKaiserBessel, Layer::Iterative, Layer::DifferenceKaiserBessel,
                Layer::DifferenceIterative};
    return {kAllLayers.begin(), kAllLayers.end()};
}

bool isDifference(Layer l) {
    return l == Layer::DifferenceTrilinear || l == Layer::DifferenceKaiserBessel || l == Layer::DifferenceIterative ||
           l == Layer::DifferencePinned;
}

std::optional<Layer> differenceOf(Layer image) {
    switch (image) {
        case Layer::GriddingTrilinear: return Layer::DifferenceTrilinear;
        case Layer::GriddingKaiserBessel: return Layer::DifferenceKaiserBessel;
        case Layer::Iterative: return Layer::DifferenceIterative;
        default: return std::nullopt;
    }
}

ImageLayers::ImageLayers(QObject* parent) : QObject(parent) {}

const LayerImage* ImageLayers::get(Layer l) const {
    const auto& slot = images_[static_cast<int>(l)];
    return slot ? &*slot : nullptr;
}

void ImageLayers::set(const LayerUpdate& update) {
    images_[static_cast<int>(update.layer)] = update.image;
    emit layerChanged(update.layer);
}

void ImageLayers::clear(Layer l) {
    images_[static_cast<int>(l)].reset();
    emit layerChanged(l);
}

void ImageLayers::setAll(const std::vector<LayerUpdate>& updates) {
    for (const auto& u : updates) set(u);
}

void ImageLayers::reset(const recon::Grid& grid, Modality modality) {
    grid_ = grid;
    modality_ = modality;
    for (auto& slot : images_) slot.reset();
    floor_.reset();
    emit layersReset();
}

void ImageLayers::setFloor(const recon::Quality& q) {
    floor_ = q;
    emit floorChanged();
}

}  // namespace studio
