// Measurements on the slice shown (issue 16, item 6): two regions of interest
// (A: signal, B: background) shared by every view, their statistics in every
// image, SNR and contrast between them, and the profile through the cursor.
// Widget-free: the numbers are tested directly; ui/measurement_panel shows them.
#pragma once

#include <QObject>
#include <QRect>

#include <array>
#include <optional>
#include <vector>

#include "ui/slice_rendering.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

enum class RoiShape { Rectangle, Ellipse };

// A region in slice pixels (column, row; both corners included) of the current
// orientation; an ellipse is the one inscribed in the rectangle.
struct Roi {
    QRect pixels;
    RoiShape shape = RoiShape::Rectangle;
    bool contains(int column, int row) const;
};

struct RoiStats {
    int voxels = 0;
    double mean = 0, sd = 0, min = 0, max = 0;  // sd: sample standard deviation (n - 1)
};
RoiStats roiStats(const SliceData& slice, const Roi& roi);
// SNR of A against the noise in background B: mean(A) / sd(B) (0 without noise).
double roiSnr(const RoiStats& signal, const RoiStats& background);
// Michelson contrast between A and B: (mean A - mean B) / (mean A + mean B).
double roiContrast(const RoiStats& a, const RoiStats& b);
// The values along one row of the slice (left to right).
std::vector<double> rowProfile(const SliceData& slice, int row);

class MeasurementModel : public QObject {
    Q_OBJECT
public:
    explicit MeasurementModel(SliceViewModel* view, QObject* parent = nullptr);

    static constexpr int kRois = 2;  // A (signal), B (background)
    const std::optional<Roi>& roi(int which) const { return rois_[which]; }
    void setRoi(int which, const Roi& roi);  // clamped to the slice
    void clearRois();
    // A distance: a line between two voxel centres of the slice, in mm.
    struct Ruler {
        QPoint from, to;  // slice pixels (column, row)
    };
    const std::optional<Ruler>& ruler() const { return ruler_; }
    void setRuler(QPoint from, QPoint to);  // clamped to the slice
    double rulerMillimetres() const;        // 0 without a ruler
    RoiShape shape() const { return shape_; }
    void setShape(RoiShape s);  // of the ROIs drawn from now on (and the current ones)

signals:
    void roisChanged();

private:
    SliceViewModel* view_;
    std::array<std::optional<Roi>, kRois> rois_;
    std::optional<Ruler> ruler_;
    RoiShape shape_ = RoiShape::Rectangle;
};

}  // namespace studio
