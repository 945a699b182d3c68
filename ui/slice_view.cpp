#include "ui/slice_view.hpp"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <cmath>

#include "recon/core/conventions.hpp"

namespace studio {

SliceView::SliceView(Layer layer, ImageLayers* layers, SliceViewModel* model, QWidget* parent)
    : QWidget(parent), layer_(layer), layers_(layers), model_(model) {
    setObjectName(QStringLiteral("view-") + layerKey(layer));
    setFocusPolicy(Qt::ClickFocus);
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    connect(layers_, &ImageLayers::layerChanged, this, [this](Layer l) {
        if (l == layer_) invalidate();
    });
    connect(layers_, &ImageLayers::layersReset, this, &SliceView::invalidate);
    connect(model_, &SliceViewModel::gridChanged, this, &SliceView::invalidate);
    connect(model_, &SliceViewModel::orientationChanged, this, &SliceView::invalidate);
    connect(model_, &SliceViewModel::windowLevelChanged, this, &SliceView::invalidate);
    connect(model_, &SliceViewModel::displayChanged, this, &SliceView::invalidate);
    connect(model_, &SliceViewModel::viewChanged, this, qOverload<>(&QWidget::update));
    // The cursor moves the crosshair; only a change of slice needs new pixels.
    connect(model_, &SliceViewModel::cursorChanged, this, [this] {
        dirty_ = true;  // cheap for the slice sizes we show; keeps one code path
        update();
    });
}

void SliceView::setDifferenceGain(double gain) {
    difference_gain_ = gain;
    invalidate();
}

double SliceView::gain() const {
    return isDifference(layer_) && model_->displayMode() != DisplayMode::Phase ? difference_gain_ : 1.0;
}

void SliceView::invalidate() {
    dirty_ = true;
    update();
}

SliceView::Mapping SliceView::mapping() const {
    const recon::Grid& g = model_->grid();
    const PlaneAxes a = planeAxes(model_->orientation());
    const auto size = sliceSize(g, model_->orientation());
    // Square millimetres: each slice pixel is drawn with its voxel's aspect.
    const double du = g.fov_mm[a.u] / g.n[a.u];
    const double dv = g.fov_mm[a.v] / g.n[a.v];
    const double fit = std::min(width() / (size[0] * du), height() / (size[1] * dv));
    const double scale = fit * model_->zoom();
    Mapping m;
    m.sx = du * scale;
    m.sy = dv * scale;
    const QPointF pan = model_->pan();
    m.origin = QPointF(width() / 2.0 - (size[0] / 2.0 - pan.x()) * m.sx,
                       height() / 2.0 - (size[1] / 2.0 - pan.y()) * m.sy);
    return m;
}

QPointF SliceView::widgetPosition(int column, int row) const {
    const Mapping m = mapping();
    return m.origin + QPointF((column + 0.5) * m.sx, (row + 0.5) * m.sy);
}

std::optional<SlicePixel> SliceView::pixelAt(QPointF p) const {
    const Mapping m = mapping();
    const auto size = sliceSize(model_->grid(), model_->orientation());
    const int column = int(std::floor((p.x() - m.origin.x()) / m.sx));
    const int row = int(std::floor((p.y() - m.origin.y()) / m.sy));
    if (column < 0 || row < 0 || column >= size[0] || row >= size[1]) return std::nullopt;
    return SlicePixel{column, row};
}

std::optional<double> SliceView::cursorValue() const {
    const LayerImage* image = layers_->get(layer_);
    if (!image || image->volume.empty() || image->volume.grid != model_->grid()) return std::nullopt;
    const auto& c = model_->cursor();
    return displayValue(image->volume.at(c[0], c[1], c[2]), model_->displayMode());
}

QString SliceView::title() const {
    QString t = layers_->title(layer_);
    if (gain() != 1.0) t += QStringLiteral("  (x%1)").arg(gain());
    if (const LayerImage* image = layers_->get(layer_); image && image->quality)
        t += QStringLiteral("  %1 dB  %2 %")
                 .arg(image->quality->psnr_db, 0, 'f', 2)
                 .arg(image->quality->error_percent, 0, 'f', 1);
    return t;
}

void SliceView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), QColor(12, 12, 14));
    const LayerImage* image = layers_->get(layer_);
    const bool ready = image && !image->volume.empty() && image->volume.grid == model_->grid();

    if (ready) {
        if (dirty_ || image_.isNull()) {
            const SliceData s = extractSlice(image->volume, model_->orientation(), model_->slice(),
                                             model_->displayMode(), gain());
            image_ = renderSlice(s, model_->windowLevel(), model_->colorMap());
            dirty_ = false;
        }
        const Mapping m = mapping();
        const QRectF target(m.origin, QSizeF(image_.width() * m.sx, image_.height() * m.sy));
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);  // voxels stay voxels
        p.drawImage(target, image_);

        // Crosshair through the cursor voxel's centre.
        const SlicePixel c = pixelOf(model_->grid(), model_->orientation(), model_->cursor());
        const QPointF centre = widgetPosition(c.column, c.row);
        p.setPen(QPen(QColor(255, 200, 0, 150), 1));
        p.drawLine(QPointF(target.left(), centre.y()), QPointF(target.right(), centre.y()));
        p.drawLine(QPointF(centre.x(), target.top()), QPointF(centre.x(), target.bottom()));

        // The ROIs, the same in every view: A cyan, B magenta.
        if (measurements_) {
            const std::array<QColor, 2> colours{QColor(0, 220, 255), QColor(255, 80, 220)};
            for (int k = 0; k < MeasurementModel::kRois; ++k) {
                const auto& roi = measurements_->roi(k);
                if (!roi) continue;
                const QPointF a = widgetPosition(roi->pixels.left(), roi->pixels.top());
                const QPointF b = widgetPosition(roi->pixels.right(), roi->pixels.bottom());
                const QRectF box = QRectF(a, b).normalized().adjusted(-m.sx / 2, -m.sy / 2, m.sx / 2, m.sy / 2);
                p.setPen(QPen(colours[std::size_t(k)], 1.5));
                p.setBrush(Qt::NoBrush);
                if (roi->shape == RoiShape::Ellipse)
                    p.drawEllipse(box);
                else
                    p.drawRect(box);
                p.drawText(box.topLeft() + QPointF(2, -3), k == 0 ? QStringLiteral("A") : QStringLiteral("B"));
            }
            if (const auto& ruler = measurements_->ruler()) {
                const QPointF a = widgetPosition(ruler->from.x(), ruler->from.y());
                const QPointF b = widgetPosition(ruler->to.x(), ruler->to.y());
                p.setPen(QPen(QColor(120, 255, 120), 1.5));
                p.drawLine(a, b);
                p.drawText(b + QPointF(4, -4), QStringLiteral("%1 mm").arg(measurements_->rulerMillimetres(), 0, 'f', 1));
            }
        }
    }

    // Overlays: title (with quality), slice and the value under the cursor, on a
    // dark band so they stay legible over bright tissue. Long text wraps rather than being cut.
    p.setFont(overlayFont());
    const QRect text = overlayRect();
    auto label = [&p, &text](const QString& s, Qt::Alignment a) {
        const int flags = int(a) | Qt::TextWordWrap;
        const QRect r = p.fontMetrics().boundingRect(text, flags, s).adjusted(-4, -1, 4, 1);
        p.fillRect(r, QColor(0, 0, 0, 150));
        p.setPen(QColor(235, 235, 235));
        p.drawText(text, flags, s);
    };
    label(title(), Qt::AlignTop | Qt::AlignLeft);
    if (!ready) {
        QString why = QStringLiteral("waiting for the reconstruction");
        if (layers_->grid().voxels() <= 1) {
            why = QStringLiteral("no data: open a file or a demo case");
        } else if ((layer_ == Layer::Truth || isDifference(layer_)) && !layers_->has(Layer::Truth)) {
            why = QStringLiteral("no truth for this data set");
        }
        p.setPen(QColor(150, 150, 150));
        p.drawText(rect(), Qt::AlignCenter, why);
        return;
    }
    label(packLines(cursorParts(), p.fontMetrics(), text.width()).join(QLatin1Char('\n')), Qt::AlignBottom | Qt::AlignLeft);

    // Orientation letters at the edges' middles, a scale bar and a colour bar on the right.
    const auto letters = orientationLabels();
    const int title_bottom = p.fontMetrics().boundingRect(text, Qt::AlignTop | Qt::AlignLeft | Qt::TextWordWrap, title()).bottom();
    p.setPen(QColor(255, 230, 120));
    const QRect middle = rect().adjusted(4, title_bottom + 4, -4, -4);
    p.drawText(middle, Qt::AlignLeft | Qt::AlignVCenter, letters[0]);
    p.drawText(middle.adjusted(0, 0, -16, 0), Qt::AlignRight | Qt::AlignVCenter, letters[1]);
    p.drawText(middle, Qt::AlignTop | Qt::AlignHCenter, letters[2]);
    const auto [mm, length] = scaleBar();
    const int lines = int(packLines(cursorParts(), p.fontMetrics(), text.width()).size());
    // The bottom letter just above the cursor text, the scale bar a line above it (they never meet).
    const double letter_bottom = height() - 6 - lines * p.fontMetrics().lineSpacing();
    p.drawText(QRectF(0, letter_bottom - p.fontMetrics().lineSpacing(), width(), p.fontMetrics().lineSpacing()),
               Qt::AlignHCenter | Qt::AlignBottom, letters[3]);
    if (length > 4) {
        const double y = letter_bottom - p.fontMetrics().lineSpacing() - 4;
        // Left of the colour bar and its labels.
        const double right = width() - 22 - p.fontMetrics().horizontalAdvance(QStringLiteral("-0.0000"));
        const QString mm_text = QStringLiteral("%1 mm").arg(mm);
        const QRectF band(right - length - 2, y - p.fontMetrics().lineSpacing() - 3, length + 4, p.fontMetrics().lineSpacing() + 6);
        p.fillRect(band, QColor(0, 0, 0, 150));  // legible over bright tissue, like the other overlays
        p.setPen(QPen(QColor(235, 235, 235), 2));
        p.drawLine(QPointF(right - length, y), QPointF(right, y));
        p.drawText(QRectF(right - length, y - p.fontMetrics().lineSpacing() - 2, length, p.fontMetrics().lineSpacing()),
                   Qt::AlignHCenter | Qt::AlignBottom, mm_text);
    }
    // The colour bar: the colour map over the window, its ends in the image's units.
    const WindowLevel wl = model_->windowLevel();
    const auto& table = colorTable(model_->colorMap());
    const QRectF bar(width() - 14, height() * 0.3, 8, height() * 0.4);
    for (int k = 0; k < int(bar.height()); ++k) {
        const int index = std::clamp(int(255.0 * (1.0 - k / bar.height())), 0, 255);
        p.fillRect(QRectF(bar.left(), bar.top() + k, bar.width(), 1), QColor::fromRgb(table[std::size_t(index)]));
    }
    p.setPen(QColor(235, 235, 235));
    const double g = gain();
    const double scale = model_->displayMode() == DisplayMode::Phase ? recon::kPi : model_->intensityMax();
    const QFontMetrics fm = p.fontMetrics();
    const QString high = formatReadout(wl.high() / g, scale), low = formatReadout(wl.low() / g, scale);
    p.drawText(QPointF(bar.right() - fm.horizontalAdvance(high), bar.top() - 3), high);
    p.drawText(QPointF(bar.right() - fm.horizontalAdvance(low), bar.bottom() + fm.ascent() + 2), low);
    const QString unit = colourBarUnit();
    p.drawText(QPointF(bar.right() - fm.horizontalAdvance(unit), bar.bottom() + fm.ascent() + fm.lineSpacing() + 2), unit);
}

