// Helpers shared by the VTK view tests: synthetic volumes, projecting world
// points to widget pixels, and reading rendered pixels.
#pragma once

#include <QDir>
#include <QImage>
#include <QPoint>
#include <QString>

#include <vtkRenderer.h>

#include <array>
#include <cmath>
#include <functional>
#include <vector>

#include "recon/core/types.hpp"
#include "ui/vtk/vtk_widget.hpp"

namespace vtktest {

using reconstudio::vtkviews::VtkWidget;

// Where tests write the screenshots a person looks at.
inline QString screenshotPath(const QString& name) {
    const QString dir = QStringLiteral(RECONSTUDIO_VTK_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    return dir + "/" + name;
}

// values[x + n0 (y + n1 z)] = f(x, y, z)
inline std::vector<float> makeVolume(const recon::Grid& g, const std::function<float(int, int, int)>& f) {
    std::vector<float> v(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) v[g.index(x, y, z)] = f(x, y, z);
    return v;
}

// World position (mm) of voxel (x, y, z) as the views place it: (i - N/2) * fov/N.
inline std::array<double, 3> voxelWorld(const recon::Grid& g, double x, double y, double z) {
    const double i[3] = {x, y, z};
    std::array<double, 3> w{};
    for (int a = 0; a < 3; ++a) w[a] = (i[a] - g.n[a] / 2) * g.fov_mm[a] / g.n[a];
    return w;
}

// Widget position (logical pixels, y down) where world point p is drawn.
inline QPointF project(VtkWidget* w, const std::array<double, 3>& p) {
    vtkRenderer* ren = w->renderer();
    ren->SetWorldPoint(p[0], p[1], p[2], 1.0);
    ren->WorldToDisplay();
    double d[3];
    ren->GetDisplayPoint(d);
    return w->fromDisplay(d[0], d[1]);
}

// The rendered frame as 32-bit RGB, in device pixels.
inline QImage frame(VtkWidget* w) { return w->grabImage().convertToFormat(QImage::Format_RGB32); }

inline QPoint devicePixel(VtkWidget* w, QPointF widgetPos) {
    const double dpr = w->devicePixelRatioF();
    return {int(std::lround(widgetPos.x() * dpr)), int(std::lround(widgetPos.y() * dpr))};
}

inline int colourDistance(QRgb a, QRgb b) {
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
}

inline QRgb backgroundOf(vtkRenderer* ren) {
    double c[3];
    ren->GetBackground(c);
    return qRgb(int(std::lround(c[0] * 255)), int(std::lround(c[1] * 255)), int(std::lround(c[2] * 255)));
}

// Fraction of pixels in `rect` for which pred holds.
inline double fraction(const QImage& img, const QRect& rect, const std::function<bool(QRgb)>& pred) {
    const QRect r = rect.intersected(img.rect());
    if (r.isEmpty()) return 0;
    long hit = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) hit += pred(img.pixel(x, y)) ? 1 : 0;
    return double(hit) / (double(r.width()) * r.height());
}

inline int differingPixels(const QImage& a, const QImage& b, int tolerance = 24) {
    int n = 0;
    for (int y = 0; y < std::min(a.height(), b.height()); ++y)
        for (int x = 0; x < std::min(a.width(), b.width()); ++x)
            n += colourDistance(a.pixel(x, y), b.pixel(x, y)) > tolerance ? 1 : 0;
    return n;
}

}  // namespace vtktest
