// PSNR and percent error of each image against the truth (updated every
// iteration), and every image's value at the shared cursor.
#pragma once

#include <QTableWidget>

#include "ui/image_layers.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

class ReadoutTable : public QTableWidget {
    Q_OBJECT
public:
    ReadoutTable(ImageLayers* layers, SliceViewModel* model, QWidget* parent = nullptr);
    QSize sizeHint() const override { return {280, 150}; }

    // The text shown for an image's row and column (0 PSNR, 1 error, 2 value), for tests.
    QString cell(Layer image, int column) const;
    QString floorCell(int column) const { return item(rowCount() - 1, column)->text(); }

private:
    void refresh();
    static int rowOf(Layer l);

    ImageLayers* layers_;
    SliceViewModel* model_;
};

}  // namespace studio
