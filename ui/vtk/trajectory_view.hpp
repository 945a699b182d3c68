// The k-space sampling pattern in 3D: every drawn sample a point at its k
// (cycles per FOV), coloured by the readout it belongs to (acquisition order)
// or by its density-compensation weight, inside the box of the trajectory's
// extent with labelled axes. Millions of samples are decimated by whole
// readouts to at most maximumPoints() drawn, and to interactivePoints() while
// the user rotates, pans or zooms (a software renderer draws about a million
// points a second, so the full set would make dragging stutter).
#pragma once

#include <QString>
#include <QWidget>

#include <array>
#include <cstddef>
#include <vector>

#include <vtkSmartPointer.h>

#include "recon/core/types.hpp"

class vtkActor;
class vtkColorTransferFunction;
class vtkCubeAxesActor;
class vtkObject;
class vtkOutlineSource;
class vtkPointGaussianMapper;
class vtkPolyData;
class vtkRenderer;
class vtkScalarBarActor;

namespace reconstudio::vtkviews {

class VtkWidget;

class TrajectoryView : public QWidget {
    Q_OBJECT
public:
    enum class ColourBy { Readout, Density };
    static constexpr std::size_t kDefaultMaximumPoints = 1'000'000;
    static constexpr std::size_t kDefaultInteractivePoints = 100'000;

    explicit TrajectoryView(QWidget* parent = nullptr);
    ~TrajectoryView() override;

    // `density` (nullable): one weight per sample. Throws recon::InputError when
    // the trajectory is empty or malformed, when density has the wrong length,
    // or when colouring by density without weights.
    void setTrajectory(const recon::Trajectory& trajectory, const std::vector<double>* density,
                       ColourBy colourBy);
    void clear();
    // Switches between the colourings kept from the last setTrajectory.
    void setColourBy(ColourBy colourBy);
    ColourBy colourBy() const { return colourBy_; }
    bool hasDensity() const { return hasDensity_; }

    // Both take effect at the next setTrajectory.
    void setMaximumPoints(std::size_t maxPoints);
    std::size_t maximumPoints() const { return maxPoints_; }
    void setInteractivePoints(std::size_t maxPoints);
    std::size_t interactivePoints() const { return interactiveMax_; }
    // Samples drawn when still, and while interacting.
    std::size_t drawnPoints() const { return levels_[kStill].drawn; }
    std::size_t drawnPointsInteractive() const { return levels_[kMoving].drawn; }
    // True between the start and the end of a mouse interaction.
    bool interacting() const { return interacting_; }
    std::size_t totalPoints() const { return total_; }
    // The box drawn: min/max of kx, ky, kz over all samples (not only drawn ones).
    std::array<double, 6> extent() const { return extent_; }

    void setPointSize(double pixels);
    void resetCamera();
    bool saveScreenshot(const QString& pngPath);

    VtkWidget* vtkWidget() const { return view_; }
    vtkRenderer* renderer() const;

private:
    // One level of detail: the kept samples and how they are drawn.
    struct Level {
        vtkSmartPointer<vtkPolyData> points;
        vtkSmartPointer<vtkPointGaussianMapper> mapper;
        vtkSmartPointer<vtkActor> actor;
        std::size_t drawn = 0;
    };
    static constexpr int kStill = 0, kMoving = 1;

    void build();
    void fillLevel(Level& level, const recon::Trajectory& t, const std::vector<double>* density, std::size_t maxPoints);
    void applyColouring();
    void showLevel();
    void onInteraction(vtkObject*, unsigned long eventId, void*);
    void render();

    VtkWidget* view_ = nullptr;
    std::size_t maxPoints_ = kDefaultMaximumPoints;
    std::size_t interactiveMax_ = kDefaultInteractivePoints;
    std::size_t total_ = 0;
    bool interacting_ = false;
    std::array<unsigned long, 2> interactionObservers_{};
    std::size_t readouts_ = 0;
    int dims_ = 3;
    bool hasDensity_ = false;
    std::array<double, 2> densityRange_{0, 1};
    std::array<double, 6> extent_{0, 0, 0, 0, 0, 0};
    ColourBy colourBy_ = ColourBy::Readout;

    std::array<Level, 2> levels_;
    vtkSmartPointer<vtkColorTransferFunction> colours_;
    vtkSmartPointer<vtkScalarBarActor> scalarBar_;
    vtkSmartPointer<vtkOutlineSource> box_;
    vtkSmartPointer<vtkActor> boxActor_;
    vtkSmartPointer<vtkCubeAxesActor> axes_;
};

}  // namespace reconstudio::vtkviews
