// What every slice view shows, in one object all of them observe (ITK-SNAP's
// SliceWindowCoordinator, 3D Slicer's shared cursor): orientation, the cursor
// (whose coordinate along the orientation's normal is the slice), zoom and pan,
// window/level, display mode and colour map. Views never talk to each other; a
// view changes this model and every view (and the 3D views) follows.
#pragma once

#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <array>

#include "recon/core/types.hpp"

namespace studio {

enum class Orientation { Axial, Coronal, Sagittal };
enum class DisplayMode { Magnitude, Phase, Real, Imaginary };
enum class ColorMap { Gray, Hot, Viridis, CoolWarm };

QString toString(Orientation o);
QString toString(DisplayMode m);
QString toString(ColorMap c);

// The image axes a slice of `o` spans. Axial: x right, y down, slice along z.
// Coronal: x right, z up, slice along y. Sagittal: y right, z up, slice along x.
struct PlaneAxes {
    int u;       // image axis shown left to right
    int v;       // image axis shown along the rows
    int normal;  // the slice axis
    bool v_up;   // rows run from high v (top) to low v: z points up
};
PlaneAxes planeAxes(Orientation o);

// Voxel <-> pixel of a slice image (column, row; row 0 at the top).
struct SlicePixel {
    int column = 0, row = 0;
};
SlicePixel pixelOf(const recon::Grid& g, Orientation o, const std::array<int, 3>& voxel);
std::array<int, 3> voxelOf(const recon::Grid& g, Orientation o, int slice, int column, int row);
// Width and height of a slice image of `o`.
std::array<int, 2> sliceSize(const recon::Grid& g, Orientation o);

struct WindowLevel {
    double window = 1;  // width of the displayed range
    double level = 0.5; // its centre
    double low() const { return level - window / 2; }
    double high() const { return level + window / 2; }
    static WindowLevel fromRange(double lo, double hi) { return {hi - lo, (hi + lo) / 2}; }
};

class SliceViewModel : public QObject {
    Q_OBJECT
public:
    explicit SliceViewModel(QObject* parent = nullptr);

    // A new image geometry: cursor to the centre, view reset. `intensity_max` is
    // the largest magnitude the images hold (the truth's, else gridding's): the
    // window/level presets and the mouse's sensitivity are relative to it.
    void setGrid(const recon::Grid& g, double intensity_max);
    // A better estimate of the images' largest magnitude (e.g. from gridding when
    // there is no truth); re-applies the full-range preset.
    void setIntensityMax(double intensity_max);
    const recon::Grid& grid() const { return grid_; }
    double intensityMax() const { return intensity_max_; }

    Orientation orientation() const { return orientation_; }
    const std::array<int, 3>& cursor() const { return cursor_; }
    int slice() const { return cursor_[planeAxes(orientation_).normal]; }
    int sliceCount() const { return grid_.n[planeAxes(orientation_).normal]; }
    double zoom() const { return zoom_; }
    QPointF pan() const { return pan_; }  // view centre's offset from the slice's centre, in pixels of the slice
    WindowLevel windowLevel() const { return window_level_; }
    DisplayMode displayMode() const { return mode_; }
    ColorMap colorMap() const { return colormap_; }

    // Window/level presets by name, relative to the display mode's natural range.
    static QStringList presetNames();

public slots:
    void setOrientation(studio::Orientation o);
    void setSlice(int index);          // clamped
    void stepSlice(int delta);
    void setCursor(const std::array<int, 3>& voxel);  // clamped per axis
    void setZoom(double zoom);         // clamped to [0.25, 64]; 1 fits the slice
    void zoomBy(double factor);
    void setPan(QPointF pan);
    void panBy(QPointF delta);
    void resetView();                  // zoom 1, no pan
    void setWindowLevel(studio::WindowLevel wl);
    // A mouse drag of (dx, dy) pixels, as in clinical viewers: right widens the
    // window (less contrast), down raises the level (darker image).
    void dragWindowLevel(double dx, double dy);
    void applyPreset(const QString& name);
    // What a preset sets in the current display mode; the preset the current
    // window/level equals, or "" (the toolbar then says "Custom").
    WindowLevel presetWindow(const QString& name) const;
    QString matchingPreset() const;
    void setDisplayMode(studio::DisplayMode m);  // also applies the mode's full range
    void setColorMap(studio::ColorMap c);

signals:
    void gridChanged();
    void orientationChanged(studio::Orientation o);
    void cursorChanged(const std::array<int, 3>& voxel);  // also when the slice changes
    void viewChanged();                                   // zoom or pan
    void windowLevelChanged(studio::WindowLevel wl);
    void displayChanged();                                // mode or colour map

private:
    // The natural range of the current mode: [0, max], [-pi, pi] or [-max, max].
    std::array<double, 2> modeRange() const;

    recon::Grid grid_ = recon::Grid::make2D(1, 1);
    double intensity_max_ = 1;
    Orientation orientation_ = Orientation::Axial;
    std::array<int, 3> cursor_{0, 0, 0};
    double zoom_ = 1;
    QPointF pan_;
    WindowLevel window_level_{1, 0.5};
    DisplayMode mode_ = DisplayMode::Magnitude;
    ColorMap colormap_ = ColorMap::Gray;
};

}  // namespace studio

Q_DECLARE_METATYPE(studio::Orientation)
Q_DECLARE_METATYPE(studio::DisplayMode)
Q_DECLARE_METATYPE(studio::ColorMap)
Q_DECLARE_METATYPE(studio::WindowLevel)
