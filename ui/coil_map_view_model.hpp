// The coil maps a SENSE solve used, as the Coil maps tab shows them: one coil or all
// of them side by side, as magnitude or phase, or the maps' mask (ESPIRiT's: where the
// maps are defined), on the slice every other view shows (it follows SliceViewModel's
// orientation and cursor). Widget-free, like SliceViewModel; CoilMapView draws it.
#pragma once

#include <QImage>
#include <QObject>
#include <QString>

#include <array>
#include <memory>
#include <vector>

#include "recon/sense/coil_maps.hpp"
#include "ui/image_layers.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

enum class CoilMapComponent { Magnitude, Phase, Mask };
QString toString(CoilMapComponent c);  // "magnitude", "phase", "mask"
// Where maps came from (CoilMaps::source), in words: "ESPIRiT (estimated from the data)", "the file m.cfl".
QString describeCoilMapSource(const std::string& source);

class CoilMapViewModel : public QObject {
    Q_OBJECT
public:
    static constexpr int kAllCoils = -1;

    // `slices` (which outlives this) gives the orientation and the slice.
    explicit CoilMapViewModel(SliceViewModel* slices, QObject* parent = nullptr);

    // The maps to show on `grid` (null: none). Throws recon::InputError when their size
    // does not match grid and coils.
    void setMaps(std::shared_ptr<const recon::CoilMaps> maps, const recon::Grid& grid);
    bool hasMaps() const { return maps_ != nullptr; }
    const recon::CoilMaps* maps() const { return maps_.get(); }
    int coils() const { return maps_ ? maps_->coils : 0; }
    QString source() const;
    std::size_t maskVoxels() const { return mask_voxels_; }  // voxels inside the mask, whole volume
    double maxMagnitude() const { return max_magnitude_; }    // over every coil and voxel

    int coil() const { return coil_; }  // kAllCoils or 0 .. coils()-1
    void setCoil(int coil);             // clamped to [kAllCoils, coils()-1]
    CoilMapComponent component() const { return component_; }
    void setComponent(CoilMapComponent c);

    // One coil's map on the current slice, in the display layout of extractSlice:
    // |S_c|, arg(S_c) in (-pi, pi] (0 outside the mask), or the mask as 0/1 (the same for every coil).
    SliceData slice(int coil) const;
    // Tiles of the "all coils" picture: columns x rows, coil c at (c % columns, c / columns).
    std::array<int, 2> tiling() const;
    // What the tab shows: the chosen coil, or every coil in tiling() with a one-pixel gap.
    // Magnitude in grey from 0 to maxMagnitude(), phase from -pi to pi (cool-warm; black
    // outside the mask), the mask white inside. Null without maps.
    QImage render() const;
    // One line describing the picture (coils, source, slice, scale), for the caption.
    QString caption() const;

signals:
    void changed();  // new maps, coil, component, or the slice followed

private:
    SliceData maskSlice() const;
    QImage renderCoil(int coil) const;

    SliceViewModel* slices_;
    std::shared_ptr<const recon::CoilMaps> maps_;
    recon::Grid grid_;
    std::vector<Volume> volumes_;  // one per coil (the maps' own values, copied once)
    Volume mask_volume_;
    std::size_t mask_voxels_ = 0;
    double max_magnitude_ = 0;
    int coil_ = kAllCoils;
    CoilMapComponent component_ = CoilMapComponent::Magnitude;
};

}  // namespace studio
