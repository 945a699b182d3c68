#include "ui/vtk/trajectory_view.hpp"

#include <QVBoxLayout>

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkColorTransferFunction.h>
#include <vtkCommand.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkInteractorObserver.h>
#include <vtkCubeAxesActor.h>
#include <vtkFloatArray.h>
#include <vtkOutlineSource.h>
#include <vtkPointData.h>
#include <vtkPointGaussianMapper.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkTextProperty.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "recon/core/errors.hpp"
#include "ui/vtk/trajectory_decimation.hpp"
#include "ui/vtk/vtk_widget.hpp"

namespace reconstudio::vtkviews {
namespace {

constexpr double kBackground[3] = {0.08, 0.09, 0.12};
constexpr const char* kReadoutArray = "readout";
constexpr const char* kDensityArray = "density";

// Viridis at five stops: perceptually uniform, readable on a dark background.
constexpr double kViridis[5][3] = {
    {0.267, 0.005, 0.329}, {0.229, 0.322, 0.546}, {0.128, 0.567, 0.551}, {0.369, 0.789, 0.383}, {0.993, 0.906, 0.144}};

void fillViridis(vtkColorTransferFunction* f, double lo, double hi) {
    f->RemoveAllPoints();
    for (int i = 0; i < 5; ++i) f->AddRGBPoint(lo + i / 4.0 * (hi - lo), kViridis[i][0], kViridis[i][1], kViridis[i][2]);
    f->ClampingOn();
}

}  // namespace

TrajectoryView::TrajectoryView(QWidget* parent) : QWidget(parent) {
    view_ = new VtkWidget(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    build();
}

TrajectoryView::~TrajectoryView() {
    vtkInteractorObserver* style = view_->interactor()->GetInteractorStyle();
    for (unsigned long tag : interactionObservers_) style->RemoveObserver(tag);
}

vtkRenderer* TrajectoryView::renderer() const { return view_->renderer(); }

void TrajectoryView::build() {
    vtkRenderer* ren = renderer();
    ren->SetBackground(kBackground[0], kBackground[1], kBackground[2]);

    colours_ = vtkSmartPointer<vtkColorTransferFunction>::New();
    for (Level& level : levels_) {
        level.points = vtkSmartPointer<vtkPolyData>::New();
        level.mapper = vtkSmartPointer<vtkPointGaussianMapper>::New();
        level.mapper->SetInputData(level.points);
        level.mapper->SetScaleFactor(0);  // plain GL points, no splats: cheapest for millions
        level.mapper->EmissiveOff();
        level.mapper->SetLookupTable(colours_);
        level.mapper->SetScalarModeToUsePointFieldData();
        level.mapper->ScalarVisibilityOn();
        level.actor = vtkSmartPointer<vtkActor>::New();
        level.actor->SetMapper(level.mapper);
        level.actor->GetProperty()->SetPointSize(2);
        level.actor->VisibilityOff();
        ren->AddActor(level.actor);
    }
    // The trackball style announces the start and end of every drag and wheel zoom.
    vtkInteractorObserver* style = view_->interactor()->GetInteractorStyle();
    interactionObservers_ = {
        style->AddObserver(vtkCommand::StartInteractionEvent, this, &TrajectoryView::onInteraction),
        style->AddObserver(vtkCommand::EndInteractionEvent, this, &TrajectoryView::onInteraction)};

    box_ = vtkSmartPointer<vtkOutlineSource>::New();
    vtkNew<vtkPolyDataMapper> boxMapper;
    boxMapper->SetInputConnection(box_->GetOutputPort());
    boxActor_ = vtkSmartPointer<vtkActor>::New();
    boxActor_->SetMapper(boxMapper);
    boxActor_->GetProperty()->SetColor(0.75, 0.75, 0.8);
    boxActor_->GetProperty()->LightingOff();
    boxActor_->VisibilityOff();
    ren->AddActor(boxActor_);

    axes_ = vtkSmartPointer<vtkCubeAxesActor>::New();
    axes_->SetCamera(ren->GetActiveCamera());
    axes_->SetXTitle("kx");
    axes_->SetYTitle("ky");
    axes_->SetZTitle("kz");
    axes_->SetXUnits("cycles/FOV");
    axes_->SetYUnits("cycles/FOV");
    axes_->SetZUnits("cycles/FOV");
    axes_->SetFlyModeToOuterEdges();
    axes_->DrawXGridlinesOff();
    for (int a = 0; a < 3; ++a) {
        axes_->GetTitleTextProperty(a)->SetColor(0.85, 0.85, 0.85);
        axes_->GetLabelTextProperty(a)->SetColor(0.85, 0.85, 0.85);
    }
    axes_->GetXAxesLinesProperty()->SetColor(0.6, 0.6, 0.65);
    axes_->GetYAxesLinesProperty()->SetColor(0.6, 0.6, 0.65);
    axes_->GetZAxesLinesProperty()->SetColor(0.6, 0.6, 0.65);
    axes_->VisibilityOff();
    ren->AddActor(axes_);

    scalarBar_ = vtkSmartPointer<vtkScalarBarActor>::New();
    scalarBar_->SetLookupTable(colours_);
    scalarBar_->SetNumberOfLabels(4);
    scalarBar_->SetWidth(0.1);
    scalarBar_->SetHeight(0.5);
    scalarBar_->SetPosition(0.87, 0.25);
    scalarBar_->GetTitleTextProperty()->SetFontSize(14);
    scalarBar_->GetLabelTextProperty()->SetFontSize(12);
    scalarBar_->UnconstrainedFontSizeOn();
    scalarBar_->VisibilityOff();
    ren->AddActor2D(scalarBar_);
}

void TrajectoryView::setTrajectory(const recon::Trajectory& t, const std::vector<double>* density,
                                   ColourBy colourBy) {
    if (t.k.empty() || t.k.size() % 3 != 0) {
        throw recon::InputError("TrajectoryView::setTrajectory: k has " + std::to_string(t.k.size()) +
                                " values; expected a positive multiple of 3 (kx, ky, kz per sample)");
    }
    const std::size_t m = t.samples();
    if (density && density->size() != m) {
        throw recon::InputError("TrajectoryView::setTrajectory: " + std::to_string(density->size()) +
                                " density weights for " + std::to_string(m) + " samples");
    }
    if (colourBy == ColourBy::Density && !density) {
        throw recon::InputError("TrajectoryView::setTrajectory: colouring by density needs density weights");
    }

    // Extent over all samples, so the box does not depend on decimation.
    std::array<double, 6> ext{};
    for (int a = 0; a < 3; ++a) {
        ext[2 * a] = std::numeric_limits<double>::infinity();
        ext[2 * a + 1] = -std::numeric_limits<double>::infinity();
    }
    for (std::size_t i = 0; i < m; ++i) {
        for (int a = 0; a < 3; ++a) {
            const double v = t.k[3 * i + a];
            if (!std::isfinite(v)) {
                throw recon::InputError("TrajectoryView::setTrajectory: sample " + std::to_string(i) +
                                        " has a non-finite k");
            }
            ext[2 * a] = std::min(ext[2 * a], v);
            ext[2 * a + 1] = std::max(ext[2 * a + 1], v);
        }
    }

    double wMin = 0, wMax = 0;
    if (density) {
        const auto bad = std::find_if(density->begin(), density->end(), [](double w) { return !std::isfinite(w); });
        if (bad != density->end()) {
            throw recon::InputError("TrajectoryView::setTrajectory: density weight " +
                                    std::to_string(bad - density->begin()) + " is not finite");
        }
        // Over all samples, so both levels of detail share one colour scale.
        const auto [lo, hi] = std::minmax_element(density->begin(), density->end());
        wMin = *lo;
        wMax = *hi;
    }
    fillLevel(levels_[kStill], t, density, maxPoints_);
    fillLevel(levels_[kMoving], t, density, std::min(maxPoints_, interactiveMax_));
    const std::size_t perReadout = t.readout_length > 0 ? std::size_t(t.readout_length) : 1;

    total_ = m;
    readouts_ = (m + perReadout - 1) / perReadout;
    dims_ = t.dims;
    hasDensity_ = density != nullptr;
    densityRange_ = {wMin, wMax};
    extent_ = ext;
    colourBy_ = colourBy;

    box_->SetBounds(ext.data());
    axes_->SetBounds(ext.data());
    showLevel();
    boxActor_->VisibilityOn();
    axes_->VisibilityOn();
    scalarBar_->VisibilityOn();
    applyColouring();
    resetCamera();
}

void TrajectoryView::fillLevel(Level& level, const recon::Trajectory& t, const std::vector<double>* density,
                               std::size_t maxPoints) {
    const DecimationPlan plan = planDecimation(t.samples(), t.readout_length, maxPoints);
    vtkNew<vtkPoints> pts;
    pts->SetDataTypeToFloat();
    pts->SetNumberOfPoints(vtkIdType(plan.drawn));
    vtkNew<vtkFloatArray> readout;
    readout->SetName(kReadoutArray);
    readout->SetNumberOfValues(vtkIdType(plan.drawn));
    vtkNew<vtkFloatArray> weight;
    weight->SetName(kDensityArray);
    weight->SetNumberOfValues(density ? vtkIdType(plan.drawn) : 0);
    const std::size_t perReadout = t.readout_length > 0 ? std::size_t(t.readout_length) : 1;
    vtkIdType j = 0;
    plan.forEachKept([&](std::size_t i) {
        pts->SetPoint(j, t.k[3 * i], t.k[3 * i + 1], t.k[3 * i + 2]);
        readout->SetValue(j, float(i / perReadout));
        if (density) weight->SetValue(j, float((*density)[i]));
        ++j;
    });
    level.points->Initialize();
    level.points->SetPoints(pts);
    level.points->GetPointData()->AddArray(readout);
    if (density) level.points->GetPointData()->AddArray(weight);
    level.points->Modified();
    level.drawn = plan.drawn;
}

void TrajectoryView::onInteraction(vtkObject*, unsigned long eventId, void*) {
    interacting_ = eventId == vtkCommand::StartInteractionEvent;
    showLevel();
}

void TrajectoryView::showLevel() {
    const bool any = total_ > 0;
    // The coarse level only when it is coarser: no switch for small trajectories.
    const bool coarse = interacting_ && levels_[kMoving].drawn < levels_[kStill].drawn;
    levels_[kStill].actor->SetVisibility(any && !coarse);
    levels_[kMoving].actor->SetVisibility(any && coarse);
}

void TrajectoryView::clear() {
    for (Level& level : levels_) {
        level.points->Initialize();
        level.drawn = 0;
    }
    total_ = readouts_ = 0;
    hasDensity_ = false;
    showLevel();
    boxActor_->VisibilityOff();
    axes_->VisibilityOff();
    scalarBar_->VisibilityOff();
    render();
}

void TrajectoryView::setColourBy(ColourBy colourBy) {
    if (colourBy == ColourBy::Density && !hasDensity_) {
        throw recon::InputError("TrajectoryView::setColourBy: this trajectory has no density weights");
    }
    colourBy_ = colourBy;
    applyColouring();
    render();
}

void TrajectoryView::applyColouring() {
    if (colourBy_ == ColourBy::Density) {
        const double lo = densityRange_[0];
        const double hi = densityRange_[1] > lo ? densityRange_[1] : lo + 1;  // all equal: one colour
        fillViridis(colours_, lo, hi);
        for (Level& level : levels_) level.mapper->SelectColorArray(kDensityArray);
        scalarBar_->SetTitle("weight");
        scalarBar_->SetLabelFormat("%-#6.3g");
    } else {
        fillViridis(colours_, 0, std::max<double>(1, double(readouts_) - 1));
        for (Level& level : levels_) level.mapper->SelectColorArray(kReadoutArray);
        scalarBar_->SetTitle(readouts_ > 1 ? "readout" : "sample");
        scalarBar_->SetLabelFormat("%.0f");  // indices
    }
    for (Level& level : levels_) {
        level.mapper->SetColorModeToMapScalars();
        level.mapper->Modified();
    }
}

void TrajectoryView::setMaximumPoints(std::size_t maxPoints) { maxPoints_ = std::max<std::size_t>(maxPoints, 1); }

void TrajectoryView::setInteractivePoints(std::size_t maxPoints) {
    interactiveMax_ = std::max<std::size_t>(maxPoints, 1);
}

void TrajectoryView::setPointSize(double pixels) {
    for (Level& level : levels_) level.actor->GetProperty()->SetPointSize(float(std::max(1.0, pixels)));
    render();
}

void TrajectoryView::resetCamera() {
    vtkRenderer* ren = renderer();
    vtkCamera* cam = ren->GetActiveCamera();
    double c[3];
    for (int a = 0; a < 3; ++a) c[a] = 0.5 * (extent_[2 * a] + extent_[2 * a + 1]);
    cam->SetFocalPoint(c);
    if (dims_ == 2) {
        // A planar trajectory: straight down onto the kx-ky plane.
        cam->SetPosition(c[0], c[1], c[2] + 1);
        cam->SetViewUp(0, 1, 0);
    } else {
        cam->SetPosition(c[0], c[1] - 1, c[2]);
        cam->SetViewUp(0, 0, 1);
        cam->Azimuth(-35);
        cam->Elevation(25);
        cam->OrthogonalizeViewUp();
    }
    ren->ResetCamera();
    cam->Zoom(0.8);  // room for the axis labels and the colour bar
    ren->ResetCameraClippingRange();
    render();
}

bool TrajectoryView::saveScreenshot(const QString& pngPath) { return view_->saveScreenshot(pngPath); }

void TrajectoryView::render() { view_->update(); }

}  // namespace reconstudio::vtkviews
