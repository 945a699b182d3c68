#include "ui/slice_view_model.hpp"

#include <algorithm>
#include <cmath>

#include "recon/core/conventions.hpp"

namespace studio {

QString toString(Orientation o) {
    switch (o) {
        case Orientation::Axial: return QStringLiteral("Axial");
        case Orientation::Coronal: return QStringLiteral("Coronal");
        case Orientation::Sagittal: return QStringLiteral("Sagittal");
    }
    return {};
}

QString toString(DisplayMode m) {
    switch (m) {
        case DisplayMode::Magnitude: return QStringLiteral("Magnitude");
        case DisplayMode::Phase: return QStringLiteral("Phase");
        case DisplayMode::Real: return QStringLiteral("Real");
        case DisplayMode::Imaginary: return QStringLiteral("Imaginary");
    }
    return {};
}

QString toString(ColorMap c) {
    switch (c) {
        case ColorMap::Gray: return QStringLiteral("Gray");
        case ColorMap::Hot: return QStringLiteral("Hot");
        case ColorMap::Viridis: return QStringLiteral("Viridis");
        case ColorMap::CoolWarm: return QStringLiteral("Cool-warm");
    }
    return {};
}

PlaneAxes planeAxes(Orientation o) {
    switch (o) {
        case Orientation::Axial: return {0, 1, 2, false};
        case Orientation::Coronal: return {0, 2, 1, true};
        case Orientation::Sagittal: return {1, 2, 0, true};
    }
    return {0, 1, 2, false};
}

std::array<int, 2> sliceSize(const recon::Grid& g, Orientation o) {
    const PlaneAxes a = planeAxes(o);
    return {g.n[a.u], g.n[a.v]};
}

SlicePixel pixelOf(const recon::Grid& g, Orientation o, const std::array<int, 3>& voxel) {
    const PlaneAxes a = planeAxes(o);
    const int v = voxel[a.v];
    return {voxel[a.u], a.v_up ? g.n[a.v] - 1 - v : v};
}

std::array<int, 3> voxelOf(const recon::Grid& g, Orientation o, int slice, int column, int row) {
    const PlaneAxes a = planeAxes(o);
    std::array<int, 3> voxel{0, 0, 0};
    voxel[a.u] = column;
    voxel[a.v] = a.v_up ? g.n[a.v] - 1 - row : row;
    voxel[a.normal] = slice;
    return voxel;
}

SliceViewModel::SliceViewModel(QObject* parent) : QObject(parent) {}

void SliceViewModel::setGrid(const recon::Grid& g, double intensity_max) {
    grid_ = g;
    intensity_max_ = intensity_max > 0 && std::isfinite(intensity_max) ? intensity_max : 1.0;
    if (g.dims == 2) orientation_ = Orientation::Axial;  // the only plane a 2D image has
    cursor_ = {g.n[0] / 2, g.n[1] / 2, g.n[2] / 2};
    zoom_ = 1;
    pan_ = {};
    emit gridChanged();
    emit orientationChanged(orientation_);
    emit cursorChanged(cursor_);
    emit viewChanged();
    applyPreset(presetNames().front());
}

void SliceViewModel::setIntensityMax(double intensity_max) {
    if (!(intensity_max > 0) || !std::isfinite(intensity_max)) return;
    intensity_max_ = intensity_max;
    applyPreset(presetNames().front());
}

void SliceViewModel::setOrientation(Orientation o) {
    if (o == orientation_) return;
    orientation_ = o;
    pan_ = {};
    emit orientationChanged(o);
    emit viewChanged();
}

void SliceViewModel::setSlice(int index) {
    std::array<int, 3> c = cursor_;
    c[planeAxes(orientation_).normal] = index;
    setCursor(c);
}

void SliceViewModel::stepSlice(int delta) { setSlice(slice() + delta); }

void SliceViewModel::setCursor(const std::array<int, 3>& voxel) {
    std::array<int, 3> c;
    for (int i = 0; i < 3; ++i) c[i] = std::clamp(voxel[i], 0, grid_.n[i] - 1);
    if (c == cursor_) return;
    cursor_ = c;
    emit cursorChanged(cursor_);
}

void SliceViewModel::setZoom(double zoom) {
    const double z = std::clamp(zoom, 0.25, 64.0);
    if (z == zoom_) return;
    zoom_ = z;
    emit viewChanged();
}

void SliceViewModel::zoomBy(double factor) { setZoom(zoom_ * factor); }

void SliceViewModel::setPan(QPointF pan) {
    if (pan == pan_) return;
    pan_ = pan;
    emit viewChanged();
}

void SliceViewModel::panBy(QPointF delta) { setPan(pan_ + delta); }

void SliceViewModel::resetView() {
    zoom_ = 1;
    pan_ = {};
    emit viewChanged();
}

void SliceViewModel::setWindowLevel(WindowLevel wl) {
    // A zero-width window would divide by zero when mapping values to colours.
    wl.window = std::max(wl.window, 1e-9 * (modeRange()[1] - modeRange()[0]));
    if (wl.window == window_level_.window && wl.level == window_level_.level) return;
    window_level_ = wl;
    emit windowLevelChanged(wl);
}

void SliceViewModel::dragWindowLevel(double dx, double dy) {
    // One pixel moves the window or level by 1/500 of the mode's range, so a drag
    // across a typical view sweeps about the whole range.
    const auto r = modeRange();
    const double step = (r[1] - r[0]) / 500.0;
    setWindowLevel({window_level_.window + dx * step, window_level_.level + dy * step});
}

std::array<double, 2> SliceViewModel::modeRange() const {
    switch (mode_) {
        case DisplayMode::Magnitude: return {0.0, intensity_max_};
        case DisplayMode::Phase: return {-recon::kPi, recon::kPi};
        case DisplayMode::Real:
        case DisplayMode::Imaginary: return {-intensity_max_, intensity_max_};
    }
    return {0.0, 1.0};
}

QStringList SliceViewModel::presetNames() {
    return {QStringLiteral("Full range"), QStringLiteral("Soft tissue"), QStringLiteral("Narrow")};
}

WindowLevel SliceViewModel::presetWindow(const QString& name) const {
    const auto r = modeRange();
    const double span = r[1] - r[0];
    // Fractions of the magnitude range; signed modes (phase, real, imaginary) keep
    // the window centred on zero and narrow it by the same fraction.
    double lo = 0, hi = 1;
    if (name == QLatin1String("Soft tissue")) {
        lo = 0.0, hi = 0.5;  // Shepp-Logan's inner structures lie at 10-40 % of the skull
    } else if (name == QLatin1String("Narrow")) {
        lo = 0.1, hi = 0.45;
    }
    if (mode_ == DisplayMode::Magnitude) return WindowLevel::fromRange(r[0] + lo * span, r[0] + hi * span);
    return {(hi - lo) * span, (r[0] + r[1]) / 2};
}

void SliceViewModel::applyPreset(const QString& name) { setWindowLevel(presetWindow(name)); }

QString SliceViewModel::matchingPreset() const {
    for (const QString& name : presetNames()) {
        const WindowLevel p = presetWindow(name);
        const double tolerance = 1e-9 * std::max(std::abs(p.window), 1e-300);
        if (std::abs(p.window - window_level_.window) <= tolerance && std::abs(p.level - window_level_.level) <= tolerance)
            return name;
    }
    return {};
}

void SliceViewModel::setDisplayMode(DisplayMode m) {
    if (m == mode_) return;
    mode_ = m;
    emit displayChanged();
    applyPreset(presetNames().front());
}

void SliceViewModel::setColorMap(ColorMap c) {
    if (c == colormap_) return;
    colormap_ = c;
    emit displayChanged();
}

}  // namespace studio
