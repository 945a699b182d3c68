#include "ui/slice_rendering.hpp"

#include <algorithm>
#include <cmath>

namespace studio {

double displayValue(recon::cdouble v, DisplayMode m) {
    switch (m) {
        case DisplayMode::Magnitude: return std::abs(v);
        case DisplayMode::Phase: return std::arg(v);
        case DisplayMode::Real: return v.real();
        case DisplayMode::Imaginary: return v.imag();
    }
    return 0;
}

SliceData extractSlice(const Volume& volume, Orientation o, int slice, DisplayMode m, double gain) {
    SliceData out;
    if (volume.empty()) return out;
    const recon::Grid& g = volume.grid;
    const auto size = sliceSize(g, o);
    const int s = std::clamp(slice, 0, g.n[planeAxes(o).normal] - 1);
    out.width = size[0];
    out.height = size[1];
    out.values.resize(std::size_t(out.width) * out.height);
    for (int row = 0; row < out.height; ++row) {
        for (int column = 0; column < out.width; ++column) {
            const auto voxel = voxelOf(g, o, s, column, row);
            out.values[std::size_t(row) * out.width + column] =
                float(gain * displayValue(volume.at(voxel[0], voxel[1], voxel[2]), m));
        }
    }
    return out;
}

namespace {

struct Stop {
    double t;
    int r, g, b;
};

std::array<QRgb, 256> interpolate(std::initializer_list<Stop> stops) {
    std::array<QRgb, 256> table{};
    const std::vector<Stop> s(stops);
    for (int i = 0; i < 256; ++i) {
        const double t = i / 255.0;
        std::size_t k = 1;
        while (k + 1 < s.size() && s[k].t < t) ++k;
        const Stop& a = s[k - 1];
        const Stop& b = s[k];
        const double f = std::clamp((t - a.t) / (b.t - a.t), 0.0, 1.0);
        auto mix = [f](int x, int y) { return int(std::lround(x + f * (y - x))); };
        table[i] = qRgb(mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
    }
    return table;
}

}  // namespace

const std::array<QRgb, 256>& colorTable(ColorMap c) {
    static const auto gray = interpolate({{0, 0, 0, 0}, {1, 255, 255, 255}});
    static const auto hot = interpolate({{0, 0, 0, 0}, {0.375, 255, 0, 0}, {0.75, 255, 255, 0}, {1, 255, 255, 255}});
    // Matplotlib's viridis sampled at nine points (perceptually uniform).
    static const auto viridis = interpolate({{0.000, 68, 1, 84},    {0.125, 71, 44, 122},  {0.250, 59, 81, 139},
                                             {0.375, 44, 113, 142}, {0.500, 33, 144, 141}, {0.625, 39, 173, 129},
                                             {0.750, 92, 200, 99},  {0.875, 170, 220, 50}, {1.000, 253, 231, 37}});
    // Moreland's diverging cool-warm map: blue below the level, red above.
    static const auto coolwarm = interpolate({{0, 59, 76, 192}, {0.5, 221, 221, 221}, {1, 180, 4, 38}});
    switch (c) {
        case ColorMap::Gray: return gray;
        case ColorMap::Hot: return hot;
        case ColorMap::Viridis: return viridis;
        case ColorMap::CoolWarm: return coolwarm;
    }
    return gray;
}

QImage renderSlice(const SliceData& slice, WindowLevel wl, ColorMap c) {
    QImage image(slice.width, slice.height, QImage::Format_RGB32);
    if (slice.width == 0 || slice.height == 0) return image;
    const auto& table = colorTable(c);
    const double low = wl.low();
    const double scale = 255.0 / std::max(wl.window, 1e-300);
    for (int row = 0; row < slice.height; ++row) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(row));
        for (int column = 0; column < slice.width; ++column) {
            const double v = slice.at(column, row);
            const double t = std::isfinite(v) ? std::clamp((v - low) * scale, 0.0, 255.0) : 0.0;
            line[column] = table[std::size_t(t + 0.5)];
        }
    }
    return image;
}

WindowLevel percentileWindow(const SliceData& slice, double low, double high) {
    std::vector<float> v;
    v.reserve(slice.values.size());
    for (float x : slice.values)
        if (std::isfinite(x)) v.push_back(x);
    if (v.empty()) return {1, 0.5};
    auto at = [&v](double p) {
        const std::size_t k = std::min(v.size() - 1, std::size_t(p / 100.0 * double(v.size() - 1) + 0.5));
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
        return double(v[k]);
    };
    const double lo = at(low);
    const double hi = at(high);
    if (hi > lo) return WindowLevel::fromRange(lo, hi);
    return {std::max(std::abs(hi), 1e-12), hi};  // a flat slice: any window shows it as one grey
}

QString formatReadout(double value, double scale, int digits) {
    if (!std::isfinite(value)) return QString::number(value);
    if (!(scale > 0) || !std::isfinite(scale)) return QString::number(value, 'g', digits);
    const int decimals = digits - 1 - int(std::floor(std::log10(scale)));
    if (decimals < 0 || decimals > digits + 3) return QString::number(value, 'g', digits);
    QString s = QString::number(value, 'f', decimals);
    // A value that rounds to zero has no sign.
    if (s.startsWith(QLatin1Char('-')) && s.mid(1).toDouble() == 0) s.remove(0, 1);
    return s;
}

}  // namespace studio
