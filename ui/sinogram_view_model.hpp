// The sinogram of a CT scan: the projections of one detector row as an image, one line
// per view (β down), one column per detector column (u across). Widget-free, like
// SliceViewModel; SinogramView draws it.
#pragma once

#include <QImage>
#include <QObject>

#include <memory>
#include <vector>

#include "recon/ct/ct_data.hpp"

namespace studio {

class SinogramViewModel : public QObject {
    Q_OBJECT
public:
    explicit SinogramViewModel(QObject* parent = nullptr);

    // The scan shown (null: none); the row starts at the detector's central row.
    void setScan(std::shared_ptr<const recon::ct::CtData> scan);
    bool hasScan() const { return scan_ != nullptr; }
    const recon::ct::CtData* scan() const { return scan_.get(); }

    int rows() const;     // detector rows (1 for fan beam, 0 without a scan)
    int views() const;    // image height
    int columns() const;  // image width
    int row() const { return row_; }
    void setRow(int row);  // clamped to [0, rows)

    // The current row's projection values (line integrals): views() x columns(), column fastest,
    // projections[(view * rows + row) * columns + column].
    const std::vector<double>& image() const { return image_; }
    double minimum() const { return minimum_; }
    double maximum() const { return maximum_; }
    double angleDegrees(int view) const;  // β of a line
    // The image in grey, minimum black and maximum white; null without a scan.
    QImage render() const;

signals:
    void changed();  // a new scan or row

private:
    void extract();

    std::shared_ptr<const recon::ct::CtData> scan_;
    int row_ = 0;
    std::vector<double> image_;
    double minimum_ = 0, maximum_ = 0;
};

}  // namespace studio
