// A 3D view of one reconstructed volume: ray-cast volume rendering whose
// transfer function follows the workstation's window/level, maximum-intensity
// projection as an option, the three orthogonal slice planes at the shared
// cursor, and picking a voxel by clicking in 3D.
//
// The view shows; it does not own the cursor or window/level. The workstation's
// models set them (setCursor, setWindowLevel) and listen to cursorPicked.
#pragma once

#include <QString>
#include <QWidget>

#include <array>
#include <vector>

#include <vtkSmartPointer.h>

#include "recon/core/types.hpp"

class vtkActor;
class vtkCamera;
class vtkCellPicker;
class vtkColorTransferFunction;
class vtkImageData;
class vtkImageSlice;
class vtkImageSliceMapper;
class vtkObject;
class vtkOutlineSource;
class vtkPiecewiseFunction;
class vtkPolyData;
class vtkRenderer;
class vtkSmartVolumeMapper;
class vtkTextActor;
class vtkVolume;

namespace reconstudio::vtkviews {

class VtkWidget;

// Window/level to transfer functions, one place for both render modes:
// grey from black at level - window/2 to white at level + window/2; opacity
// from 0 at the bottom of the window to `peakOpacity` at its top (per voxel).
struct TransferRamp {
    double low = 0, high = 1;
    double peakOpacity = 1;
    // Colours from low to high (0xAARRGGBB, as QRgb); empty: grey.
    std::vector<unsigned int> colours;
    static TransferRamp fromWindowLevel(double window, double level, double peakOpacity);
    void apply(vtkColorTransferFunction* colour, vtkPiecewiseFunction* opacity) const;
};

class VolumeView : public QWidget {
    Q_OBJECT
public:
    enum class RenderMode { Composite, MaximumIntensity };

    // Peak opacity per voxel of the composite ramp: low enough that the
    // inside of a head shows through its outer layers.
    static constexpr double kCompositePeakOpacity = 0.12;

    explicit VolumeView(QWidget* parent = nullptr);
    ~VolumeView() override;

    // Copies `values` (one per voxel, x fastest, grid.voxels() of them; the
    // magnitude or whatever the workstation displays). Throws recon::InputError
    // on a size mismatch or a non-finite value. Keeps the cursor when the grid
    // is unchanged, else centres it; the camera is reset on the first volume or
    // a new grid. A 2D grid shows its one plane only.
    void setVolume(const recon::Grid& grid, const std::vector<float>& values, const QString& label);
    void clearVolume();
    bool hasVolume() const;
    const recon::Grid& grid() const { return grid_; }

    // The grey ramp and the opacity ramp both follow it. A window below
    // kMinimumWindow (relative to the level) is raised to it: a threshold at the
    // level. Throws recon::InputError on a non-finite window or level.
    void setWindowLevel(double window, double level);
    static constexpr double kMinimumWindow = 1e-6;
    double window() const { return window_; }
    double level() const { return level_; }

    void setRenderMode(RenderMode mode);
    RenderMode renderMode() const { return mode_; }

    // Moves the three slice planes to voxel (x, y, z), clamped to the grid.
    void setCursor(int x, int y, int z);
    using QWidget::setCursor;  // keep QWidget::setCursor(const QCursor&) visible
    std::array<int, 3> cursorVoxel() const { return cursor_; }

    void setSlicePlanesVisible(bool on);
    bool slicePlanesVisible() const { return planesVisible_; }
    // 1: opaque planes; lower lets the volume (and a MIP) show through them.
    void setSlicePlaneOpacity(double opacity);
    double slicePlaneOpacity() const { return planeOpacity_; }
    // The workstation's colour map, low to high (QRgb values); empty: grey. Used by
    // the volume's colour ramp and the slice planes.
    void setColourTable(const std::vector<unsigned int>& colours);
    void setVolumeVisible(bool on);
    bool volumeVisible() const { return volumeVisible_; }

    // Both views then render through one camera: a rotation in either turns
    // both. unlinkCamera() gives this view its own copy of the shared camera.
    void linkCamera(VolumeView* other);
    void unlinkCamera();
    vtkCamera* camera() const;

    // Looks at the whole volume from the front-left-above.
    void resetCamera();
    // Lines drawn around the volume in world millimetres (the volume's frame, centre voxel at
    // the origin): each a polyline. A CT scan's source orbit, detector outline and the rays to
    // its corners (the workstation's ui/ct_scene.hpp). Empty: none. Not pickable.
    using Polyline = std::vector<std::array<double, 3>>;
    void setSceneLines(const std::vector<Polyline>& lines);
    int sceneLineCount() const { return sceneLineCount_; }
    bool saveScreenshot(const QString& pngPath);

    // The voxel under widget position `pos` (first opaque volume sample or
    // slice plane along the ray), or false when the ray hits neither.
    bool pickVoxel(QPointF pos, std::array<int, 3>& voxel) const;

    VtkWidget* vtkWidget() const { return view_; }
    vtkRenderer* renderer() const;

signals:
    // The user clicked a voxel in the 3D scene.
    void cursorPicked(int x, int y, int z);

private:
    void build();
    void applyTransfer();
    void updatePlanes();
    void updateVisibility();
    void onCameraModified(vtkObject*, unsigned long, void*);
    void watchCamera();
    void onClicked(QPointF pos);
    void render();

    VtkWidget* view_ = nullptr;
    recon::Grid grid_;
    bool hasVolume_ = false;
    double window_ = 1, level_ = 0.5;
    RenderMode mode_ = RenderMode::Composite;
    std::array<int, 3> cursor_{0, 0, 0};
    bool planesVisible_ = true;
    double planeOpacity_ = 1;
    std::vector<unsigned int> colourTable_;
    bool volumeVisible_ = true;
    unsigned long cameraObserver_ = 0;
    vtkCamera* observedCamera_ = nullptr;

    vtkSmartPointer<vtkImageData> image_;
    vtkSmartPointer<vtkSmartVolumeMapper> mapper_;
    vtkSmartPointer<vtkVolume> volume_;
    vtkSmartPointer<vtkColorTransferFunction> colour_;
    vtkSmartPointer<vtkPiecewiseFunction> opacity_;
    std::array<vtkSmartPointer<vtkImageSliceMapper>, 3> sliceMappers_;
    std::array<vtkSmartPointer<vtkImageSlice>, 3> slices_;
    std::array<vtkSmartPointer<vtkPolyData>, 3> frames_;
    std::array<vtkSmartPointer<vtkActor>, 3> frameActors_;
    vtkSmartPointer<vtkOutlineSource> outline_;
    vtkSmartPointer<vtkActor> outlineActor_;
    vtkSmartPointer<vtkTextActor> labelActor_;
    vtkSmartPointer<vtkPolyData> sceneLines_;
    vtkSmartPointer<vtkActor> sceneActor_;
    int sceneLineCount_ = 0;
    vtkSmartPointer<vtkCellPicker> picker_;
};

}  // namespace reconstudio::vtkviews
