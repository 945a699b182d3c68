#include "ui/three_d_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include "ui/ct_scene.hpp"
#include "ui/reconstruction_controller.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/vtk/trajectory_view.hpp"
#include "ui/vtk/volume_view.hpp"

namespace studio {

using reconstudio::vtkviews::TrajectoryView;
using reconstudio::vtkviews::VolumeView;

ThreeDPanel::ThreeDPanel(ReconstructionController* controller, SliceViewModel* model, QWidget* parent)
    : QWidget(parent), controller_(controller), model_(model) {
    setObjectName(QStringLiteral("three-d"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    tabs_ = new QTabWidget(this);
    layout->addWidget(tabs_);

    // Volumes, side by side with one camera.
    auto* volumes = new QWidget(tabs_);
    auto* vbox = new QVBoxLayout(volumes);
    auto* controls = new QHBoxLayout;
    auto* views = new QHBoxLayout;
    const std::array<Layer, 2> initial{Layer::GriddingKaiserBessel, Layer::Iterative};
    for (int side = 0; side < 2; ++side) {
        layer_boxes_[side] = new QComboBox(volumes);
        for (Layer l : kAllLayers) layer_boxes_[side]->addItem(layerTitle(l), int(l));
        layer_boxes_[side]->setCurrentIndex(layer_boxes_[side]->findData(int(initial[side])));
        controls->addWidget(new QLabel(side == 0 ? tr("Left:") : tr("Right:"), volumes));
        controls->addWidget(layer_boxes_[side]);
        connect(layer_boxes_[side], &QComboBox::currentIndexChanged, this, [this, side] {
            markDirty(side);
            refreshVolumes();
        });
        volumes_[side] = new VolumeView(volumes);
        views->addWidget(volumes_[side], 1);
        connect(volumes_[side], &VolumeView::cursorPicked, model_,
                [this](int x, int y, int z) { model_->setCursor({x, y, z}); });
    }
    volumes_[1]->linkCamera(volumes_[0]);
    auto applyColourMap = [this] {
        const auto& table = colorTable(model_->colorMap());
        const std::vector<unsigned int> colours(table.begin(), table.end());
        for (VolumeView* v : volumes_) v->setColourTable(colours);
    };
    applyColourMap();
    for (VolumeView* v : volumes_) v->setSlicePlaneOpacity(0.35);  // the volume shows through by default
    mip_ = new QCheckBox(tr("Maximum intensity projection"), volumes);
    connect(mip_, &QCheckBox::toggled, this, [this](bool on) {
        for (VolumeView* v : volumes_)
            v->setRenderMode(on ? VolumeView::RenderMode::MaximumIntensity : VolumeView::RenderMode::Composite);
    });
    planes_ = new QComboBox(volumes);
    planes_->setToolTip(tr("The three slice planes through the cursor"));
    planes_->addItem(tr("Planes translucent"), 0.35);
    planes_->addItem(tr("Planes opaque"), 1.0);
    planes_->addItem(tr("Planes hidden"), 0.0);
    connect(planes_, &QComboBox::currentIndexChanged, this, [this] {
        const double opacity = planes_->currentData().toDouble();
        for (VolumeView* v : volumes_) {
            v->setSlicePlanesVisible(opacity > 0);
            if (opacity > 0) v->setSlicePlaneOpacity(opacity);
        }
    });
    auto* reset = new QPushButton(tr("Reset camera"), volumes);
    connect(reset, &QPushButton::clicked, this, [this] { volumes_[0]->resetCamera(); });
    controls->addStretch(1);
    controls->addWidget(mip_);
    controls->addWidget(planes_);
    controls->addWidget(reset);
    ct_view_label_ = new QLabel(tr("CT view:"), volumes);
    ct_view_ = new QSpinBox(volumes);
    ct_view_->setObjectName(QStringLiteral("ct-view"));
    ct_view_->setToolTip(tr("The projection whose source position and detector are drawn, with the source orbit"));
    controls->addWidget(ct_view_label_);
    controls->addWidget(ct_view_);
    connect(ct_view_, &QSpinBox::valueChanged, this, &ThreeDPanel::refreshScan);
    ct_view_label_->setVisible(false);  // CT data sets only (refreshScan)
    ct_view_->setVisible(false);
    vbox->addLayout(controls);
    vbox->addLayout(views, 1);
    tabs_->addTab(volumes, tr("Volumes"));

    // Trajectory.
    auto* traj = new QWidget(tabs_);
    auto* tbox = new QVBoxLayout(traj);
    auto* tcontrols = new QHBoxLayout;
    colour_by_ = new QComboBox(traj);
    colour_by_->addItem(tr("Colour by readout"), int(TrajectoryView::ColourBy::Readout));
    colour_by_->addItem(tr("Colour by density weight"), int(TrajectoryView::ColourBy::Density));
    tcontrols->addWidget(colour_by_);
    tcontrols->addStretch(1);
    trajectory_ = new TrajectoryView(traj);
    tbox->addLayout(tcontrols);
    tbox->addWidget(trajectory_, 1);
    connect(colour_by_, &QComboBox::currentIndexChanged, this, [this] {
        const auto by = TrajectoryView::ColourBy(colour_by_->currentData().toInt());
        if (by == TrajectoryView::ColourBy::Density && !trajectory_->hasDensity()) {
            colour_by_->setCurrentIndex(0);  // the data set has no density weights
            return;
        }
        trajectory_->setColourBy(by);
    });
    tabs_->addTab(traj, tr("Trajectory"));
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        refreshVolumes();
        refreshTrajectory();
    });

    // Models -> views.
    refresh_.setSingleShot(true);
    refresh_.setInterval(250);
    connect(&refresh_, &QTimer::timeout, this, &ThreeDPanel::refreshVolumes);
    connect(&controller_->layers(), &ImageLayers::layerChanged, this, [this](Layer l) {
        for (int side = 0; side < 2; ++side)
            if (layerShown(side) == l) markDirty(side);
        if (!refresh_.isActive()) refresh_.start();
    });
    connect(&controller_->layers(), &ImageLayers::layersReset, this, [this] {
        for (QComboBox* box : layer_boxes_)  // names follow the modality (CT: FDK, Iterative (WLS))
            for (int i = 0; i < box->count(); ++i) box->setItemText(i, controller_->layers().title(Layer(box->itemData(i).toInt())));
        refreshScan();
        markDirty(0);
        markDirty(1);
        trajectory_dirty_ = true;
        refreshVolumes();
        refreshTrajectory();
    });
    connect(model_, &SliceViewModel::displayChanged, this, [this, applyColourMap] {
        applyColourMap();
        markDirty(0);
        markDirty(1);
        refreshVolumes();
    });
    connect(controller_, &ReconstructionController::densityWeightsChanged, this, [this] {
        trajectory_dirty_ = true;
        refreshTrajectory();
    });
    connect(model_, &SliceViewModel::windowLevelChanged, this, [this](WindowLevel wl) {
        for (VolumeView* v : volumes_)
            if (v->hasVolume()) v->setWindowLevel(wl.window, wl.level);
    });
    connect(model_, &SliceViewModel::cursorChanged, this, [this](const std::array<int, 3>& c) {
        for (VolumeView* v : volumes_)
            if (v->hasVolume()) v->setCursor(c[0], c[1], c[2]);
    });
}

ThreeDPanel::~ThreeDPanel() = default;

Layer ThreeDPanel::layerShown(int side) const { return Layer(layer_boxes_[side]->currentData().toInt()); }

void ThreeDPanel::markDirty(int side) { dirty_[side] = true; }

void ThreeDPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    refreshVolumes();
    refreshTrajectory();
}