QString SliceView::colourBarUnit() const {
    // Reconstructions are in the truth's units, which have no physical meaning: arbitrary units.
    if (model_->displayMode() == DisplayMode::Phase) return QStringLiteral("rad");
    // CT images are attenuation coefficients (docs/CONVENTIONS.md, "Cone-beam CT").
    return layers_->modality() == Modality::Ct ? QStringLiteral("1/mm") : QStringLiteral("a.u.");
}

std::array<QString, 4> SliceView::orientationLabels() const {
    static const std::array<QString, 3> positive{QStringLiteral("R"), QStringLiteral("A"), QStringLiteral("S")};
    static const std::array<QString, 3> negative{QStringLiteral("L"), QStringLiteral("P"), QStringLiteral("I")};
    const PlaneAxes a = planeAxes(model_->orientation());
    const auto u = std::size_t(a.u), v = std::size_t(a.v);
    return {negative[u], positive[u], a.v_up ? positive[v] : negative[v], a.v_up ? negative[v] : positive[v]};
}

std::pair<double, double> SliceView::scaleBar() const {
    const recon::Grid& g = model_->grid();
    const int u = planeAxes(model_->orientation()).u;
    const double mm_per_pixel = g.fov_mm[u] / g.n[u] / mapping().sx;
    const double want = width() / 5.0 * mm_per_pixel;
    double mm = 1;
    for (double step : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0})
        if (step <= want) mm = step;
    return {mm, mm / mm_per_pixel};
}

