// The Measurements dock: statistics of ROI A and B in every image (mean, SD,
// min, max; SNR = mean A / SD B; contrast), and the line profile through the
// cursor (the slice's row through it) of every image in one plot.
#pragma once

#include <QWidget>

#include "ui/image_layers.hpp"
#include "ui/measurements.hpp"

class QChart;
class QChartView;
class QComboBox;
class QTableWidget;
class QValueAxis;

namespace studio {

class MeasurementPanel : public QWidget {
    Q_OBJECT
public:
    MeasurementPanel(ImageLayers* layers, SliceViewModel* view, MeasurementModel* measurements,
                     QWidget* parent = nullptr);

    QTableWidget* table() const { return table_; }
    QChart* profileChart() const;
    // The images measured, in the table's row order.
    static const std::vector<Layer>& images();

private:
    void refresh();

    ImageLayers* layers_;
    SliceViewModel* view_;
    MeasurementModel* measurements_;
    QComboBox* shape_ = nullptr;
    QTableWidget* table_ = nullptr;
    QChartView* profile_ = nullptr;
    QValueAxis* position_axis_ = nullptr;
    QValueAxis* value_axis_ = nullptr;
};

}  // namespace studio
