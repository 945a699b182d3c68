// Convergence per CG iteration with Qt Charts: the normalised residual and the
// normalised cost (log scale) in one chart; PSNR and percent error against the
// truth in another, with the gridded images' PSNR as dashed reference lines.
#pragma once

#include <QPointF>
#include <QTimer>
#include <QWidget>

#include <map>
#include <optional>
#include <vector>

#include "recon/core/iteration_record.hpp"
#include "recon/core/metrics.hpp"
#include "ui/image_layers.hpp"

class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;
class QLogValueAxis;

namespace studio {

class ConvergencePlot : public QWidget {
    Q_OBJECT
public:
    explicit ConvergencePlot(QWidget* parent = nullptr);

    // A new solve of this many iterations (per coil). A warm start continues an
    // image that had `iterations_before` iterations since its start from zero; its
    // cost is drawn relative to `cost_reference` (the first cost of that start from
    // zero) instead of its own, already low, first cost.
    void reset(int iterations, int iterations_before = 0, double cost_reference = 0);
    void addRecord(const recon::IterationRecord& r);
    // A gridded image's quality, drawn as a horizontal reference line.
    void setReference(Layer gridding, const recon::Quality& q);
    // The Cartesian (Gibbs) floor's PSNR, drawn as a dotted line.
    void setFloor(const recon::Quality& q);
    void clearReferences();
    // The legend name of a reference line (CT names Kaiser-Bessel's "FDK").
    void setReferenceName(Layer gridding, const QString& name);
    void setFloorName(const QString& name);  // empty: left out of the legend (CT has no floor)
    // Hands the points gathered since the last flush to the charts; runs at most
    // every kFlushMs by itself. Qt Charts re-lays a series out at every append,
    // which a fast solve (thousands of iterations a second) would turn into a stall.
    void flush();
    static constexpr int kFlushMs = 100;
    static constexpr std::size_t kMaxDrawnPoints = 500;

    // For tests: points plotted so far per series name
    // ("residual", "cost", "psnr", "error", "ref-gridding-kb", ...).
    int pointCount(const QString& series) const;
    QPointF point(const QString& series, int index) const;  // as gathered (x, y)
    // For tests: the PSNR axis' range (dB) and the charts (their legends' text).
    std::pair<double, double> psnrRange() const;
    QString iterationAxisTitle() const;
    QList<QChart*> charts() const;

private:
    static void nameSeries(QLineSeries* s, const QString& name);  // empty: out of the legend
    QLineSeries* makeSeries(QChart* chart, const QString& key, const QString& name, QColor colour,
                            bool dashed = false);
    void updateReferenceLines();
    void updateQualityAxes();
    void append(const QString& series, double x, double y);

    QChartView* convergence_view_ = nullptr;
    QChartView* quality_view_ = nullptr;
    QValueAxis* iteration_axis_ = nullptr;
    QLogValueAxis* relative_axis_ = nullptr;
    QValueAxis* quality_iteration_axis_ = nullptr;
    QValueAxis* psnr_axis_ = nullptr;
    QValueAxis* error_axis_ = nullptr;
    std::map<QString, QLineSeries*> series_;
    std::map<QString, std::vector<QPointF>> points_;  // every point, drawn or still pending
    QTimer flush_timer_;
    std::map<Layer, recon::Quality> references_;
    std::optional<recon::Quality> floor_;
    int iterations_ = 1;
    double first_cost_ = 0;
    double residual_min_ = 1, cost_min_ = 1;
    double psnr_min_ = 1e300, psnr_max_ = -1e300, error_max_ = 0;
};

}  // namespace studio
