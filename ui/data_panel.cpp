#include "ui/data_panel.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QLocale>

#include "recon/core/errors.hpp"
#include "ui/reconstruction_controller.hpp"

namespace studio {

DataPanel::DataPanel(ReconstructionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    setObjectName(QStringLiteral("data-panel"));
    // A grid, not a QFormLayout: the grid gives wrapped values the height they need.
    form_ = new QGridLayout(this);
    form_->setColumnStretch(1, 1);
    add(tr("Data set"));
    add(tr("Source"));
    add(tr("Matrix"));
    add(tr("Samples"));
    add(tr("Trajectory"));
    add(tr("Coils"));
    add(tr("Also has"));
    add(tr("Device"));
    add(tr("Memory needed"), tr("Image vectors, Q on the 2N grid and NUFFT grids at the chosen precision "
                                "(estimateReconstructionBytes)."));
    add(tr("k units"), tr("Trajectories are converted on reading; the source line says what was assumed."));
    add(tr("Basis phi"), tr("The Fourier transform of the voxel basis function in the forward model."));
    add(tr("lambda scale"), tr("The penalty is lambda * s * ||W rho||^2 with s = Q(0), the mean eigenvalue of "
                               "F^H F, so one lambda means the same trade-off on any data set."));
    form_->setRowStretch(form_->rowCount(), 1);  // rows packed at the top
    connect(controller_, &ReconstructionController::datasetChanged, this, &DataPanel::refresh);
    connect(controller_, &ReconstructionController::backendChanged, this, &DataPanel::refresh);
    connect(controller_, &ReconstructionController::settingsChanged, this, &DataPanel::refresh);
    refresh();
}

QLabel* DataPanel::add(const QString& name, const QString& tooltip) {
    auto* value = new QLabel(this);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    value->setToolTip(tooltip);
    auto* label = new QLabel(name + ':', this);
    label->setToolTip(tooltip);
    const int row = form_->rowCount();
    form_->addWidget(label, row, 0, Qt::AlignRight | Qt::AlignTop);
    form_->addWidget(value, row, 1);
    fields_[name] = value;
    return value;
}

QString DataPanel::field(const QString& name) const {
    auto it = fields_.find(name);
    return it == fields_.end() ? QString() : it->second->text();
}

void DataPanel::refresh() {
    const BackendReport& b = controller_->backend();
    fields_[tr("Device")]->setText(b.description.isEmpty() ? tr("(chosen at the first run)") : b.description);
    fields_[tr("Device")]->setToolTip(b.note);
    if (!controller_->hasDataset()) {
        for (const QString& f : {tr("Data set"), tr("Source"), tr("Matrix"), tr("Samples"), tr("Trajectory"),
                                 tr("Coils"), tr("Also has"), tr("Memory needed"), tr("k units"), tr("Basis phi"),
                                 tr("lambda scale")})
            fields_[f]->setText(QStringLiteral("-"));
        return;
    }
    const DatasetSummary& s = controller_->summary();
    const QLocale locale = QLocale::c();
    const auto& g = s.grid;
    fields_[tr("Data set")]->setText(s.name);
    fields_[tr("Source")]->setText(s.origin.isEmpty() ? s.source : s.origin + QStringLiteral("\n") + s.source);
    fields_[tr("Matrix")]->setText(QStringLiteral("%1 (%2D), FOV %3 mm")
                                       .arg(QString::fromStdString(g.describe()))
                                       .arg(g.dims)
                                       .arg(g.fov_mm[0], 0, 'g', 4));
    fields_[tr("Samples")]->setText(
        s.readout_length > 0
            ? QStringLiteral("%1 (%2 readouts x %3)").arg(locale.toString(s.samples)).arg(s.readouts).arg(s.readout_length)
            : locale.toString(s.samples));
    fields_[tr("Trajectory")]->setText(s.trajectory_kind.isEmpty() ? tr("unknown") : s.trajectory_kind);
    fields_[tr("Coils")]->setText(QString::number(s.coils));
    QStringList extras;
    if (s.has_truth) extras << tr("truth");
    if (s.has_reference) extras << tr("anatomical reference");
    if (s.has_density) extras << tr("density weights");
    fields_[tr("Also has")]->setText(extras.isEmpty() ? tr("nothing else") : extras.join(QStringLiteral(", ")));
    const bool single = controller_->settings().precision == recon::Precision::Single;
    fields_[tr("Memory needed")]->setText(
        QStringLiteral("%1 (%2)")
            .arg(QString::fromStdString(recon::OutOfMemory::humanBytes(std::size_t(single ? s.bytes_single : s.bytes_double))))
            .arg(single ? tr("float32") : tr("float64")));
    fields_[tr("k units")]->setText(tr("cycles per FOV; band [-N/2, N/2) per axis"));
    fields_[tr("Basis phi")]->setText(s.basis == QLatin1String("point") ? tr("point samples: phi = 1")
                                                                        : tr("box voxel: phi(k) = prod sinc(k/N)"));
    fields_[tr("lambda scale")]->setText(tr("s = Q(0) = sum |phi|^2 = %1").arg(s.lambda_scale, 0, 'g', 5));
}

}  // namespace studio
