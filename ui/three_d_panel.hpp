// The 3D tab: issue 7's VTK views (ui/vtk) kept in step with the workstation's
// models. Two volume views with one camera (gridding beside iterative by
// default), whose slice planes follow the shared cursor and whose transfer
// function follows window/level; a click in 3D moves the cursor of every view;
// and the trajectory of the loaded data. Only built with VTK, only shown where
// OpenGL works (not with the offscreen platform).
#pragma once

#include <QTimer>
#include <QWidget>

#include <array>

#include "ui/image_layers.hpp"
#include "ui/slice_view_model.hpp"

class QCheckBox;
class QComboBox;
class QSpinBox;
class QTabWidget;

namespace reconstudio::vtkviews {
class VolumeView;
class TrajectoryView;
}  // namespace reconstudio::vtkviews

namespace studio {

class ReconstructionController;

class ThreeDPanel : public QWidget {
    Q_OBJECT
public:
    ThreeDPanel(ReconstructionController* controller, SliceViewModel* model, QWidget* parent = nullptr);
    ~ThreeDPanel() override;

    reconstudio::vtkviews::VolumeView* volumeView(int side) const { return volumes_[side]; }
    reconstudio::vtkviews::TrajectoryView* trajectoryView() const { return trajectory_; }
    QComboBox* planesBox() const { return planes_; }
    QComboBox* colourByBox() const { return colour_by_; }
    // CT: the view whose source and detector are drawn around the volumes (with the orbit).
    QSpinBox* ctViewBox() const { return ct_view_; }

protected:
    void showEvent(QShowEvent* e) override;

private:
    Layer layerShown(int side) const;
    void markDirty(int side);
    void refreshVolumes();  // the dirty sides, when visible
    void refreshTrajectory();
    void refreshScan();  // CT: orbit, source and detector at ct_view_; MR: none

    ReconstructionController* controller_;
    SliceViewModel* model_;
    QTabWidget* tabs_ = nullptr;
    std::array<reconstudio::vtkviews::VolumeView*, 2> volumes_{};
    std::array<QComboBox*, 2> layer_boxes_{};
    std::array<bool, 2> dirty_{true, true};
    QCheckBox* mip_ = nullptr;
    QComboBox* planes_ = nullptr;  // translucent, opaque or hidden slice planes
    QSpinBox* ct_view_ = nullptr;
    QWidget* ct_view_label_ = nullptr;
    reconstudio::vtkviews::TrajectoryView* trajectory_ = nullptr;
    QComboBox* colour_by_ = nullptr;
    bool trajectory_dirty_ = true;
    // Live iterates arrive every iteration; the volumes are re-uploaded at most
    // this often so rotating stays smooth while CG runs.
    QTimer refresh_;
};

}  // namespace studio