void SliceView::setMeasurements(MeasurementModel* m) {
    measurements_ = m;
    if (m) connect(m, &MeasurementModel::roisChanged, this, qOverload<>(&QWidget::update));
    update();
}

QFont SliceView::overlayFont() const {
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    return f;
}

QStringList SliceView::cursorParts() const {
    const auto& c = model_->cursor();
    const recon::Grid& g = model_->grid();
    QStringList parts;
    parts << QStringLiteral("%1 %2/%3").arg(toString(model_->orientation())).arg(model_->slice() + 1).arg(model_->sliceCount());
    parts << QStringLiteral("(%1, %2, %3)").arg(c[0]).arg(c[1]).arg(c[2]);
    auto mm = [&g, &c](int axis) {
        return QString::number(recon::voxelPosition(c[axis], g.n[axis]) * g.fov_mm[axis], 'f', 1);
    };
    parts << (g.dims == 3 ? QStringLiteral("%1, %2, %3 mm").arg(mm(0), mm(1), mm(2))
                          : QStringLiteral("%1, %2 mm").arg(mm(0), mm(1)));
    if (auto v = cursorValue()) {
        const double scale = model_->displayMode() == DisplayMode::Phase ? recon::kPi : model_->intensityMax();
        parts << QStringLiteral("%1 %2").arg(toString(model_->displayMode()).toLower(), formatReadout(*v, scale));
    }
    return parts;
}

