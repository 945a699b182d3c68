#include "ui/sinogram_view_model.hpp"

#include <algorithm>
#include <cmath>

namespace studio {

SinogramViewModel::SinogramViewModel(QObject* parent) : QObject(parent) {}

void SinogramViewModel::setScan(std::shared_ptr<const recon::ct::CtData> scan) {
    scan_ = std::move(scan);
    row_ = scan_ ? rows() / 2 : 0;
    extract();
    emit changed();
}

int SinogramViewModel::rows() const { return scan_ ? scan_->geometry.beam.detector_rows : 0; }
int SinogramViewModel::views() const { return scan_ ? int(scan_->geometry.beam.views()) : 0; }
int SinogramViewModel::columns() const { return scan_ ? scan_->geometry.beam.detector_columns : 0; }

void SinogramViewModel::setRow(int row) {
    row = std::clamp(row, 0, std::max(0, rows() - 1));
    if (row == row_) return;
    row_ = row;
    extract();
    emit changed();
}

double SinogramViewModel::angleDegrees(int view) const {
    if (!scan_ || view < 0 || view >= views()) return 0;
    return scan_->geometry.beam.angles_rad[std::size_t(view)] * 180.0 / 3.14159265358979323846;
}

void SinogramViewModel::extract() {
    image_.clear();
    minimum_ = maximum_ = 0;
    if (!scan_) return;
    const std::size_t nu = std::size_t(columns()), nv = std::size_t(rows()), nviews = std::size_t(views());
    image_.resize(nviews * nu);
    for (std::size_t view = 0; view < nviews; ++view) {
        const double* line = scan_->projections.data() + (view * nv + std::size_t(row_)) * nu;
        std::copy(line, line + nu, image_.begin() + std::ptrdiff_t(view * nu));
    }
    if (!image_.empty()) {
        const auto [lo, hi] = std::minmax_element(image_.begin(), image_.end());
        minimum_ = *lo;
        maximum_ = *hi;
    }
}

QImage SinogramViewModel::render() const {
    if (image_.empty()) return {};
    QImage out(columns(), views(), QImage::Format_Grayscale8);
    const double span = maximum_ > minimum_ ? maximum_ - minimum_ : 1.0;
    for (int view = 0; view < views(); ++view) {
        uchar* line = out.scanLine(view);
        for (int u = 0; u < columns(); ++u) {
            const double t = (image_[std::size_t(view) * std::size_t(columns()) + std::size_t(u)] - minimum_) / span;
            line[u] = uchar(std::lround(255.0 * std::clamp(t, 0.0, 1.0)));
        }
    }
    return out;
}

}  // namespace studio
