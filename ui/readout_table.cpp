#include "ui/readout_table.hpp"

#include <QHeaderView>

#include "recon/core/conventions.hpp"
#include "ui/slice_rendering.hpp"

namespace studio {

namespace {
constexpr std::array<Layer, 4> kImages{Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel,
                                       Layer::Iterative};
}

ReadoutTable::ReadoutTable(ImageLayers* layers, SliceViewModel* model, QWidget* parent)
    : QTableWidget(int(kImages.size()) + 1, 3, parent), layers_(layers), model_(model) {
    setObjectName(QStringLiteral("readouts"));
    setHorizontalHeaderLabels({tr("PSNR dB"), tr("Error %"), tr("Cursor")});
    horizontalHeaderItem(2)->setToolTip(tr("Value at the cursor in the current display mode"));
    const QStringList rows{tr("Truth"), tr("Trilinear"), tr("Kaiser-Bessel"), tr("Iterative"), tr("Floor")};
    setVerticalHeaderLabels(rows);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    // Columns as wide as their numbers: a number is never elided ("20...."); the table scrolls instead.
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    setWordWrap(false);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    for (int r = 0; r < rowCount(); ++r)
        for (int c = 0; c < columnCount(); ++c) {
            auto* item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            setItem(r, c, item);
        }
    connect(layers_, &ImageLayers::layerChanged, this, &ReadoutTable::refresh);
    connect(layers_, &ImageLayers::layersReset, this, &ReadoutTable::refresh);
    connect(layers_, &ImageLayers::floorChanged, this, &ReadoutTable::refresh);
    verticalHeaderItem(int(kImages.size()))
        ->setToolTip(tr("Inverse FFT of full Cartesian data of the same phantom (simulated data only): "
                        "the Gibbs-ringing floor of an unregularised reconstruction. A regulariser can "
                        "pass it by smoothing the ringing."));
    connect(model_, &SliceViewModel::cursorChanged, this, &ReadoutTable::refresh);
    connect(model_, &SliceViewModel::displayChanged, this, &ReadoutTable::refresh);
    refresh();
}

int ReadoutTable::rowOf(Layer l) {
    for (std::size_t i = 0; i < kImages.size(); ++i)
        if (kImages[i] == l) return int(i);
    return -1;
}

QString ReadoutTable::cell(Layer image, int column) const {
    const int row = rowOf(image);
    return row < 0 ? QString() : item(row, column)->text();
}

void ReadoutTable::refresh() {
    const auto& c = model_->cursor();
    // CT has no trilinear gridding; its analytic baseline (FDK) takes Kaiser-Bessel's row.
    const bool ct = layers_->modality() == Modality::Ct;
    setRowHidden(rowOf(Layer::GriddingTrilinear), ct);
    setRowHidden(int(kImages.size()), ct);  // no Cartesian floor for CT
    verticalHeaderItem(rowOf(Layer::GriddingKaiserBessel))->setText(ct ? tr("FDK") : tr("Kaiser-Bessel"));
    verticalHeaderItem(rowOf(Layer::Iterative))->setText(ct ? tr("Iterative (WLS)") : tr("Iterative"));
    for (Layer l : kImages) {
        const int row = rowOf(l);
        const LayerImage* image = layers_->get(l);
        const bool quality = image && image->quality;
        item(row, 0)->setText(quality ? QString::number(image->quality->psnr_db, 'f', 2) : QString());
        item(row, 1)->setText(quality ? QString::number(image->quality->error_percent, 'f', 2) : QString());
        QString value;
        if (image && !image->volume.empty() && image->volume.grid == model_->grid())
            value = formatReadout(displayValue(image->volume.at(c[0], c[1], c[2]), model_->displayMode()),
                                  model_->displayMode() == DisplayMode::Phase ? recon::kPi : model_->intensityMax());
        item(row, 2)->setText(value);
    }
    const int floor_row = int(kImages.size());
    const auto& floor = layers_->floor();
    item(floor_row, 0)->setText(floor ? QString::number(floor->psnr_db, 'f', 2) : QString());
    item(floor_row, 1)->setText(floor ? QString::number(floor->error_percent, 'f', 2) : QString());
    // Wide enough for every column: numbers are never elided and nothing hides behind a scroll bar.
    resizeColumnsToContents();
    int width = verticalHeader()->sizeHint().width() + 2 * frameWidth();
    for (int c = 0; c < columnCount(); ++c) width += horizontalHeader()->sectionSizeHint(c);
    setMinimumWidth(width);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setToolTip(tr("Cursor at voxel (%1, %2, %3); gridded images are scaled by the least-squares optimal "
                  "factor before they are measured, as the reference paper did.")
                   .arg(c[0])
                   .arg(c[1])
                   .arg(c[2]));
}

}  // namespace studio