QStringList SliceView::packLines(const QStringList& parts, const QFontMetrics& metrics, int width) {
    const QString gap = QStringLiteral("   ");
    QStringList lines;
    for (const QString& part : parts) {
        if (!lines.isEmpty() && metrics.horizontalAdvance(lines.back() + gap + part) <= width)
            lines.back() += gap + part;
        else
            lines << part;
    }
    return lines;
}

void SliceView::wheelEvent(QWheelEvent* e) {
    const int steps = e->angleDelta().y() / 120;
    if (steps == 0) return;
    if (e->modifiers() & Qt::ControlModifier) {
        model_->zoomBy(std::pow(1.25, steps));
    } else {
        model_->stepSlice(steps);
    }
    e->accept();
}

void SliceView::setCursorAt(QPointF point) {
    if (auto px = pixelAt(point))
        model_->setCursor(voxelOf(model_->grid(), model_->orientation(), model_->slice(), px->column, px->row));
}

void SliceView::mousePressEvent(QMouseEvent* e) {
    last_mouse_ = e->position();
    if (e->button() == Qt::MiddleButton ||
        (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier))) {
        drag_ = Drag::Pan;
        setCursor(Qt::ClosedHandCursor);
    } else if (e->button() == Qt::RightButton) {
        drag_ = Drag::WindowLevel;
        setCursor(Qt::SizeAllCursor);
    } else if (e->button() == Qt::LeftButton && measurements_ && (e->modifiers() & Qt::ControlModifier) &&
               (e->modifiers() & Qt::AltModifier)) {
        if (const auto p = pixelAt(e->position())) {
            drag_ = Drag::Ruler;
            roi_start_ = *p;
            measurements_->setRuler(QPoint(p->column, p->row), QPoint(p->column, p->row));
        }
    } else if (e->button() == Qt::LeftButton && measurements_ &&
               (e->modifiers() & (Qt::ControlModifier | Qt::AltModifier))) {
        if (const auto p = pixelAt(e->position())) {
            drag_ = Drag::Roi;
            roi_index_ = (e->modifiers() & Qt::AltModifier) ? 1 : 0;
            roi_start_ = *p;
            measurements_->setRoi(roi_index_, {QRect(QPoint(p->column, p->row), QSize(1, 1)), measurements_->shape()});
        }
    } else if (e->button() == Qt::LeftButton) {
        drag_ = Drag::Cursor;
        setCursorAt(e->position());
    }
    e->accept();
}

