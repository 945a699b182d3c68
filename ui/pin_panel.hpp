// The "Pinned" tab: the pinned snapshot, the live iterative image and their
// difference (iterative - pinned), linked like every slice view; a name field
// and Pin / Clear buttons; what the pin was made with.
#pragma once

#include <QWidget>

#include <map>

#include "ui/pinned_snapshot.hpp"
#include "ui/slice_view.hpp"

class QLabel;
class QLineEdit;
class QPushButton;

namespace studio {

class PinPanel : public QWidget {
    Q_OBJECT
public:
    PinPanel(ReconstructionController* controller, SliceViewModel* model, QWidget* parent = nullptr);

    SnapshotPin* pin() const { return pin_; }
    SliceView* view(Layer l) const { return views_.at(l); }
    QLabel* descriptionLabel() const { return description_; }
    void pinNow();  // pins the live image under the name in the field

private:
    void showPin();

    ReconstructionController* controller_;
    SnapshotPin* pin_ = nullptr;
    std::map<Layer, SliceView*> views_;
    QLineEdit* name_ = nullptr;
    QPushButton* pin_button_ = nullptr;
    QPushButton* clear_button_ = nullptr;
    QLabel* description_ = nullptr;
};

}  // namespace studio
