#include "ui/measurement_panel.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include <cmath>

#include "recon/core/conventions.hpp"

namespace studio {

namespace {
const QStringList kColumns{QStringLiteral("A mean"), QStringLiteral("A SD"),  QStringLiteral("A min"),
                           QStringLiteral("A max"),  QStringLiteral("B mean"), QStringLiteral("B SD"),
                           QStringLiteral("SNR"),    QStringLiteral("contrast")};
}

const std::vector<Layer>& MeasurementPanel::images() {
    static const std::vector<Layer> kImages{Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel,
                                            Layer::Iterative, Layer::Pinned};
    return kImages;
}

MeasurementPanel::MeasurementPanel(ImageLayers* layers, SliceViewModel* view, MeasurementModel* measurements,
                                   QWidget* parent)
    : QWidget(parent), layers_(layers), view_(view), measurements_(measurements) {
    setObjectName(QStringLiteral("measurements"));
    auto* layout = new QHBoxLayout(this);
    auto* left = new QVBoxLayout;
    auto* controls = new QHBoxLayout;
    shape_ = new QComboBox(this);
    shape_->addItem(tr("Rectangle"), int(RoiShape::Rectangle));
    shape_->addItem(tr("Ellipse"), int(RoiShape::Ellipse));
    connect(shape_, &QComboBox::activated, this,
            [this] { measurements_->setShape(RoiShape(shape_->currentData().toInt())); });
    auto* hint = new QLabel(tr("Ctrl+drag: ROI A, Alt+drag: ROI B, Ctrl+Alt+drag: distance"), this);
    hint->setToolTip(tr("In any slice view: Ctrl + left drag draws ROI A (signal), Alt + left drag ROI B "
                        "(background); both apply to every image. Ctrl + Alt + left drag measures a distance in mm"));
    controls->addWidget(shape_);
    controls->addWidget(hint, 1);
    left->addLayout(controls);
    table_ = new QTableWidget(int(images().size()), int(kColumns.size()), this);
    table_->setObjectName(QStringLiteral("roi-table"));
    table_->setHorizontalHeaderLabels(kColumns);
    table_->horizontalHeaderItem(6)->setToolTip(tr("mean of A / SD of B"));
    table_->horizontalHeaderItem(7)->setToolTip(tr("(mean A - mean B) / (mean A + mean B)"));
    QStringList rows;
    for (Layer l : images()) rows << layerTitle(l);
    table_->setVerticalHeaderLabels(rows);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Room for a readout of 4 significant digits with the header's margins, numbers or not yet.
    table_->horizontalHeader()->setMinimumSectionSize(table_->fontMetrics().horizontalAdvance(QStringLiteral("-0.0000")) + 16);
    for (int r = 0; r < table_->rowCount(); ++r)
        for (int c = 0; c < table_->columnCount(); ++c) {
            auto* item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            table_->setItem(r, c, item);
        }
    left->addWidget(table_, 1);
    layout->addLayout(left, 0);

    auto* chart = new QChart;
    chart->setTitle(tr("Profile through the cursor"));
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignBottom);
    position_axis_ = new QValueAxis;
    position_axis_->setTitleText(tr("position along the row (mm)"));
    value_axis_ = new QValueAxis;
    chart->addAxis(position_axis_, Qt::AlignBottom);
    chart->addAxis(value_axis_, Qt::AlignLeft);
    const std::array<QColor, 5> colours{QColor(40, 40, 40), QColor(127, 127, 127), QColor(148, 103, 189),
                                        QColor(44, 160, 44), QColor(255, 127, 14)};
    for (std::size_t i = 0; i < images().size(); ++i) {
        auto* s = new QLineSeries;
        s->setName(layerTitle(images()[i]));
        s->setPen(QPen(colours[i], 1.5));
        chart->addSeries(s);
        s->attachAxis(position_axis_);
        s->attachAxis(value_axis_);
    }
    profile_ = new QChartView(chart, this);
    profile_->setRenderHint(QPainter::Antialiasing);
    layout->addWidget(profile_, 1);

