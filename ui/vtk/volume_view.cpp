#include "ui/vtk/volume_view.hpp"

#include <QVBoxLayout>

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCellPicker.h>
#include <vtkColorTransferFunction.h>
#include <vtkCommand.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkImageProperty.h>
#include <vtkImageSlice.h>
#include <vtkImageSliceMapper.h>
#include <vtkLookupTable.h>
#include <vtkOutlineSource.h>
#include <vtkPiecewiseFunction.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartVolumeMapper.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>
#include <vtkVolume.h>
#include <vtkVolumeProperty.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "recon/core/errors.hpp"
#include "ui/vtk/vtk_widget.hpp"

namespace reconstudio::vtkviews {
namespace {

// Plane colours as in 3D Slicer, so users find the planes they know:
// sagittal (x) yellow, coronal (y) green, axial (z) red.
constexpr double kPlaneColour[3][3] = {{0.93, 0.84, 0.27}, {0.43, 0.69, 0.30}, {0.95, 0.33, 0.33}};
constexpr double kBackground[3] = {0.08, 0.09, 0.12};

// A voxel is picked where the scalar opacity along the ray first exceeds this
// fraction of the ramp's peak: anything visibly non-transparent.
constexpr double kPickOpacityFraction = 0.1;

// World position (mm) of voxel index i on an axis of n voxels of size s:
// x_n = (n - N/2)/N FOV (docs/CONVENTIONS.md).
double voxelCentre(int i, int n, double s) { return (i - n / 2) * s; }

}  // namespace

TransferRamp TransferRamp::fromWindowLevel(double window, double level, double peakOpacity) {
    TransferRamp r;
    r.low = level - window / 2;
    r.high = level + window / 2;
    r.peakOpacity = peakOpacity;
    return r;
}

void TransferRamp::apply(vtkColorTransferFunction* colour, vtkPiecewiseFunction* opacity) const {
    colour->RemoveAllPoints();
    if (colours.size() < 2) {
        colour->AddRGBPoint(low, 0, 0, 0);
        colour->AddRGBPoint(high, 1, 1, 1);
    } else {
        // The colour map sampled at 16 points from low to high: enough for a smooth ramp.
        constexpr int kSamples = 16;
        for (int k = 0; k <= kSamples; ++k) {
            const double t = double(k) / kSamples;
            const unsigned int c = colours[std::size_t(std::lround(t * double(colours.size() - 1)))];
            colour->AddRGBPoint(low + t * (high - low), ((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0,
                                (c & 0xff) / 255.0);
        }
    }
    colour->ClampingOn();
    opacity->RemoveAllPoints();
    opacity->AddPoint(low, 0);
    opacity->AddPoint(high, peakOpacity);
    opacity->ClampingOn();
}

VolumeView::VolumeView(QWidget* parent) : QWidget(parent) {
    view_ = new VtkWidget(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    build();
    connect(view_, &VtkWidget::clicked, this, &VolumeView::onClicked);
}

VolumeView::~VolumeView() {
    if (observedCamera_) observedCamera_->RemoveObserver(cameraObserver_);
}

vtkRenderer* VolumeView::renderer() const { return view_->renderer(); }
vtkCamera* VolumeView::camera() const { return renderer()->GetActiveCamera(); }

void VolumeView::build() {
    vtkRenderer* ren = renderer();
    ren->SetBackground(kBackground[0], kBackground[1], kBackground[2]);

    image_ = vtkSmartPointer<vtkImageData>::New();

    colour_ = vtkSmartPointer<vtkColorTransferFunction>::New();
    opacity_ = vtkSmartPointer<vtkPiecewiseFunction>::New();
    mapper_ = vtkSmartPointer<vtkSmartVolumeMapper>::New();
    mapper_->SetInputData(image_);
    vtkNew<vtkVolumeProperty> prop;
    prop->SetColor(colour_);
    prop->SetScalarOpacity(opacity_);
    prop->SetInterpolationTypeToLinear();
    prop->ShadeOff();  // MR magnitude has no meaningful gradients to light
    volume_ = vtkSmartPointer<vtkVolume>::New();
    volume_->SetMapper(mapper_);
    volume_->SetProperty(prop);
    ren->AddVolume(volume_);

    for (int a = 0; a < 3; ++a) {
        sliceMappers_[a] = vtkSmartPointer<vtkImageSliceMapper>::New();
        sliceMappers_[a]->SetInputData(image_);
        sliceMappers_[a]->SetOrientation(a);
        sliceMappers_[a]->SliceAtFocalPointOff();
        sliceMappers_[a]->SliceFacesCameraOff();
        slices_[a] = vtkSmartPointer<vtkImageSlice>::New();
        slices_[a]->SetMapper(sliceMappers_[a]);
        slices_[a]->GetProperty()->SetInterpolationTypeToNearest();
        ren->AddViewProp(slices_[a]);

        // The plane's frame: a closed loop of four corners, moved by updatePlanes().
        frames_[a] = vtkSmartPointer<vtkPolyData>::New();
        vtkNew<vtkPoints> corners;
        corners->SetNumberOfPoints(4);
        for (int c = 0; c < 4; ++c) corners->SetPoint(c, 0, 0, 0);
        vtkNew<vtkCellArray> loop;
        const vtkIdType ids[5] = {0, 1, 2, 3, 0};
        loop->InsertNextCell(5, ids);
        frames_[a]->SetPoints(corners);
        frames_[a]->SetLines(loop);
        vtkNew<vtkPolyDataMapper> frameMapper;
        frameMapper->SetInputData(frames_[a]);
        frameActors_[a] = vtkSmartPointer<vtkActor>::New();
        frameActors_[a]->SetMapper(frameMapper);
        frameActors_[a]->GetProperty()->SetColor(kPlaneColour[a][0], kPlaneColour[a][1], kPlaneColour[a][2]);
        frameActors_[a]->GetProperty()->SetLineWidth(2);
        frameActors_[a]->GetProperty()->LightingOff();
        frameActors_[a]->PickableOff();
        ren->AddActor(frameActors_[a]);
    }

    outline_ = vtkSmartPointer<vtkOutlineSource>::New();
    vtkNew<vtkPolyDataMapper> outlineMapper;
    outlineMapper->SetInputConnection(outline_->GetOutputPort());
    outlineActor_ = vtkSmartPointer<vtkActor>::New();
    outlineActor_->SetMapper(outlineMapper);
    outlineActor_->GetProperty()->SetColor(0.55, 0.55, 0.6);
    outlineActor_->GetProperty()->LightingOff();
    outlineActor_->PickableOff();
    ren->AddActor(outlineActor_);

    sceneLines_ = vtkSmartPointer<vtkPolyData>::New();
    vtkNew<vtkPolyDataMapper> sceneMapper;
    sceneMapper->SetInputData(sceneLines_);
    sceneActor_ = vtkSmartPointer<vtkActor>::New();
    sceneActor_->SetMapper(sceneMapper);
    sceneActor_->GetProperty()->SetColor(1.0, 0.75, 0.2);
    sceneActor_->GetProperty()->SetLineWidth(2);
    sceneActor_->GetProperty()->LightingOff();
    sceneActor_->PickableOff();
    sceneActor_->VisibilityOff();
    ren->AddActor(sceneActor_);

    labelActor_ = vtkSmartPointer<vtkTextActor>::New();
    labelActor_->GetTextProperty()->SetFontSize(16);
    labelActor_->GetTextProperty()->SetColor(0.92, 0.92, 0.92);
    labelActor_->GetTextProperty()->SetVerticalJustificationToTop();
    labelActor_->GetPositionCoordinate()->SetCoordinateSystemToNormalizedViewport();
    labelActor_->GetPositionCoordinate()->SetValue(0.02, 0.97);
    ren->AddActor2D(labelActor_);

    picker_ = vtkSmartPointer<vtkCellPicker>::New();
    picker_->PickFromListOn();
    picker_->AddPickList(volume_);
    for (auto& s : slices_) picker_->AddPickList(s);
    picker_->SetTolerance(1e-6);

    watchCamera();
    applyTransfer();
    updateVisibility();
}

void VolumeView::setVolume(const recon::Grid& grid, const std::vector<float>& values, const QString& label) {
    for (int a = 0; a < 3; ++a) {
        if (grid.n[a] < 1 || !(grid.fov_mm[a] > 0)) {
            throw recon::InputError("VolumeView::setVolume: grid " + grid.describe() +
                                    " has an empty axis or a non-positive field of view");
        }
    }
    if (values.size() != grid.voxels()) {
        throw recon::InputError("VolumeView::setVolume: " + std::to_string(values.size()) +
                                " values for a " + grid.describe() + " grid of " +
                                std::to_string(grid.voxels()) + " voxels");
    }
    const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
    if (bad != values.end()) {
        throw recon::InputError("VolumeView::setVolume: value at voxel " +
                                std::to_string(bad - values.begin()) + " is not finite");
    }

    const bool sameGrid = hasVolume_ && grid == grid_ && grid.fov_mm == grid_.fov_mm;
    grid_ = grid;
    if (!sameGrid) {
        double spacing[3], origin[3];
        for (int a = 0; a < 3; ++a) {
            spacing[a] = grid.fov_mm[a] / grid.n[a];
            origin[a] = voxelCentre(0, grid.n[a], spacing[a]);
        }
        image_->SetDimensions(grid.n[0], grid.n[1], grid.n[2]);
        image_->SetSpacing(spacing);
        image_->SetOrigin(origin);
        image_->AllocateScalars(VTK_FLOAT, 1);
        volume_->GetProperty()->SetScalarOpacityUnitDistance(*std::min_element(spacing, spacing + 3));
        outline_->SetBounds(image_->GetBounds());
    }
    auto* scalars = vtkFloatArray::SafeDownCast(image_->GetPointData()->GetScalars());
    std::memcpy(scalars->GetPointer(0), values.data(), values.size() * sizeof(float));
    scalars->Modified();
    image_->Modified();
    labelActor_->SetInput(label.toUtf8().constData());

    const bool first = !hasVolume_;
    hasVolume_ = true;
    if (!sameGrid) cursor_ = {grid.n[0] / 2, grid.n[1] / 2, grid.n[2] / 2};
    updatePlanes();
    updateVisibility();
    if (first || !sameGrid) resetCamera();
    render();
}

void VolumeView::clearVolume() {
    hasVolume_ = false;
    labelActor_->SetInput("");
    updateVisibility();
    render();
}

bool VolumeView::hasVolume() const { return hasVolume_; }

void VolumeView::setWindowLevel(double window, double level) {
    if (!std::isfinite(window) || !std::isfinite(level)) {
        throw recon::InputError("VolumeView::setWindowLevel: window and level must be finite (got window " +
                                std::to_string(window) + ", level " + std::to_string(level) + ")");
    }
    // A zero window (auto window/level of a constant image) is a threshold at the level.
    window_ = std::max(window, kMinimumWindow * std::max(1.0, std::abs(level)));
    level_ = level;
    applyTransfer();
    render();
}

void VolumeView::setRenderMode(RenderMode mode) {
    mode_ = mode;
    applyTransfer();
    render();
}

void VolumeView::applyTransfer() {
    // MIP shows the brightest sample along each ray: its opacity ramp spans the
    // whole range. Composite accumulates: a low per-voxel peak lets it see inside.
    const bool mip = mode_ == RenderMode::MaximumIntensity;
    TransferRamp ramp = TransferRamp::fromWindowLevel(window_, level_, mip ? 1.0 : kCompositePeakOpacity);
    ramp.colours = colourTable_;
    ramp.apply(colour_, opacity_);
    if (mip) {
        mapper_->SetBlendModeToMaximumIntensity();
    } else {
        mapper_->SetBlendModeToComposite();
    }
    picker_->SetVolumeOpacityIsovalue(kPickOpacityFraction * ramp.peakOpacity);
    vtkSmartPointer<vtkLookupTable> table;
    if (colourTable_.size() >= 2) {
        // Window/level then map the slice values onto the colour map's range.
        table = vtkSmartPointer<vtkLookupTable>::New();
        table->SetNumberOfTableValues(vtkIdType(colourTable_.size()));
        for (std::size_t k = 0; k < colourTable_.size(); ++k) {
            const unsigned int c = colourTable_[k];
            table->SetTableValue(vtkIdType(k), ((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0, (c & 0xff) / 255.0, 1.0);
        }
        table->SetRange(ramp.low, ramp.high);
        table->Build();
    }
    for (auto& s : slices_) {
        s->GetProperty()->SetColorWindow(window_);
        s->GetProperty()->SetColorLevel(level_);
        s->GetProperty()->SetLookupTable(table);
        s->GetProperty()->SetUseLookupTableScalarRange(false);
        s->GetProperty()->SetOpacity(planeOpacity_);
    }
}

void VolumeView::setSlicePlaneOpacity(double opacity) {
    planeOpacity_ = std::clamp(opacity, 0.0, 1.0);
    for (auto& s : slices_) s->GetProperty()->SetOpacity(planeOpacity_);
    render();
}

void VolumeView::setColourTable(const std::vector<unsigned int>& colours) {
    colourTable_ = colours;
    applyTransfer();
    render();
}

void VolumeView::setCursor(int x, int y, int z) {
    const std::array<int, 3> want{x, y, z};
    for (int a = 0; a < 3; ++a) cursor_[a] = std::clamp(want[a], 0, std::max(0, grid_.n[a] - 1));
    updatePlanes();
    render();
}

void VolumeView::updatePlanes() {
    if (!hasVolume_) return;
    const double* b = image_->GetBounds();  // voxel centres: xmin xmax ymin ymax zmin zmax
    for (int a = 0; a < 3; ++a) {
        sliceMappers_[a]->SetSliceNumber(cursor_[a]);
        // Corners of the plane axis a = cursor: the other two axes span the volume.
        const int u = (a + 1) % 3, v = (a + 2) % 3;
        const double at = image_->GetOrigin()[a] + cursor_[a] * image_->GetSpacing()[a];
        const double uv[4][2] = {{b[2 * u], b[2 * v]}, {b[2 * u + 1], b[2 * v]},
                                 {b[2 * u + 1], b[2 * v + 1]}, {b[2 * u], b[2 * v + 1]}};
        vtkPoints* pts = frames_[a]->GetPoints();
        for (int c = 0; c < 4; ++c) {
            double p[3];
            p[a] = at;
            p[u] = uv[c][0];
            p[v] = uv[c][1];
            pts->SetPoint(c, p);
        }
        pts->Modified();
    }
}

void VolumeView::setSlicePlanesVisible(bool on) {
    planesVisible_ = on;
    updateVisibility();
    render();
}

void VolumeView::setVolumeVisible(bool on) {
    volumeVisible_ = on;
    updateVisibility();
    render();
}

void VolumeView::updateVisibility() {
    const bool is3D = grid_.dims == 3 && grid_.n[0] > 1 && grid_.n[1] > 1 && grid_.n[2] > 1;
    volume_->SetVisibility(hasVolume_ && volumeVisible_ && is3D);
    for (int a = 0; a < 3; ++a) {
        // A 2D image is its z plane; its x and y planes would be lines.
        const bool on = hasVolume_ && (is3D ? planesVisible_ : a == 2);
        slices_[a]->SetVisibility(on);
        frameActors_[a]->SetVisibility(on && is3D);
    }
    outlineActor_->SetVisibility(hasVolume_);
}

void VolumeView::watchCamera() {
    vtkCamera* cam = camera();
    if (cam == observedCamera_) return;
    if (observedCamera_) observedCamera_->RemoveObserver(cameraObserver_);
    observedCamera_ = cam;
    cameraObserver_ = cam->AddObserver(vtkCommand::ModifiedEvent, this, &VolumeView::onCameraModified);
}

void VolumeView::onCameraModified(vtkObject*, unsigned long, void*) { render(); }

void VolumeView::linkCamera(VolumeView* other) {
    if (!other || other == this) return;
    other->renderer()->SetActiveCamera(camera());
    other->watchCamera();
    other->render();
}

void VolumeView::unlinkCamera() {
    vtkNew<vtkCamera> own;
    own->DeepCopy(camera());
    renderer()->SetActiveCamera(own);
    watchCamera();
    render();
}

void VolumeView::setSceneLines(const std::vector<Polyline>& lines) {
    vtkNew<vtkPoints> points;
    vtkNew<vtkCellArray> cells;
    sceneLineCount_ = 0;
    for (const Polyline& line : lines) {
        if (line.size() < 2) continue;
        cells->InsertNextCell(vtkIdType(line.size()));
        for (const auto& p : line) cells->InsertCellPoint(points->InsertNextPoint(p[0], p[1], p[2]));
        ++sceneLineCount_;
    }
    sceneLines_->SetPoints(points);
    sceneLines_->SetLines(cells);
    sceneLines_->Modified();
    sceneActor_->SetVisibility(sceneLineCount_ > 0);
    renderer()->ResetCameraClippingRange();
    render();
}

void VolumeView::resetCamera() {
    vtkRenderer* ren = renderer();
    vtkCamera* cam = camera();
    double c[3] = {0, 0, 0};
    if (hasVolume_) {
        const double* b = image_->GetBounds();
        for (int a = 0; a < 3; ++a) c[a] = 0.5 * (b[2 * a] + b[2 * a + 1]);
    }
    // From the front (-y) with z up, then turned to show all three planes.
    cam->SetFocalPoint(c);
    cam->SetPosition(c[0], c[1] - 1, c[2]);
    cam->SetViewUp(0, 0, 1);
    cam->Azimuth(-35);
    cam->Elevation(25);
    cam->OrthogonalizeViewUp();
    ren->ResetCamera();
    ren->ResetCameraClippingRange();
    render();
}

bool VolumeView::saveScreenshot(const QString& pngPath) { return view_->saveScreenshot(pngPath); }

bool VolumeView::pickVoxel(QPointF pos, std::array<int, 3>& voxel) const {
    if (!hasVolume_) return false;
    const auto d = view_->toDisplay(pos);
    if (!picker_->Pick(d[0], d[1], 0, renderer())) return false;
    if (picker_->GetDataSet() != image_.GetPointer()) return false;
    const int* ijk = picker_->GetPointIJK();
    for (int a = 0; a < 3; ++a) voxel[a] = std::clamp(ijk[a], 0, grid_.n[a] - 1);
    return true;
}

void VolumeView::onClicked(QPointF pos) {
    std::array<int, 3> v{};
    if (pickVoxel(pos, v)) emit cursorPicked(v[0], v[1], v[2]);
}

void VolumeView::render() { view_->update(); }

}  // namespace reconstudio::vtkviews
