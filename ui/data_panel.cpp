#include "ui/data_panel.hpp"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

#include "recon/core/errors.hpp"
#include "recon/ct/fdk.hpp"
#include "ui/coil_map_view_model.hpp"
#include "ui/reconstruction_controller.hpp"

namespace studio {

DataPanel::DataPanel(ReconstructionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    setObjectName(QStringLiteral("data-panel"));
    // A grid, not a QFormLayout: the grid gives wrapped values the height they need.
    form_ = new QGridLayout(this);
    form_->setColumnStretch(1, 1);
    add(tr("Data set"));
    addFrameChooser();
    add(tr("Source"));
    add(tr("Matrix"));
    add(tr("Samples"));
    add(tr("Trajectory"));
    add(tr("Coils"));
    add(tr("Virtual coils"), tr("Coil compression (PCA): the data's strongest singular vectors across coils, "
                                "and the fraction of the energy they keep."));
    add(tr("Prewhitening"), tr("Noise prewhitening with the covariance of the data set's noise scan "
                               "(Cholesky): the coils then have unit, uncorrelated noise."));
    add(tr("Coil maps"), tr("The sensitivities SENSE used (the Coil maps tab shows them)."));
    add(tr("Also has"));
    add(tr("Device"));
    add(tr("Memory needed"), tr("Image vectors, Q on the 2N grid and NUFFT grids at the chosen precision "
                                "(estimateReconstructionBytes)."));
    add(tr("k units"), tr("Trajectories are converted on reading; the source line says what was assumed."));
    add(tr("Basis phi"), tr("The Fourier transform of the voxel basis function in the forward model."));
    add(tr("lambda scale"), tr("The penalty is lambda * s * ||W rho||^2 with s = Q(0), the mean eigenvalue of "
                               "F^H F, so one lambda means the same trade-off on any data set."));
    // CT scans (shown instead of the trajectory, coils, k units and basis).
    add(tr("Geometry"), tr("Circular orbit, flat detector: source-isocentre D_so and source-detector D_sd "
                           "distances (docs/CONVENTIONS.md, \"Cone-beam CT\")."));
    add(tr("Detector"), tr("Columns (u) x rows (v), pixel pitch and offsets."));
    add(tr("Views"), tr("Projection angles and the range the source covers (full or short scan)."));
    add(tr("Volume"), tr("Reconstructed voxels and their size."));
    add(tr("Photons"), tr("Incident photons per detector pixel of a low-dose scan (Poisson noise); "
                          "the counts are the weights W of the iterative solve."));
    form_->setRowStretch(form_->rowCount(), 1);  // rows packed at the top
    connect(controller_, &ReconstructionController::datasetChanged, this, &DataPanel::refresh);
    connect(controller_, &ReconstructionController::backendChanged, this, &DataPanel::refresh);
    connect(controller_, &ReconstructionController::settingsChanged, this, &DataPanel::refresh);
    connect(controller_, &ReconstructionController::jobFinished, this, &DataPanel::refresh);  // CT's s
    connect(controller_, &ReconstructionController::coilMapsChanged, this, &DataPanel::refresh);
    refresh();
}

void DataPanel::addFrameChooser() {
    const QString tip = tr("The file holds several 2D problems (slices, stack-of-stars partitions, contrasts, "
                           "repetitions): each is reconstructed on its own. Choosing another reloads and "
                           "reconstructs it. reconstudio-cli recon reconstructs them all.");
    auto* row = new QWidget(this);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    frame_chooser_ = new QSpinBox(row);
    frame_chooser_->setObjectName(QStringLiteral("frame-chooser"));
    frame_chooser_->setToolTip(tip);
    frame_chooser_->setKeyboardTracking(false);  // typing "12" opens frame 12, not 1 first
    auto* name = new QLabel(row);
    name->setWordWrap(true);
    layout->addWidget(frame_chooser_);
    layout->addWidget(name, 1);
    auto* label = new QLabel(tr("Frame") + ':', this);
    label->setToolTip(tip);
    const int at = form_->rowCount();
    form_->addWidget(label, at, 0, Qt::AlignRight | Qt::AlignVCenter);
    form_->addWidget(row, at, 1);
    fields_[tr("Frame")] = name;
    labels_[tr("Frame")] = label;
    connect(frame_chooser_, &QSpinBox::valueChanged, controller_, &ReconstructionController::setFrame);
}

void DataPanel::refreshFrames() {
    const DatasetSummary& s = controller_->summary();
    const bool several = controller_->hasDataset() && s.frames > 1;
    labels_[tr("Frame")]->setVisible(several);
    frame_chooser_->parentWidget()->setVisible(several);
    if (!several) return;
    const QSignalBlocker quiet(frame_chooser_);  // showing the open frame is not a request for one
    frame_chooser_->setRange(0, s.frames - 1);
    frame_chooser_->setValue(s.frame);
    fields_[tr("Frame")]->setText(tr("%1 (of %2: %3)").arg(s.frame_name).arg(s.frames).arg(s.frame_counts));
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
    labels_[name] = label;
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
    showRows(controller_->modality() == Modality::Ct);
    refreshFrames();
    if (controller_->modality() == Modality::Ct) {
        refreshCt();
        return;
    }
    if (!controller_->hasDataset()) {
        for (const QString& f : {tr("Data set"), tr("Source"), tr("Matrix"), tr("Samples"), tr("Trajectory"),
                                 tr("Coils"), tr("Virtual coils"), tr("Prewhitening"), tr("Coil maps"), tr("Also has"), tr("Memory needed"), tr("k units"), tr("Basis phi"),
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
    showCoilProcessing();
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
    QString scale = tr("s = Q(0) = sum |phi|^2 = %1").arg(s.lambda_scale, 0, 'g', 5);
    if (controller_->densityWeighted()) {
        const double weighted = controller_->lambdaScale();
        scale = (weighted > 0 ? tr("density-weighted data term: s = Q_D(0) = sum w |phi|^2 = %1").arg(weighted, 0, 'g', 5)
                              : tr("density-weighted data term: s = Q_D(0) = sum w |phi|^2, at the first solve")) +
                tr(" (unweighted Q(0) = %1)").arg(s.lambda_scale, 0, 'g', 5);
    }
    fields_[tr("lambda scale")]->setText(scale);
}

void DataPanel::showCoilProcessing() {
    const DatasetSummary& s = controller_->summary();
    const QLocale locale = QLocale::c();
    const auto& prep = controller_->coilPreparation();
    fields_[tr("Virtual coils")]->setText(
        prep && prep->virtual_coils > 0
            ? tr("%1 of %2 coils (PCA), %3 % of the energy kept").arg(prep->virtual_coils).arg(prep->coils).arg(100 * prep->kept_energy, 0, 'f', 2)
        : s.coils > 1 ? tr("none: the %1 coils as they are").arg(s.coils)
                      : tr("none (one coil)"));
    fields_[tr("Prewhitening")]->setText(
        s.noise_samples > 0 ? tr("yes: noise covariance from %1 noise samples per coil").arg(locale.toString(s.noise_samples))
                            : tr("no: the data set has no noise scan"));
    const recon::CoilMaps* maps = controller_->coilMaps().get();
    const bool sense = controller_->settings().coil_combination == recon::CoilCombination::Sense;
    QString text;
    if (s.coils < 2) {
        text = tr("none (one coil)");
    } else if (maps) {
        text = tr("%1; mask %2 of %3 voxels%4")
                   .arg(describeCoilMapSource(maps->source))
                   .arg(locale.toString(qint64(std::count(maps->mask.begin(), maps->mask.end(), std::uint8_t(1)))))
                   .arg(locale.toString(qint64(maps->mask.size())))
                   .arg(sense ? QString() : tr(" (the last SENSE solve's; sum of squares is chosen now)"));
    } else {
        text = sense ? tr("%1, estimated at the next solve").arg(QString::fromStdString(recon::toString(controller_->settings().coil_maps)))
                     : tr("none: sum of squares needs no maps");
    }
    fields_[tr("Coil maps")]->setText(text);
}

void DataPanel::showRows(bool ct) {
    const QStringList mr_only{tr("Trajectory"), tr("Coils"), tr("Virtual coils"), tr("Prewhitening"), tr("Coil maps"), tr("Memory needed"), tr("k units"), tr("Basis phi")};
    const QStringList ct_only{tr("Geometry"), tr("Detector"), tr("Views"), tr("Volume"), tr("Photons")};
    for (const QString& f : mr_only) {
        fields_[f]->setVisible(!ct);
        labels_[f]->setVisible(!ct);
    }
    for (const QString& f : ct_only) {
        fields_[f]->setVisible(ct);
        labels_[f]->setVisible(ct);
    }
}

void DataPanel::refreshCt() {
    const DatasetSummary& s = controller_->summary();
    const recon::ct::CtGeometry& g = s.ct_geometry;
    const QLocale locale = QLocale::c();
    auto mm = [](double v) { return QString::number(v, 'g', 4); };
    fields_[tr("Data set")]->setText(s.name);
    fields_[tr("Source")]->setText(s.origin.isEmpty() ? s.source : s.origin + QStringLiteral("\n") + s.source);
    fields_[tr("Matrix")]->setText(QStringLiteral("%1 (%2D), FOV %3 mm")
                                       .arg(QString::fromStdString(s.grid.describe()))
                                       .arg(s.grid.dims)
                                       .arg(s.grid.fov_mm[0], 0, 'g', 4));
    fields_[tr("Samples")]->setText(tr("%1 projection values (%2 views x %3 pixels)")
                                        .arg(locale.toString(s.samples))
                                        .arg(s.readouts)
                                        .arg(s.readout_length));
    fields_[tr("Geometry")]->setText(tr("%1, D_so %2 mm, D_sd %3 mm, magnification %4")
                                         .arg(s.trajectory_kind, mm(g.beam.source_to_isocentre_mm),
                                              mm(g.beam.source_to_detector_mm),
                                              QString::number(g.beam.source_to_detector_mm / g.beam.source_to_isocentre_mm, 'g', 4)));
    QString detector = tr("%1 x %2 pixels of %3 x %4 mm")
                           .arg(g.beam.detector_columns)
                           .arg(g.beam.detector_rows)
                           .arg(mm(g.beam.pixel_u_mm), mm(g.beam.pixel_v_mm));
    if (g.beam.offset_u_mm != 0 || g.beam.offset_v_mm != 0)
        detector += tr(", offset (%1, %2) mm").arg(mm(g.beam.offset_u_mm), mm(g.beam.offset_v_mm));
    fields_[tr("Detector")]->setText(detector);
    const auto& angles = g.beam.angles_rad;
    const double step = angles.size() > 1 ? (angles.back() - angles.front()) / double(angles.size() - 1) : 0;
    // A full scan covers views x step (the last view is one step short of 360 deg); a short scan its first to last.
    const bool full = recon::ct::fullScan(g.beam);
    const double range_deg = (full ? step * double(angles.size()) : angles.back() - angles.front()) * 180.0 / 3.14159265358979;
    fields_[tr("Views")]->setText(tr("%1 over %2 deg (%3), from %4 deg")
                                      .arg(angles.size())
                                      .arg(QString::number(range_deg, 'f', 1))
                                      .arg(full ? tr("full scan") : tr("short scan, Parker weights"))
                                      .arg(QString::number(angles.empty() ? 0.0 : angles.front() * 180.0 / 3.14159265358979, 'f', 1)));
    fields_[tr("Volume")]->setText(tr("%1 x %2 x %3 voxels of %4 x %5 x %6 mm")
                                       .arg(g.volume.size[0])
                                       .arg(g.volume.size[1])
                                       .arg(g.volume.size[2])
                                       .arg(mm(g.volume.voxel_mm[0]), mm(g.volume.voxel_mm[1]), mm(g.volume.voxel_mm[2])));
    fields_[tr("Photons")]->setText(s.ct_photons > 0 ? tr("%1 per pixel (low dose, W = counts)").arg(locale.toString(s.ct_photons, 'g', 6))
                                                     : tr("noiseless (W = I)"));
    fields_[tr("Also has")]->setText(s.has_truth ? tr("truth (analytic phantom, 1/mm)") : tr("nothing else"));
    fields_[tr("lambda scale")]->setText(s.lambda_scale > 0
                                             ? tr("s = trace(A^T W A) / voxels = %1").arg(s.lambda_scale, 0, 'g', 5)
                                             : tr("s = trace(A^T W A) / voxels (computed at the first solve)"));
}

}  // namespace studio