void SliceView::mouseMoveEvent(QMouseEvent* e) {
    const QPointF delta = e->position() - last_mouse_;
    last_mouse_ = e->position();
    switch (drag_) {
        case Drag::Cursor: setCursorAt(e->position()); break;
        case Drag::Pan: {
            const Mapping m = mapping();
            model_->panBy(QPointF(delta.x() / m.sx, delta.y() / m.sy));
            break;
        }
        case Drag::WindowLevel: model_->dragWindowLevel(delta.x(), delta.y()); break;
        case Drag::Ruler:
            if (const auto p = pixelAt(e->position()))
                measurements_->setRuler(QPoint(roi_start_.column, roi_start_.row), QPoint(p->column, p->row));
            break;
        case Drag::Roi:
            if (const auto p = pixelAt(e->position()))
                measurements_->setRoi(roi_index_, {QRect(QPoint(roi_start_.column, roi_start_.row), QPoint(p->column, p->row)),
                                                   measurements_->shape()});
            break;
        case Drag::None: break;
    }
    e->accept();
}

void SliceView::mouseReleaseEvent(QMouseEvent* e) {
    drag_ = Drag::None;
    unsetCursor();
    e->accept();
}

void SliceView::mouseDoubleClickEvent(QMouseEvent* e) {
    if (e->button() == Qt::RightButton) autoWindowLevel();  // as in many PACS viewers
    e->accept();
}

void SliceView::autoWindowLevel() {
    const LayerImage* image = layers_->get(layer_);
    if (!image || image->volume.empty()) return;
    model_->setWindowLevel(percentileWindow(
        extractSlice(image->volume, model_->orientation(), model_->slice(), model_->displayMode(), gain())));
}

void SliceView::keyPressEvent(QKeyEvent* e) {
    switch (e->key()) {
        case Qt::Key_Up:
        case Qt::Key_PageUp: model_->stepSlice(+1); break;
        case Qt::Key_Down:
        case Qt::Key_PageDown: model_->stepSlice(-1); break;
        case Qt::Key_Plus:
        case Qt::Key_Equal: model_->zoomBy(1.25); break;
        case Qt::Key_Minus: model_->zoomBy(0.8); break;
        case Qt::Key_R: model_->resetView(); break;
        case Qt::Key_A: autoWindowLevel(); break;
        default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

}  // namespace studio
