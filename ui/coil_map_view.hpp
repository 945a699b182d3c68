// The Coil maps tab (multi-coil MR data): the maps the last SENSE solve used, one coil or
// all of them, as magnitude or phase, or their mask; draws a CoilMapViewModel.
#pragma once

#include <QWidget>

#include "ui/coil_map_view_model.hpp"

class QComboBox;
class QLabel;

namespace studio {

class CoilMapView : public QWidget {
    Q_OBJECT
public:
    CoilMapView(CoilMapViewModel* model, QWidget* parent = nullptr);
    QComboBox* coilBox() const { return coil_box_; }
    QComboBox* componentBox() const { return component_box_; }
    QString caption() const;  // the line under the picture, for tests

private:
    void refresh();

    CoilMapViewModel* model_;
    QComboBox* coil_box_ = nullptr;
    QComboBox* component_box_ = nullptr;
    QWidget* picture_ = nullptr;
    QLabel* caption_ = nullptr;
};

}  // namespace studio
