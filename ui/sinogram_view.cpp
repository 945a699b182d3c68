#include "ui/sinogram_view.hpp"

#include "ui/scaled_image_widget.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QSpinBox>
#include <QVBoxLayout>

namespace studio {

SinogramView::SinogramView(SinogramViewModel* model, QWidget* parent) : QWidget(parent), model_(model) {
    setObjectName(QStringLiteral("sinogram"));
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Detector row:"), this));
    row_box_ = new QSpinBox(this);
    row_box_->setObjectName(QStringLiteral("sinogram-row"));
    row_box_->setToolTip(tr("The detector row (v) whose projections are shown; a fan-beam scan has one."));
    controls->addWidget(row_box_);
    controls->addStretch(1);
    layout->addLayout(controls);
    auto* image = new ScaledImageWidget(ScaledImageWidget::Fit::Stretch, Qt::black, this);
    image->setMinimumSize(120, 120);
    layout->addWidget(image, 1);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    layout->addWidget(caption_);
    connect(row_box_, &QSpinBox::valueChanged, model_, &SinogramViewModel::setRow);
    connect(model_, &SinogramViewModel::changed, this, [this, image] {
        image->setImage(model_->render());
        refresh();
    });
    image->setImage(model_->render());
    refresh();
}

QString SinogramView::caption() const { return caption_->text(); }

void SinogramView::refresh() {
    const QSignalBlocker block(row_box_);
    row_box_->setRange(0, std::max(0, model_->rows() - 1));
    row_box_->setValue(model_->row());
    row_box_->setEnabled(model_->rows() > 1);
    if (!model_->hasScan()) {
        caption_->setText(tr("No CT scan is open."));
        return;
    }
    caption_->setText(tr("Row %1 of %2: %3 views (down, %4 to %5 deg) x %6 detector columns (across, u); "
                         "line integrals from %7 (black) to %8 (white)")
                          .arg(model_->row())
                          .arg(model_->rows())
                          .arg(model_->views())
                          .arg(model_->angleDegrees(0), 0, 'f', 1)
                          .arg(model_->angleDegrees(model_->views() - 1), 0, 'f', 1)
                          .arg(model_->columns())
                          .arg(model_->minimum(), 0, 'g', 4)
                          .arg(model_->maximum(), 0, 'g', 4));
}

}  // namespace studio
