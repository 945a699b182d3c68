// The comparison: truth, both griddings and the iterative image in the top row,
// their difference maps against the truth below, and the readouts; every view
// observes the one SliceViewModel, so slice, cursor, zoom, pan and
// window/level are linked.
#pragma once

#include <QWidget>

#include <map>

#include "ui/image_layers.hpp"
#include "ui/slice_view.hpp"
#include "ui/slice_view_model.hpp"

namespace studio {

class ReadoutTable;

class ComparisonGrid : public QWidget {
    Q_OBJECT
public:
    ComparisonGrid(ImageLayers* layers, SliceViewModel* model, QWidget* parent = nullptr);
    SliceView* view(Layer l) const { return views_.at(l); }
    ReadoutTable* readouts() const { return readouts_; }

private:
    std::map<Layer, SliceView*> views_;
    ReadoutTable* readouts_ = nullptr;
};

}  // namespace studio