void ThreeDPanel::refreshVolumes() {
    if (!isVisible()) return;  // uploaded when the tab is shown
    for (int side = 0; side < 2; ++side) {
        if (!dirty_[side]) continue;
        dirty_[side] = false;
        VolumeView* view = volumes_[side];
        const LayerImage* image = controller_->layers().get(layerShown(side));
        if (!image || image->volume.empty()) {
            view->clearVolume();
            continue;
        }
        const recon::ComplexArray& data = *image->volume.data;
        std::vector<float> values(data.size());
        for (std::size_t i = 0; i < data.size(); ++i) values[i] = float(displayValue(data[i], model_->displayMode()));
        view->setVolume(image->volume.grid, values, controller_->layers().title(layerShown(side)));
        const WindowLevel wl = model_->windowLevel();
        view->setWindowLevel(wl.window, wl.level);
        const auto& c = model_->cursor();
        view->setCursor(c[0], c[1], c[2]);
    }
}

void ThreeDPanel::refreshTrajectory() {
    if (!isVisible() || !trajectory_dirty_ || !trajectory_->isVisible()) return;
    trajectory_dirty_ = false;
    const auto data = controller_->dataset();
    if (!data) {
        trajectory_->clear();
        return;
    }
    // The data set's own weights or those gridding computed: either can colour the samples.
    const auto density = controller_->densityWeights();
    colour_by_->setEnabled(density != nullptr);
    const auto by = density ? TrajectoryView::ColourBy(colour_by_->currentData().toInt()) : TrajectoryView::ColourBy::Readout;
    if (!density) colour_by_->setCurrentIndex(0);
    trajectory_->setTrajectory(data->trajectory, density ? density.get() : nullptr, by);
}

void ThreeDPanel::refreshScan() {
    const auto scan = controller_->ctData();
    ct_view_->setVisible(scan != nullptr);
    ct_view_label_->setVisible(scan != nullptr);
    std::vector<VolumeView::Polyline> lines;
    if (scan) {
        const QSignalBlocker block(ct_view_);
        ct_view_->setRange(0, std::max(0, int(scan->geometry.beam.views()) - 1));
        const CtScene scene = ctScene(scan->geometry.beam, ct_view_->value());
        lines.push_back(scene.orbit);
        lines.push_back({scene.detector[0], scene.detector[1], scene.detector[2], scene.detector[3], scene.detector[0]});
        for (const Point3& corner : scene.detector) lines.push_back({scene.source, corner});
    }
    for (VolumeView* v : volumes_) v->setSceneLines(lines);
}

}  // namespace studio
