#include "ui/pin_panel.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace studio {

PinPanel::PinPanel(ReconstructionController* controller, SliceViewModel* model, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    setObjectName(QStringLiteral("pin-panel"));
    pin_ = new SnapshotPin(controller, this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* controls = new QHBoxLayout;
    name_ = new QLineEdit(this);
    name_->setObjectName(QStringLiteral("pin-name"));
    name_->setPlaceholderText(tr("name"));
    name_->setMaximumWidth(140);
    pin_button_ = new QPushButton(tr("Pin current image"), this);
    pin_button_->setObjectName(QStringLiteral("pin-button"));
    pin_button_->setToolTip(tr("Keep the iterative image shown now, with its lambda, regulariser and iterations, "
                               "to compare the next solves with"));
    clear_button_ = new QPushButton(tr("Clear"), this);
    description_ = new QLabel(this);
    description_->setObjectName(QStringLiteral("pin-description"));
    description_->setWordWrap(true);
    controls->addWidget(new QLabel(tr("Name:"), this));
    controls->addWidget(name_);
    controls->addWidget(pin_button_);
    controls->addWidget(clear_button_);
    controls->addWidget(description_, 1);
    layout->addLayout(controls);
    auto* views = new QHBoxLayout;
    views->setSpacing(2);
    for (Layer l : {Layer::Pinned, Layer::Iterative, Layer::DifferencePinned}) {
        auto* v = new SliceView(l, &controller->layers(), model, this);
        views_[l] = v;
        views->addWidget(v, 1);
    }
    layout->addLayout(views, 1);

    connect(pin_button_, &QPushButton::clicked, this, &PinPanel::pinNow);
    connect(name_, &QLineEdit::returnPressed, this, &PinPanel::pinNow);
    connect(clear_button_, &QPushButton::clicked, pin_, &SnapshotPin::clear);
    connect(pin_, &SnapshotPin::pinnedChanged, this, &PinPanel::showPin);
    connect(&controller->layers(), &ImageLayers::layerChanged, this, [this](Layer l) {
        if (l == Layer::Iterative) showPin();
    });
    showPin();
}

void PinPanel::pinNow() {
    if (pin_->pin(name_->text().trimmed())) name_->clear();
}

void PinPanel::showPin() {
    pin_button_->setEnabled(controller_->layers().has(Layer::Iterative));
    clear_button_->setEnabled(pin_->snapshot().has_value());
    name_->setPlaceholderText(pin_->nextName());
    description_->setText(pin_->snapshot() ? tr("Pinned %1. Live: iterative image; right: live - pinned.")
                                                 .arg(pin_->snapshot()->describe())
                                           : tr("Nothing pinned: pin an iterative image to compare the next "
                                                "solves (another lambda, regulariser or iteration count) with it."));
}

}  // namespace studio
