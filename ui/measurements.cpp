#include "ui/measurements.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace studio {

bool Roi::contains(int column, int row) const {
    if (!pixels.contains(column, row)) return false;
    if (shape == RoiShape::Rectangle) return true;
    // Voxel centres inside the ellipse inscribed in the rectangle of voxels.
    const double cx = pixels.left() + (pixels.width() - 1) / 2.0, cy = pixels.top() + (pixels.height() - 1) / 2.0;
    const double rx = pixels.width() / 2.0, ry = pixels.height() / 2.0;
    const double dx = (column - cx) / rx, dy = (row - cy) / ry;
    return dx * dx + dy * dy <= 1.0;
}

RoiStats roiStats(const SliceData& slice, const Roi& roi) {
    RoiStats s;
    double sum = 0, sum2 = 0;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -std::numeric_limits<double>::infinity();
    const QRect r = roi.pixels.intersected(QRect(0, 0, slice.width, slice.height));
    for (int row = r.top(); row <= r.bottom(); ++row)
        for (int column = r.left(); column <= r.right(); ++column) {
            if (!roi.contains(column, row)) continue;
            const double v = slice.at(column, row);
            sum += v;
            s.min = std::min(s.min, v);
            s.max = std::max(s.max, v);
            ++s.voxels;
        }
    if (s.voxels == 0) return RoiStats{};
    s.mean = sum / s.voxels;
    for (int row = r.top(); row <= r.bottom(); ++row)
        for (int column = r.left(); column <= r.right(); ++column)
            if (roi.contains(column, row)) sum2 += (slice.at(column, row) - s.mean) * (slice.at(column, row) - s.mean);
    s.sd = s.voxels > 1 ? std::sqrt(sum2 / (s.voxels - 1)) : 0.0;
    return s;
}

double roiSnr(const RoiStats& signal, const RoiStats& background) {
    return background.sd > 0 ? signal.mean / background.sd : 0.0;
}

double roiContrast(const RoiStats& a, const RoiStats& b) {
    const double sum = a.mean + b.mean;
    return sum != 0 ? (a.mean - b.mean) / sum : 0.0;
}

std::vector<double> rowProfile(const SliceData& slice, int row) {
    std::vector<double> out;
    if (row < 0 || row >= slice.height) return out;
    out.reserve(std::size_t(slice.width));
    for (int column = 0; column < slice.width; ++column) out.push_back(slice.at(column, row));
    return out;
}

MeasurementModel::MeasurementModel(SliceViewModel* view, QObject* parent) : QObject(parent), view_(view) {
    // ROIs are drawn in slice pixels of one orientation and grid.
    connect(view_, &SliceViewModel::orientationChanged, this, &MeasurementModel::clearRois);
    connect(view_, &SliceViewModel::gridChanged, this, &MeasurementModel::clearRois);
}

void MeasurementModel::setRoi(int which, const Roi& roi) {
    const auto size = sliceSize(view_->grid(), view_->orientation());
    Roi r = roi;
    r.pixels = r.pixels.normalized().intersected(QRect(0, 0, size[0], size[1]));
    if (r.pixels.isEmpty()) return;
    rois_[std::size_t(which)] = r;
    emit roisChanged();
}

void MeasurementModel::clearRois() {
    if (!rois_[0] && !rois_[1] && !ruler_) return;
    rois_ = {};
    ruler_.reset();
    emit roisChanged();
}

void MeasurementModel::setRuler(QPoint from, QPoint to) {
    const auto size = sliceSize(view_->grid(), view_->orientation());
    auto clamp = [&size](QPoint p) { return QPoint(std::clamp(p.x(), 0, size[0] - 1), std::clamp(p.y(), 0, size[1] - 1)); };
    ruler_ = Ruler{clamp(from), clamp(to)};
    emit roisChanged();
}

double MeasurementModel::rulerMillimetres() const {
    if (!ruler_) return 0;
    const recon::Grid& g = view_->grid();
    const PlaneAxes a = planeAxes(view_->orientation());
    const double du = (ruler_->to.x() - ruler_->from.x()) * g.fov_mm[a.u] / g.n[a.u];
    const double dv = (ruler_->to.y() - ruler_->from.y()) * g.fov_mm[a.v] / g.n[a.v];
    return std::hypot(du, dv);
}

void MeasurementModel::setShape(RoiShape s) {
    shape_ = s;
    for (auto& r : rois_)
        if (r) r->shape = s;
    emit roisChanged();
}

}  // namespace studio
