#include "ui/convergence_plot.hpp"

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QHBoxLayout>

#include <algorithm>
#include <cmath>

namespace studio {

namespace {

// Integer iteration ticks at 1, 2 or 5 times a power of ten, about eight of them.
void setIterationRange(QValueAxis* axis, int iterations) {
    double step = 1;
    while (iterations / step > 8) {
        for (double f : {2.0, 2.5, 2.0}) {
            step *= f;
            if (iterations / step <= 8) break;
        }
    }
    // The interval first: a long range with the previous short interval would make
    // Qt Charts create a tick item per step (tens of thousands) on the way.
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(std::max(1.0, std::round(step)));
    axis->setRange(0, iterations);
}

QChart* makeChart(const QString& title) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    return chart;
}

}  // namespace

ConvergencePlot::ConvergencePlot(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("convergence"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    QChart* convergence = makeChart(tr("Convergence"));
    iteration_axis_ = new QValueAxis;
    iteration_axis_->setTitleText(tr("CG iteration"));
    iteration_axis_->setLabelFormat("%d");
    relative_axis_ = new QLogValueAxis;
    relative_axis_->setBase(10);
    relative_axis_->setLabelFormat("%.0e");
    relative_axis_->setTitleText(tr("relative"));
    convergence->addAxis(iteration_axis_, Qt::AlignBottom);
    convergence->addAxis(relative_axis_, Qt::AlignLeft);
    for (auto* s : {makeSeries(convergence, "residual", tr("residual ||b - Ax|| / ||b||"), QColor(31, 119, 180)),
                    makeSeries(convergence, "cost", tr("cost / initial cost"), QColor(255, 127, 14))}) {
        s->attachAxis(iteration_axis_);
        s->attachAxis(relative_axis_);
    }
    convergence_view_ = new QChartView(convergence, this);
    convergence_view_->setRenderHint(QPainter::Antialiasing);

    QChart* quality = makeChart(tr("Against the truth"));
    quality_iteration_axis_ = new QValueAxis;
    quality_iteration_axis_->setTitleText(tr("CG iteration"));
    quality_iteration_axis_->setLabelFormat("%d");
    psnr_axis_ = new QValueAxis;
    psnr_axis_->setTitleText(tr("PSNR (dB)"));
    error_axis_ = new QValueAxis;
    error_axis_->setTitleText(tr("error (%)"));
    quality->addAxis(quality_iteration_axis_, Qt::AlignBottom);
    quality->addAxis(psnr_axis_, Qt::AlignLeft);
    quality->addAxis(error_axis_, Qt::AlignRight);
    auto attach = [&](QLineSeries* s, QValueAxis* y) {
        s->attachAxis(quality_iteration_axis_);
        s->attachAxis(y);
    };
    attach(makeSeries(quality, "psnr", tr("PSNR"), QColor(44, 160, 44)), psnr_axis_);
    attach(makeSeries(quality, "error", tr("error"), QColor(214, 39, 40)), error_axis_);
    attach(makeSeries(quality, "ref-" + layerKey(Layer::GriddingTrilinear), tr("trilinear"),
                      QColor(127, 127, 127), true),
           psnr_axis_);
    attach(makeSeries(quality, "ref-" + layerKey(Layer::GriddingKaiserBessel), tr("Kaiser-Bessel"),
                      QColor(148, 103, 189), true),
           psnr_axis_);
    {
        QLineSeries* floor = makeSeries(quality, "ref-floor", tr("floor"), QColor(23, 190, 207), true);
        QPen pen = floor->pen();
        pen.setStyle(Qt::DotLine);
        floor->setPen(pen);
        attach(floor, psnr_axis_);
    }
    quality_view_ = new QChartView(quality, this);
    quality_view_->setRenderHint(QPainter::Antialiasing);

    layout->addWidget(convergence_view_);
    layout->addWidget(quality_view_);
    flush_timer_.setSingleShot(true);
    flush_timer_.setInterval(kFlushMs);
    connect(&flush_timer_, &QTimer::timeout, this, &ConvergencePlot::flush);
    reset(30);
}

QLineSeries* ConvergencePlot::makeSeries(QChart* chart, const QString& key, const QString& name, QColor colour,
                                         bool dashed) {
    auto* s = new QLineSeries;
    s->setName(name);
    QPen pen(colour, 2);
    if (dashed) pen.setStyle(Qt::DashLine);
    s->setPen(pen);
    chart->addSeries(s);
    series_[key] = s;
    return s;
}

int ConvergencePlot::pointCount(const QString& key) const {
    if (auto it = points_.find(key); it != points_.end()) return int(it->second.size());
    auto it = series_.find(key);
    return it == series_.end() ? -1 : int(it->second->count());
}

QPointF ConvergencePlot::point(const QString& key, int index) const { return points_.at(key).at(std::size_t(index)); }

void ConvergencePlot::append(const QString& key, double x, double y) {
    points_[key].emplace_back(x, y);
    if (!flush_timer_.isActive()) flush_timer_.start();
}

void ConvergencePlot::flush() {
    for (auto& [key, points] : points_) {
        // Long histories are drawn decimated (every k-th point and the last): a
        // chart's cost grows with its points, and a few hundred show the trend.
        const std::size_t stride = (points.size() + kMaxDrawnPoints - 1) / kMaxDrawnPoints;
        QList<QPointF> drawn;
        drawn.reserve(qsizetype(std::min(points.size(), kMaxDrawnPoints + 1)));
        for (std::size_t i = 0; i < points.size(); i += std::max<std::size_t>(stride, 1)) drawn.append(points[i]);
        if (!points.empty() && drawn.back() != points.back()) drawn.append(points.back());
        QLineSeries* s = series_.at(key);
        if (s->count() != drawn.size() || (!drawn.isEmpty() && s->at(s->count() - 1) != drawn.back())) s->replace(drawn);
    }
}

void ConvergencePlot::reset(int iterations, int iterations_before, double cost_reference) {
    iterations_ = std::max(1, iterations);
    first_cost_ = cost_reference > 0 ? cost_reference : 0;
    const QString axis = iterations_before > 0
                             ? tr("CG iteration of a warm start (%1 before it)").arg(iterations_before)
                             : tr("CG iteration");
    iteration_axis_->setTitleText(axis);
    quality_iteration_axis_->setTitleText(axis);
    residual_min_ = cost_min_ = 1;
    psnr_min_ = 1e300;
    psnr_max_ = -1e300;
    error_max_ = 0;
    flush_timer_.stop();
    for (const char* key : {"residual", "cost", "psnr", "error"}) {
        series_[key]->clear();
        points_[key].clear();
    }
    setIterationRange(iteration_axis_, iterations_);
    setIterationRange(quality_iteration_axis_, iterations_);
    relative_axis_->setRange(1e-3, 1);
    psnr_axis_->setRange(0, 40);
    error_axis_->setRange(0, 100);
    // The griddings' and the floor's lines outlive a solve: keep them inside the range.
    for (const auto& [layer, q] : references_) {
        psnr_min_ = std::min(psnr_min_, q.psnr_db);
        psnr_max_ = std::max(psnr_max_, q.psnr_db);
    }
    if (floor_) {
        psnr_min_ = std::min(psnr_min_, floor_->psnr_db);
        psnr_max_ = std::max(psnr_max_, floor_->psnr_db);
    }
    updateReferenceLines();
    updateQualityAxes();
}

QString ConvergencePlot::iterationAxisTitle() const { return iteration_axis_->titleText(); }

std::pair<double, double> ConvergencePlot::psnrRange() const { return {psnr_axis_->min(), psnr_axis_->max()}; }

QList<QChart*> ConvergencePlot::charts() const { return {convergence_view_->chart(), quality_view_->chart()}; }

void ConvergencePlot::addRecord(const recon::IterationRecord& r) {
    if (r.iteration > iterations_) {
        iterations_ = r.iteration;
        setIterationRange(iteration_axis_, iterations_);
        setIterationRange(quality_iteration_axis_, iterations_);
        updateReferenceLines();
    }
    // A log axis shows positive values only; a residual of exactly zero is skipped.
    const double low_before = std::min(residual_min_, cost_min_);
    if (r.residual > 0) {
        append("residual", r.iteration, r.residual);
        residual_min_ = std::min(residual_min_, r.residual);
    }
    if (first_cost_ <= 0) first_cost_ = r.cost();
    if (first_cost_ > 0 && r.cost() > 0) {
        const double c = r.cost() / first_cost_;
        append("cost", r.iteration, c);
        cost_min_ = std::min(cost_min_, c);
    }
    const double low = std::min(residual_min_, cost_min_);
    if (low < low_before) relative_axis_->setRange(std::pow(10.0, std::floor(std::log10(low))), 1.5);
    if (r.has_truth) {
        append("psnr", r.iteration, r.psnr_db);
        append("error", r.iteration, r.error_percent);
        const bool wider = r.psnr_db < psnr_min_ || r.psnr_db > psnr_max_ || r.error_percent > error_max_;
        psnr_min_ = std::min(psnr_min_, r.psnr_db);
        psnr_max_ = std::max(psnr_max_, r.psnr_db);
        error_max_ = std::max(error_max_, r.error_percent);
        if (wider) updateQualityAxes();
    }
}

void ConvergencePlot::setReference(Layer gridding, const recon::Quality& q) {
    references_[gridding] = q;
    psnr_min_ = std::min(psnr_min_, q.psnr_db);
    psnr_max_ = std::max(psnr_max_, q.psnr_db);
    updateReferenceLines();
    updateQualityAxes();
}

void ConvergencePlot::setFloor(const recon::Quality& q) {
    floor_ = q;
    psnr_min_ = std::min(psnr_min_, q.psnr_db);
    psnr_max_ = std::max(psnr_max_, q.psnr_db);
    updateReferenceLines();
    updateQualityAxes();
}

void ConvergencePlot::setFloorName(const QString& name) { nameSeries(series_["ref-floor"], name); }

void ConvergencePlot::setReferenceName(Layer gridding, const QString& name) {
    nameSeries(series_["ref-" + layerKey(gridding)], name);
}

void ConvergencePlot::nameSeries(QLineSeries* s, const QString& name) {
    if (!s) return;
    s->setName(name);
    if (s->chart())  // an unnamed line is left out of the legend
        for (QLegendMarker* m : s->chart()->legend()->markers(s)) m->setVisible(!name.isEmpty());
}

void ConvergencePlot::clearReferences() {
    references_.clear();
    floor_.reset();
    updateReferenceLines();
}

void ConvergencePlot::updateReferenceLines() {
    for (Layer l : {Layer::GriddingTrilinear, Layer::GriddingKaiserBessel}) {
        QLineSeries* s = series_["ref-" + layerKey(l)];
        s->clear();
        if (auto it = references_.find(l); it != references_.end())
            s->append({QPointF(0, it->second.psnr_db), QPointF(iterations_, it->second.psnr_db)});
    }
    QLineSeries* floor = series_["ref-floor"];
    floor->clear();
    if (floor_) floor->append({QPointF(0, floor_->psnr_db), QPointF(iterations_, floor_->psnr_db)});
}

void ConvergencePlot::updateQualityAxes() {
    if (psnr_max_ < psnr_min_) return;
    psnr_axis_->setRange(std::floor(psnr_min_ / 5) * 5 - 1, std::ceil(psnr_max_ / 5) * 5 + 1);
    error_axis_->setRange(0, std::max(5.0, std::ceil(error_max_ / 10) * 10));
}

}  // namespace studio
