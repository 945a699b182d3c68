#include "ui/coil_map_view_model.hpp"

#include <QPainter>

#include <algorithm>
#include <cmath>

#include "recon/core/errors.hpp"

namespace studio {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr int kTileGap = 1;  // pixels between the tiles of the "all coils" picture
}  // namespace

QString toString(CoilMapComponent c) {
    switch (c) {
        case CoilMapComponent::Magnitude: return QStringLiteral("magnitude");
        case CoilMapComponent::Phase: return QStringLiteral("phase");
        case CoilMapComponent::Mask: return QStringLiteral("mask");
    }
    return {};
}

CoilMapViewModel::CoilMapViewModel(SliceViewModel* slices, QObject* parent) : QObject(parent), slices_(slices) {
    connect(slices_, &SliceViewModel::cursorChanged, this, [this] {
        if (hasMaps()) emit changed();
    });
    connect(slices_, &SliceViewModel::orientationChanged, this, [this] {
        if (hasMaps()) emit changed();
    });
}

void CoilMapViewModel::setMaps(std::shared_ptr<const recon::CoilMaps> maps, const recon::Grid& grid) {
    if (maps) {
        const std::size_t voxels = grid.voxels();
        if (maps->coils < 1 || maps->maps.size() != std::size_t(maps->coils) * voxels || maps->mask.size() != voxels)
            throw recon::InputError("coil maps (" + maps->source + "): " + std::to_string(maps->maps.size()) +
                                    " values and a mask of " + std::to_string(maps->mask.size()) + " for " +
                                    std::to_string(maps->coils) + " coils on grid " + grid.describe());
    }
    maps_ = std::move(maps);
    grid_ = grid;
    volumes_.clear();
    mask_volume_ = {};
    mask_voxels_ = 0;
    max_magnitude_ = 0;
    if (maps_) {
        const std::size_t voxels = grid.voxels();
        for (int c = 0; c < maps_->coils; ++c) {
            const auto first = maps_->maps.begin() + std::ptrdiff_t(std::size_t(c) * voxels);
            volumes_.push_back(Volume::make(grid, recon::ComplexArray(first, first + std::ptrdiff_t(voxels))));
            max_magnitude_ = std::max(max_magnitude_, volumes_.back().maxMagnitude());
        }
        recon::ComplexArray mask(voxels);
        for (std::size_t v = 0; v < voxels; ++v) {
            mask[v] = maps_->mask[v] ? 1.0 : 0.0;
            mask_voxels_ += maps_->mask[v] ? 1 : 0;
        }
        mask_volume_ = Volume::make(grid, std::move(mask));
    }
    coil_ = std::clamp(coil_, kAllCoils, coils() - 1);
    emit changed();
}

QString describeCoilMapSource(const std::string& source) {
    if (source == "espirit") return QObject::tr("ESPIRiT (estimated from the data)");
    if (source == "walsh") return QObject::tr("Walsh's adaptive combination (estimated from the data)");
    if (source == "low-resolution") return QObject::tr("low-resolution coil images / their root sum of squares");
    return QObject::tr("the file %1").arg(QString::fromStdString(source));
}

QString CoilMapViewModel::source() const { return maps_ ? QString::fromStdString(maps_->source) : QString(); }

void CoilMapViewModel::setCoil(int coil) {
    coil = std::clamp(coil, kAllCoils, std::max(kAllCoils, coils() - 1));
    if (coil == coil_) return;
    coil_ = coil;
    emit changed();
}

void CoilMapViewModel::setComponent(CoilMapComponent c) {
    if (c == component_) return;
    component_ = c;
    emit changed();
}

SliceData CoilMapViewModel::maskSlice() const {
    return extractSlice(mask_volume_, slices_->orientation(), slices_->slice(), DisplayMode::Real);
}

SliceData CoilMapViewModel::slice(int coil) const {
    if (!maps_) return {};
    if (component_ == CoilMapComponent::Mask) return maskSlice();
    const Volume& v = volumes_.at(std::size_t(std::clamp(coil, 0, coils() - 1)));
    return extractSlice(v, slices_->orientation(), slices_->slice(),
                        component_ == CoilMapComponent::Phase ? DisplayMode::Phase : DisplayMode::Magnitude);
}

std::array<int, 2> CoilMapViewModel::tiling() const {
    const int n = std::max(1, coils());
    const int columns = int(std::ceil(std::sqrt(double(n))));
    return {columns, (n + columns - 1) / columns};
}

QImage CoilMapViewModel::renderCoil(int coil) const {
    const SliceData s = slice(coil);
    switch (component_) {
        case CoilMapComponent::Magnitude:
            return renderSlice(s, WindowLevel::fromRange(0, max_magnitude_ > 0 ? max_magnitude_ : 1), ColorMap::Gray);
        case CoilMapComponent::Mask: return renderSlice(s, WindowLevel::fromRange(0, 1), ColorMap::Gray);
        case CoilMapComponent::Phase: {
            QImage image = renderSlice(s, WindowLevel::fromRange(-kPi, kPi), ColorMap::CoolWarm);
            // Outside the mask the maps are zero and their phase means nothing: black.
            const SliceData inside = maskSlice();
            for (int row = 0; row < image.height(); ++row)
                for (int column = 0; column < image.width(); ++column)
                    if (inside.at(column, row) == 0) image.setPixel(column, row, qRgb(0, 0, 0));
            return image;
        }
    }
    return {};
}

QImage CoilMapViewModel::render() const {
    if (!maps_) return {};
    if (coil_ != kAllCoils || component_ == CoilMapComponent::Mask) return renderCoil(std::max(coil_, 0));
    const auto size = sliceSize(grid_, slices_->orientation());
    const auto [columns, rows] = tiling();
    QImage out(columns * size[0] + (columns - 1) * kTileGap, rows * size[1] + (rows - 1) * kTileGap,
               QImage::Format_RGB32);
    out.fill(qRgb(64, 64, 64));  // the gaps and any empty tile: grey, unlike a map's black
    QPainter p(&out);
    for (int c = 0; c < coils(); ++c)
        p.drawImage(QPoint((c % columns) * (size[0] + kTileGap), (c / columns) * (size[1] + kTileGap)), renderCoil(c));
    return out;
}

QString CoilMapViewModel::caption() const {
    if (!maps_)
        return tr("No coil maps yet: they appear after a SENSE reconstruction of multi-coil data "
                  "(Coil combination: SENSE in the tune panel).");
    const Orientation o = slices_->orientation();
    const QString where = tr("%1 slice %2 of %3").arg(toString(o)).arg(slices_->slice()).arg(slices_->sliceCount());
    const QString mask = tr("mask: %1 of %2 voxels").arg(mask_voxels_).arg(grid_.voxels());
    QString what;
    switch (component_) {
        case CoilMapComponent::Magnitude:
            what = tr("|S| from 0 (black) to %1 (white)").arg(max_magnitude_, 0, 'g', 3);
            break;
        case CoilMapComponent::Phase:
            what = tr("phase from -pi (blue) through 0 (grey) to pi (red), black outside the mask");
            break;
        case CoilMapComponent::Mask: what = tr("white: inside the mask (SENSE solves there), black: outside"); break;
    }
    const QString which = component_ == CoilMapComponent::Mask ? tr("the maps' mask")
                          : coil_ == kAllCoils                 ? tr("all %1 coils").arg(coils())
                                                               : tr("coil %1 of %2").arg(coil_ + 1).arg(coils());
    return tr("%1 from %2 (%3); %4; %5").arg(which, describeCoilMapSource(maps_->source), where, mask, what);
}

}  // namespace studio
