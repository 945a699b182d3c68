// The images the comparison shows, by role, with their quality against the
// truth. Volumes are immutable and shared (a snapshot is never modified after it
// is posted), so views, exports and the 3D views read them without copies.
#pragma once

#include <QObject>
#include <QString>

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "recon/core/metrics.hpp"
#include "recon/core/types.hpp"

namespace studio {

struct Volume {
    recon::Grid grid;
    std::shared_ptr<const recon::ComplexArray> data;

    bool empty() const { return !data || data->empty(); }
    recon::cdouble at(int x, int y, int z) const { return (*data)[grid.index(x, y, z)]; }
    static Volume make(const recon::Grid& g, recon::ComplexArray values);
    double maxMagnitude() const;  // 0 when empty
};

enum class Layer {
    Truth,
    GriddingTrilinear,
    GriddingKaiserBessel,
    Iterative,
    DifferenceTrilinear,     // gridding (trilinear, optimally scaled) - truth
    DifferenceKaiserBessel,  // gridding (Kaiser-Bessel, optimally scaled) - truth
    DifferenceIterative,     // iterative - truth
    Pinned,                  // an iterative image kept for comparison (ui/pinned_snapshot.hpp)
    DifferencePinned,        // iterative - pinned
};
inline constexpr int kLayerCount = 9;  // every slot ImageLayers holds
// The layers a reconstruction produces (the comparison grid's).
inline constexpr std::array<Layer, 7> kAllLayers{
    Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel, Layer::Iterative,
    Layer::DifferenceTrilinear, Layer::DifferenceKaiserBessel, Layer::DifferenceIterative};

// What produced the data: the layers' names (and which layers exist) follow it. CT fills
// GriddingKaiserBessel with FDK (its analytic baseline, gridding's place in MR) and leaves
// GriddingTrilinear empty.
enum class Modality { Mr, Ct };

QString layerTitle(Layer l, Modality m = Modality::Mr);   // "Gridding (Kaiser-Bessel)"; CT: "FDK"
// The layers a modality produces (the comparison's, in order).
std::vector<Layer> layersOf(Modality m);
QString layerKey(Layer l);     // "gridding-kb": file names, settings
bool isDifference(Layer l);
// The difference map that goes with an image (Truth has none).
std::optional<Layer> differenceOf(Layer image);

struct LayerImage {
    Volume volume;
    std::optional<recon::Quality> quality;  // against the truth, when it is known
};

// One update from the worker: a layer's new image (and quality).
struct LayerUpdate {
    Layer layer = Layer::Truth;
    LayerImage image;
};

class ImageLayers : public QObject {
    Q_OBJECT
public:
    explicit ImageLayers(QObject* parent = nullptr);

    const LayerImage* get(Layer l) const;  // null when the layer has no image yet
    bool has(Layer l) const { return get(l) != nullptr; }
    const recon::Grid& grid() const { return grid_; }
    Modality modality() const { return modality_; }
    QString title(Layer l) const { return layerTitle(l, modality_); }

    void set(const LayerUpdate& update);
    void setAll(const std::vector<LayerUpdate>& updates);
    void clear(Layer l);  // that layer has no image any more
    // Forget every image (a new data set on `grid`).
    void reset(const recon::Grid& grid, Modality modality = Modality::Mr);

    // The Gibbs floor: the quality of an inverse FFT of full Cartesian data of the
    // same object (known for simulated data only). Unregularised methods cannot
    // beat it; a regulariser can, by smoothing the ringing it measures.
    const std::optional<recon::Quality>& floor() const { return floor_; }
    void setFloor(const recon::Quality& q);

signals:
    void layerChanged(studio::Layer layer);
    void layersReset();
    void floorChanged();

private:
    recon::Grid grid_;
    Modality modality_ = Modality::Mr;
    std::array<std::optional<LayerImage>, kLayerCount> images_;
    std::optional<recon::Quality> floor_;
};

}  // namespace studio

Q_DECLARE_METATYPE(studio::Layer)
Q_DECLARE_METATYPE(studio::Modality)
