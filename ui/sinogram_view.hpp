// The Sinogram tab (CT data sets): the current detector row's projections as an image
// (views down, detector columns across) with a row selector; draws a SinogramViewModel.
#pragma once

#include <QWidget>

#include "ui/sinogram_view_model.hpp"

class QLabel;
class QSpinBox;

namespace studio {

class SinogramView : public QWidget {
    Q_OBJECT
public:
    SinogramView(SinogramViewModel* model, QWidget* parent = nullptr);
    QSpinBox* rowBox() const { return row_box_; }
    QString caption() const;  // the line under the image, for tests

private:
    void refresh();

    SinogramViewModel* model_;
    QSpinBox* row_box_ = nullptr;
    QLabel* image_label_ = nullptr;
    QLabel* caption_ = nullptr;
};

}  // namespace studio
