// One slice of one image layer, drawn from the shared SliceViewModel. Mouse, as
// in clinical viewers: wheel = slice, Ctrl+wheel = zoom, middle drag or
// Shift+left drag = pan, right drag = window/level, left click (or drag) = cursor.
// Keys: Up/Down or Page Up/Down = slice, +/- = zoom, R = reset view, A = auto W/L.
#pragma once

#include <QImage>
#include <QPointF>
#include <QRectF>
#include <QWidget>

#include <optional>

#include "ui/image_layers.hpp"
#include "ui/measurements.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

class SliceView : public QWidget {
    Q_OBJECT
public:
    SliceView(Layer layer, ImageLayers* layers, SliceViewModel* model, QWidget* parent = nullptr);

    Layer layer() const { return layer_; }
    // Difference maps are drawn this many times stronger than images (default 2),
    // so small errors show under the images' window/level.
    void setDifferenceGain(double gain);
    double differenceGain() const { return difference_gain_; }

    // Geometry, for the mouse and for tests: where a slice pixel's centre is drawn,
    // and which slice pixel (column, row) lies under a widget point.
    QPointF widgetPosition(int column, int row) const;
    std::optional<SlicePixel> pixelAt(QPointF widget_point) const;
    // The value under the cursor in the current display mode (nullopt: no image).
    std::optional<double> cursorValue() const;
    QString title() const;
    // The ROIs and the ruler to draw and edit (Ctrl + left drag: A, Alt + left drag: B,
    // Ctrl + Alt + left drag: a distance); may be null.
    void setMeasurements(MeasurementModel* m);
    // The bottom overlay's parts: slice, voxel, position in mm (the NIfTI and DICOM
    // exports' frame), the value at the cursor with significant digits of the image's scale.
    QStringList cursorParts() const;
    QFont overlayFont() const;
    // The patient directions at the left, right, top and bottom edges ("L", "R",
    // "P", "A" for axial): image axes are the RAS axes of the exports' frame.
    std::array<QString, 4> orientationLabels() const;
    // A round length in mm about a fifth of the view's width, and its length on screen (pixels).
    std::pair<double, double> scaleBar() const;
    // The unit under the colour bar: "rad" for phase, else "a.u." (the truth's arbitrary units).
    QString colourBarUnit() const;
    // `parts` joined greedily into lines no wider than `width` (a part wider than
    // `width` keeps a line of its own).
    static QStringList packLines(const QStringList& parts, const QFontMetrics& metrics, int width);
    // The overlay's text box, inside the view's margins.
    QRect overlayRect() const { return rect().adjusted(6, 3, -6, -3); }

    QSize sizeHint() const override { return {280, 280}; }
    QSize minimumSizeHint() const override { return {120, 120}; }

protected:
    void paintEvent(QPaintEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;

private:
    enum class Drag { None, Cursor, Pan, WindowLevel, Roi, Ruler };
    struct Mapping {
        QPointF origin;   // widget position of slice coordinate (0, 0)
        double sx = 1, sy = 1;  // widget pixels per slice pixel
    };
    Mapping mapping() const;
    double gain() const;
    void invalidate();  // the slice image must be rendered again
    void setCursorAt(QPointF widget_point);
    void autoWindowLevel();

    Layer layer_;
    ImageLayers* layers_;
    SliceViewModel* model_;
    double difference_gain_ = 2;
    QImage image_;      // the rendered slice (cache)
    bool dirty_ = true;
    Drag drag_ = Drag::None;
    MeasurementModel* measurements_ = nullptr;
    int roi_index_ = 0;          // the ROI a Drag::Roi draws
    SlicePixel roi_start_;
    QPointF last_mouse_;
};

}  // namespace studio
