// From a complex volume to the pixels of one slice: the display mode's real
// value per voxel, then window/level and a colour map. Widget-free (QImage is a
// plain pixel buffer), so tests check pixel values directly.
#pragma once

#include <QImage>
#include <QRgb>

#include <array>
#include <vector>

#include "ui/image_layers.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

// Row-major, row 0 at the top, in the orientation's display layout (see planeAxes).
struct SliceData {
    int width = 0, height = 0;
    std::vector<float> values;
    float at(int column, int row) const { return values[std::size_t(row) * width + column]; }
};

double displayValue(recon::cdouble v, DisplayMode m);
SliceData extractSlice(const Volume& volume, Orientation o, int slice, DisplayMode m, double gain = 1.0);

// 256-entry lookup table of a colour map, from low (0) to high (255).
const std::array<QRgb, 256>& colorTable(ColorMap c);
QImage renderSlice(const SliceData& slice, WindowLevel wl, ColorMap c);

// A readout with `digits` significant digits of `scale` (the largest value the
// image can show, e.g. the truth's maximum): 5.551e-17 on an image of scale 1
// reads 0.0000, 0.2 reads 0.2000; far outside [1e-4, 1e6] it falls back to %g.
QString formatReadout(double value, double scale, int digits = 4);

// Window/level spanning the [low, high] percentiles (0..100) of the slice's values:
// "auto" window/level, robust to a few bright voxels.
WindowLevel percentileWindow(const SliceData& slice, double low = 0.5, double high = 99.5);

}  // namespace studio
