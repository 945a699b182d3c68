// A picture drawn into the space its widget has, nearest neighbour (one voxel or detector pixel
// stays one block): stretched to fill it (a sinogram, whose axes are angle and detector column,
// not lengths) or fitted with its aspect kept (an image of the object).
#pragma once

#include <QImage>
#include <QPainter>
#include <QWidget>

namespace studio {

class ScaledImageWidget : public QWidget {
public:
    enum class Fit { Stretch, KeepAspect };
    ScaledImageWidget(Fit fit, QColor background, QWidget* parent)
        : QWidget(parent), fit_(fit), background_(background) {}
    void setImage(QImage image) {
        image_ = std::move(image);
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.fillRect(rect(), background_);
        if (image_.isNull()) return;
        if (fit_ == Fit::Stretch) {
            p.drawImage(rect(), image_);
            return;
        }
        const QSize fitted = image_.size().scaled(size(), Qt::KeepAspectRatio);
        p.drawImage(QRect(QPoint((width() - fitted.width()) / 2, (height() - fitted.height()) / 2), fitted), image_);
    }

private:
    Fit fit_;
    QColor background_;
    QImage image_;
};

}  // namespace studio
