#include "ui/comparison_grid.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "ui/readout_table.hpp"

namespace studio {

ComparisonGrid::ComparisonGrid(ImageLayers* layers, SliceViewModel* model, QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("comparison"));
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(2, 2, 2, 2);
    grid->setSpacing(2);
    const std::array<std::array<Layer, 4>, 2> placement{{
        {Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel, Layer::Iterative},
        {Layer::Truth, Layer::DifferenceTrilinear, Layer::DifferenceKaiserBessel, Layer::DifferenceIterative},
    }};
    for (int row = 0; row < 2; ++row) {
        for (int column = 0; column < 4; ++column) {
            if (row == 1 && column == 0) continue;  // the readouts go under the truth
            const Layer l = placement[row][column];
            auto* v = new SliceView(l, layers, model, this);
            views_[l] = v;
            grid->addWidget(v, row, column);
        }
    }
    auto* corner = new QWidget(this);
    auto* box = new QVBoxLayout(corner);
    box->setContentsMargins(4, 4, 4, 4);
    auto* heading = new QLabel(tr("<b>Against the truth</b>"), corner);
    readouts_ = new ReadoutTable(layers, model, corner);
    box->addWidget(heading);
    box->addWidget(readouts_, 1);
    grid->addWidget(corner, 1, 0);
    for (int i = 0; i < 4; ++i) grid->setColumnStretch(i, 1);
    for (int i = 0; i < 2; ++i) grid->setRowStretch(i, 1);
    // CT shows truth, FDK, iterative and their differences: the trilinear column goes.
    auto follow = [this, layers, grid] {
        const bool ct = layers->modality() == Modality::Ct;
        grid->setColumnStretch(1, ct ? 0 : 1);
        views_[Layer::GriddingTrilinear]->setVisible(!ct);
        views_[Layer::DifferenceTrilinear]->setVisible(!ct);
    };
    connect(layers, &ImageLayers::layersReset, this, follow);
    follow();
}

}  // namespace studio
