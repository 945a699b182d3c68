#include "ui/coil_map_view.hpp"

#include "ui/scaled_image_widget.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace studio {

CoilMapView::CoilMapView(CoilMapViewModel* model, QWidget* parent) : QWidget(parent), model_(model) {
    setObjectName(QStringLiteral("coil-maps"));
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Coil:"), this));
    coil_box_ = new QComboBox(this);
    coil_box_->setObjectName(QStringLiteral("coil-map-coil"));
    coil_box_->setToolTip(tr("One coil's map, or every coil side by side"));
    controls->addWidget(coil_box_);
    controls->addWidget(new QLabel(tr("Show:"), this));
    component_box_ = new QComboBox(this);
    component_box_->setObjectName(QStringLiteral("coil-map-component"));
    component_box_->addItem(tr("Magnitude"), int(CoilMapComponent::Magnitude));
    component_box_->addItem(tr("Phase"), int(CoilMapComponent::Phase));
    component_box_->addItem(tr("Mask"), int(CoilMapComponent::Mask));
    component_box_->setItemData(2, tr("Where the maps are defined (ESPIRiT: eigenvalue and object support); "
                                      "SENSE solves only there"),
                                Qt::ToolTipRole);
    controls->addWidget(component_box_);
    controls->addStretch(1);
    layout->addLayout(controls);
    auto* picture = new ScaledImageWidget(ScaledImageWidget::Fit::KeepAspect, palette().window().color(), this);
    picture->setObjectName(QStringLiteral("coil-map-picture"));
    picture->setMinimumSize(160, 160);
    picture->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    picture_ = picture;
    layout->addWidget(picture, 1);
    caption_ = new QLabel(this);
    caption_->setObjectName(QStringLiteral("coil-map-caption"));
    caption_->setWordWrap(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(caption_);

    connect(coil_box_, &QComboBox::currentIndexChanged, this, [this] {
        if (coil_box_->currentIndex() >= 0) model_->setCoil(coil_box_->currentData().toInt());
    });
    connect(component_box_, &QComboBox::currentIndexChanged, this,
            [this] { model_->setComponent(CoilMapComponent(component_box_->currentData().toInt())); });
    connect(model_, &CoilMapViewModel::changed, this, [this, picture] {
        picture->setImage(model_->render());
        refresh();
    });
    picture->setImage(model_->render());
    refresh();
}

QString CoilMapView::caption() const { return caption_->text(); }

void CoilMapView::refresh() {
    {
        const QSignalBlocker block(coil_box_);
        if (coil_box_->count() != model_->coils() + 1) {
            coil_box_->clear();
            coil_box_->addItem(tr("All coils"), CoilMapViewModel::kAllCoils);
            for (int c = 0; c < model_->coils(); ++c) coil_box_->addItem(tr("Coil %1").arg(c + 1), c);
        }
        coil_box_->setCurrentIndex(coil_box_->findData(model_->coil()));
        coil_box_->setEnabled(model_->hasMaps() && model_->component() != CoilMapComponent::Mask);
    }
    {
        const QSignalBlocker block(component_box_);
        component_box_->setCurrentIndex(component_box_->findData(int(model_->component())));
        component_box_->setEnabled(model_->hasMaps());
    }
    caption_->setText(model_->caption());
}

}  // namespace studio