    connect(layers_, &ImageLayers::layersReset, this, [this, chart] {
        // The names follow the modality (CT: FDK, Iterative (WLS)).
        QStringList names;
        for (Layer l : images()) names << layers_->title(l);
        table_->setVerticalHeaderLabels(names);
        const auto series = chart->series();
        for (int i = 0; i < series.size() && i < names.size(); ++i) series[i]->setName(names[i]);
    });
    connect(measurements_, &MeasurementModel::roisChanged, this, &MeasurementPanel::refresh);
    connect(view_, &SliceViewModel::cursorChanged, this, &MeasurementPanel::refresh);
    connect(view_, &SliceViewModel::displayChanged, this, &MeasurementPanel::refresh);
    connect(view_, &SliceViewModel::orientationChanged, this, &MeasurementPanel::refresh);
    connect(layers_, &ImageLayers::layerChanged, this, &MeasurementPanel::refresh);
    connect(layers_, &ImageLayers::layersReset, this, &MeasurementPanel::refresh);
    refresh();
}

QChart* MeasurementPanel::profileChart() const { return profile_->chart(); }

void MeasurementPanel::refresh() {
    const Orientation o = view_->orientation();
    const recon::Grid& g = view_->grid();
    const PlaneAxes axes = planeAxes(o);
    const int row = pixelOf(g, o, view_->cursor()).row;
    const double scale = view_->displayMode() == DisplayMode::Phase ? recon::kPi : view_->intensityMax();
    double low = 0, high = 0;
    const QList<QAbstractSeries*> series = profileChart()->series();
    for (std::size_t i = 0; i < images().size(); ++i) {
        const LayerImage* image = layers_->get(images()[i]);
        auto* line = static_cast<QLineSeries*>(series[qsizetype(i)]);
        const bool ready = image && !image->volume.empty() && image->volume.grid == g;
        std::optional<SliceData> slice;
        if (ready) slice = extractSlice(image->volume, o, view_->slice(), view_->displayMode());
        // ROI statistics.
        std::array<std::optional<RoiStats>, 2> stats;
        for (int k = 0; k < 2; ++k)
            if (slice && measurements_->roi(k)) stats[std::size_t(k)] = roiStats(*slice, *measurements_->roi(k));
        auto text = [&](int column, std::optional<double> v) {
            table_->item(int(i), column)->setText(v ? formatReadout(*v, scale) : QString());
        };
        for (int k = 0; k < 2; ++k) {
            const auto& st = stats[std::size_t(k)];
            text(4 * k, st ? std::optional(st->mean) : std::nullopt);
            text(4 * k + 1, st ? std::optional(st->sd) : std::nullopt);
            if (k == 0) {
                text(2, st ? std::optional(st->min) : std::nullopt);
                text(3, st ? std::optional(st->max) : std::nullopt);
            }
        }
        const bool both = stats[0] && stats[1];
        table_->item(int(i), 6)->setText(both && stats[1]->sd > 0 ? QString::number(roiSnr(*stats[0], *stats[1]), 'f', 1)
                                                                 : QString());
        table_->item(int(i), 7)->setText(both ? QString::number(roiContrast(*stats[0], *stats[1]), 'f', 3) : QString());
        // The profile along the row through the cursor, in mm along the row's image axis.
        QList<QPointF> points;
        if (slice) {
            const std::vector<double> values = rowProfile(*slice, row);
            for (std::size_t c = 0; c < values.size(); ++c) {
                const double mm = recon::voxelPosition(int(c), g.n[axes.u]) * g.fov_mm[axes.u];
                points.append({mm, values[c]});
                low = std::min(low, values[c]);
                high = std::max(high, values[c]);
            }
        }
        line->replace(points);
    }
    const int n = g.n[axes.u];
    position_axis_->setRange(recon::voxelPosition(0, n) * g.fov_mm[axes.u], recon::voxelPosition(n - 1, n) * g.fov_mm[axes.u]);
    value_axis_->setRange(low, high > low ? high * 1.05 : low + 1);
    table_->resizeColumnsToContents();
    // Wide enough for every column: no number hides behind a scroll bar.
    int width = table_->verticalHeader()->sizeHint().width() + 2 * table_->frameWidth();
    for (int c = 0; c < table_->columnCount(); ++c) width += table_->columnWidth(c);
    table_->setMinimumWidth(width);
}

}  // namespace studio
