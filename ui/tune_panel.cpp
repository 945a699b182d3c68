#include "ui/tune_panel.hpp"

#include <QComboBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>
#include <QSlider>
#include <QSpinBox>

#include <cmath>

#include "ui/reconstruction_controller.hpp"

namespace studio {

int TunePanel::sliderPosition(double lambda) {
    const double l = std::clamp(std::log10(std::max(lambda, 1e-300)), kMinLog10, kMaxLog10);
    return int(std::lround((l - kMinLog10) * kStepsPerDecade));
}

double TunePanel::lambdaAt(int position) { return std::pow(10.0, kMinLog10 + double(position) / kStepsPerDecade); }

TunePanel::TunePanel(ReconstructionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    setObjectName(QStringLiteral("tune-panel"));
    // The settings scroll when the screen is short; Reconstruct, Cancel and how the
    // image was started stay in view below them.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* settings = new QWidget(scroll);
    auto* form = new QFormLayout(settings);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    lambda_slider_ = new QSlider(Qt::Horizontal, this);
    lambda_slider_->setObjectName(QStringLiteral("lambda-slider"));
    lambda_slider_->setRange(0, int((kMaxLog10 - kMinLog10) * kStepsPerDecade));
    lambda_slider_->setPageStep(kStepsPerDecade / 5);
    lambda_slider_->setToolTip(tr("lambda on a logarithmic scale, %1 to %2")
                                   .arg(lambdaAt(lambda_slider_->minimum()), 0, 'g', 3)
                                   .arg(lambdaAt(lambda_slider_->maximum()), 0, 'g', 3));
    lambda_field_ = new QLineEdit(this);
    lambda_field_->setObjectName(QStringLiteral("lambda-field"));
    auto* validator = new QDoubleValidator(0.0, 1e6, 12, lambda_field_);
    validator->setNotation(QDoubleValidator::ScientificNotation);
    validator->setLocale(QLocale::c());
    lambda_field_->setValidator(validator);
    lambda_field_->setMaximumWidth(90);
    auto* lambda_row = new QHBoxLayout;
    lambda_row->addWidget(lambda_slider_, 1);
    lambda_row->addWidget(lambda_field_);
    form->addRow(tr("lambda:"), lambda_row);
    lambda_scale_ = new QLabel(this);
    lambda_scale_->setWordWrap(true);
    form->addRow(QString(), lambda_scale_);

    regularizer_ = new QComboBox(this);
    regularizer_->addItem(tr("Finite differences"), int(recon::RegularizerKind::FiniteDifference));
    regularizer_->addItem(tr("Tikhonov (identity)"), int(recon::RegularizerKind::Tikhonov));
    regularizer_->addItem(tr("Anatomically weighted"), int(recon::RegularizerKind::AnatomicalFiniteDifference));
    regularizer_->setItemData(2, tr("Finite differences that do not cross edges of the data set's reference image"),
                              Qt::ToolTipRole);
    regularizer_->addItem(tr("Total variation (sparse)"), int(recon::RegularizerKind::TotalVariation));
    regularizer_->addItem(tr("Wavelets, Haar (sparse)"), int(recon::RegularizerKind::Wavelet));
    regularizer_->addItem(tr("Anatomical TV (sparse)"), int(recon::RegularizerKind::AnatomicalTotalVariation));
    regularizer_->setItemData(3, tr("l1 of the image's gradient, solved by ADMM (one step per inner CG iteration)"),
                              Qt::ToolTipRole);
    regularizer_->setItemData(4, tr("l1 of Haar wavelet coefficients on a randomly shifted grid, solved by POGM"),
                              Qt::ToolTipRole);
    regularizer_->setItemData(5, tr("Total variation that does not penalise edges of the reference image (ADMM)"),
                              Qt::ToolTipRole);
    form->addRow(tr("Regulariser:"), regularizer_);
    data_term_ = new QComboBox(this);
    data_term_->setObjectName(QStringLiteral("data-term"));
    data_term_->addItem(tr("Least squares"), int(recon::DataWeighting::Uniform));
    data_term_->addItem(tr("Density-weighted"), int(recon::DataWeighting::Density));
    data_term_->setItemData(0, tr("||F x - d||^2: every sample counts alike"), Qt::ToolTipRole);
    data_term_->setItemData(1, tr("Least squares weighted by the density weights gridding uses: on measured data its early "
                                  "iterates are good images (BART's scans: BART's PSNR in 18-24 iterations, not 60) and a "
                                  "lambda change converges in a few. Another problem, with its own solution and its own s; "
                                  "on data that fit the model exactly (the demo cases) plain least squares ends better."),
                          Qt::ToolTipRole);
    data_term_->setToolTip(tr("The data term of the iterative solve (MR; reconstudio-cli --data-weighting)"));
    form->addRow(tr("Data term:"), data_term_);
    suggest_ = new QPushButton(tr("Suggest lambda"), this);
    suggest_->setObjectName(QStringLiteral("suggest-lambda-button"));
    suggest_->setToolTip(tr("Choose lambda from the data by the documented rule of the regulariser "
                            "(sparse: a fraction of the image's magnitude; quadratic: the discrepancy principle), "
                            "then solve from zero with it"));
    form->addRow(QString(), suggest_);
    auto_label_ = new QLabel(this);
    auto_label_->setObjectName(QStringLiteral("auto-lambda-label"));
    auto_label_->setWordWrap(true);
    form->addRow(QString(), auto_label_);

    iterations_ = new QSpinBox(this);
    iterations_->setRange(1, 2000);
    form->addRow(tr("Iterations:"), iterations_);

    coil_combination_ = new QComboBox(this);
    coil_combination_->setObjectName(QStringLiteral("coil-combination"));
    coil_combination_->addItem(tr("Sum of squares"), int(recon::CoilCombination::SumOfSquares));
    coil_combination_->addItem(tr("SENSE"), int(recon::CoilCombination::Sense));
    coil_combination_->setItemData(0, tr("Every coil solved on its own, the images combined by root sum of squares"),
                                   Qt::ToolTipRole);
    coil_combination_->setItemData(1, tr("One solve over all coils with their sensitivity maps (CG-SENSE): "
                                         "uses what the coils share"),
                                   Qt::ToolTipRole);
    coil_combination_->setToolTip(tr("How multi-coil data become one image"));
    form->addRow(tr("Coil combination:"), coil_combination_);
    coil_maps_ = new QComboBox(this);
    coil_maps_->setObjectName(QStringLiteral("coil-map-method"));
    coil_maps_->addItem(tr("ESPIRiT"), int(recon::CoilMapMethod::Espirit));
    coil_maps_->addItem(tr("Walsh"), int(recon::CoilMapMethod::Walsh));
    coil_maps_->addItem(tr("Low resolution"), int(recon::CoilMapMethod::LowResolution));
    coil_maps_->setItemData(0, tr("Uecker et al. 2014: eigenvectors of the calibration matrix's row space; the most accurate"),
                            Qt::ToolTipRole);
    coil_maps_->setItemData(1, tr("Walsh et al. 2000: adaptive combination, cheaper, almost as good"), Qt::ToolTipRole);
    coil_maps_->setItemData(2, tr("Low-resolution coil images divided by their root sum of squares: the fastest"),
                            Qt::ToolTipRole);
    coil_maps_->setToolTip(tr("How SENSE estimates the coil sensitivities from the data (shown in the Coil maps tab)"));
    form->addRow(tr("Coil maps:"), coil_maps_);
    virtual_coils_ = new QSpinBox(this);
    virtual_coils_->setObjectName(QStringLiteral("virtual-coils"));
    virtual_coils_->setRange(0, 0);
    virtual_coils_->setSpecialValueText(tr("all coils"));
    virtual_coils_->setToolTip(tr("Coil compression (PCA) to this many virtual coils, after noise prewhitening: "
                                  "fewer solves or a smaller SENSE system; the data panel shows the energy kept"));
    form->addRow(tr("Virtual coils:"), virtual_coils_);

    precision_ = new QComboBox(this);
    precision_->addItem(tr("float32"), int(recon::Precision::Single));
    precision_->addItem(tr("float64"), int(recon::Precision::Double));
    form->addRow(tr("Precision:"), precision_);

    backend_ = new QComboBox(this);
    backend_->addItem(tr("Auto (GPU if available)"), int(recon::BackendChoice::Auto));
    backend_->addItem(tr("CPU"), int(recon::BackendChoice::Cpu));
    backend_->addItem(tr("CUDA"), int(recon::BackendChoice::Cuda));
    form->addRow(tr("Backend:"), backend_);

    method_ = new QComboBox(this);
    method_->addItem(tr("backend default"), QString());
    form->addRow(tr("Fourier method:"), method_);

    reconstruct_ = new QPushButton(tr("Reconstruct"), this);
    reconstruct_->setObjectName(QStringLiteral("reconstruct-button"));
    reconstruct_->setToolTip(tr("Solve from a zero image: the same settings and data give the same image. "
                                "Changing lambda alone continues from the image shown (warm start) to tune quickly."));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("cancel-button"));
    scroll->setWidget(settings);
    scroll->setMinimumWidth(settings->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    outer->addWidget(scroll, 1);
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(9, 0, 9, 0);
    buttons->addWidget(reconstruct_);
    buttons->addWidget(cancel_);
    outer->addLayout(buttons);
    start_label_ = new QLabel(this);
    start_label_->setObjectName(QStringLiteral("start-label"));
    start_label_->setWordWrap(true);
    start_label_->setContentsMargins(9, 0, 9, 4);
    outer->addWidget(start_label_);

    // Edits -> controller.
    connect(lambda_slider_, &QSlider::valueChanged, this, [this](int position) {
        if (updating_) return;
        const double lambda = lambdaAt(position);
        lambda_field_->setText(QString::number(lambda, 'g', 3));
        edit([lambda](ReconSettings& s) { s.lambda = lambda; });
    });
    connect(lambda_field_, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const double lambda = QLocale::c().toDouble(lambda_field_->text(), &ok);
        if (!ok) return;
        lambda_field_->setModified(false);  // committed: from now on the field follows the controller
        edit([lambda](ReconSettings& s) { s.lambda = lambda; });
    });
    connect(regularizer_, &QComboBox::currentIndexChanged, this, [this] {
        const auto kind = recon::RegularizerKind(regularizer_->currentData().toInt());
        edit([kind](ReconSettings& s) {
            // A sparse lambda is a threshold in image units, a quadratic one a weight against s:
            // crossing between the two starts from the new kind's default.
            if (recon::isSparse(kind) != recon::isSparse(s.regularizer))
                s.lambda = recon::isSparse(kind) ? recon::defaultSparseLambda(kind) : ReconSettings{}.lambda;
            s.regularizer = kind;
        });
    });
    connect(data_term_, &QComboBox::currentIndexChanged, this, [this] {
        const auto w = recon::DataWeighting(data_term_->currentData().toInt());
        edit([w](ReconSettings& s) { s.weighting = w; });
    });
    connect(suggest_, &QPushButton::clicked, controller_, &ReconstructionController::suggestLambda);
    connect(controller_, &ReconstructionController::lambdaSuggested, this, &TunePanel::showAutoLambda);
    connect(iterations_, &QSpinBox::valueChanged, this, [this](int n) { edit([n](ReconSettings& s) { s.iterations = n; }); });
    connect(coil_combination_, &QComboBox::currentIndexChanged, this, [this] {
        const auto c = recon::CoilCombination(coil_combination_->currentData().toInt());
        edit([c](ReconSettings& s) { s.coil_combination = c; });
    });
    connect(coil_maps_, &QComboBox::currentIndexChanged, this, [this] {
        const auto m = recon::CoilMapMethod(coil_maps_->currentData().toInt());
        edit([m](ReconSettings& s) { s.coil_maps = m; });
    });
    connect(virtual_coils_, &QSpinBox::valueChanged, this, [this](int k) { edit([k](ReconSettings& s) { s.virtual_coils = k; }); });
    connect(precision_, &QComboBox::currentIndexChanged, this, [this] {
        const auto p = recon::Precision(precision_->currentData().toInt());
        edit([p](ReconSettings& s) { s.precision = p; });
    });
    connect(backend_, &QComboBox::currentIndexChanged, this, [this] {
        const auto b = recon::BackendChoice(backend_->currentData().toInt());
        edit([b](ReconSettings& s) { s.backend = b; });
    });
    connect(method_, &QComboBox::currentIndexChanged, this, [this] {
        const QString m = method_->currentData().toString();
        edit([m](ReconSettings& s) { s.method = m; });
    });
    connect(reconstruct_, &QPushButton::clicked, controller_, &ReconstructionController::reconstruct);
    connect(cancel_, &QPushButton::clicked, controller_, &ReconstructionController::cancel);

    // Controller -> panel.
    connect(controller_, &ReconstructionController::settingsChanged, this, &TunePanel::showSettings);
    connect(controller_, &ReconstructionController::backendChanged, this, &TunePanel::showBackend);
    connect(controller_, &ReconstructionController::datasetChanged, this, &TunePanel::showState);
    connect(controller_, &ReconstructionController::stateChanged, this, &TunePanel::showState);
    connect(controller_, &ReconstructionController::iterationAdvanced, this, &TunePanel::showStart);
    connect(controller_, &ReconstructionController::jobFinished, this, &TunePanel::showStart);
    connect(controller_, &ReconstructionController::datasetChanged, this, &TunePanel::showStart);
    showSettings(controller_->settings());
    showBackend();
    showState();
}

void TunePanel::edit(const std::function<void(ReconSettings&)>& change) {
    if (updating_) return;
    ReconSettings s = controller_->settings();
    change(s);
    controller_->setSettings(s);
}

void TunePanel::showSettings(const ReconSettings& s) {
    updating_ = true;
    lambda_slider_->setValue(sliderPosition(s.lambda));
    // The field shows the lambda the solve uses; only text being typed (not yet
    // committed) survives a change of some other setting.
    if (s.lambda != shown_lambda_ || !lambda_field_->isModified()) {
        lambda_field_->setText(QString::number(s.lambda, 'g', 3));
        lambda_field_->setModified(false);
        shown_lambda_ = s.lambda;
    }
    regularizer_->setCurrentIndex(regularizer_->findData(int(s.regularizer)));
    data_term_->setCurrentIndex(data_term_->findData(int(s.weighting)));
    showAutoLambda();
    iterations_->setValue(s.iterations);
    coil_combination_->setCurrentIndex(coil_combination_->findData(int(s.coil_combination)));
    coil_maps_->setCurrentIndex(coil_maps_->findData(int(s.coil_maps)));
    virtual_coils_->setValue(s.virtual_coils);
    precision_->setCurrentIndex(precision_->findData(int(s.precision)));
    backend_->setCurrentIndex(backend_->findData(int(s.backend)));
    const int m = method_->findData(s.method);
    method_->setCurrentIndex(m >= 0 ? m : 0);
    updating_ = false;
    showState();
}

void TunePanel::showAutoLambda() {
    const QString rule = controller_->lambdaRule();
    auto_label_->setText(rule.isEmpty() ? QString()
                                        : tr("auto: lambda = %1 (%2)").arg(controller_->settings().lambda, 0, 'g', 3).arg(rule));
}

void TunePanel::showBackend() {
    updating_ = true;
    const BackendReport& b = controller_->backend();
    method_->clear();
    method_->addItem(b.methods.isEmpty() ? tr("backend default") : tr("%1 (default)").arg(b.methods.front()),
                     QString());
    for (int i = 1; i < b.methods.size(); ++i) {
        method_->addItem(b.methods[i], b.methods[i]);
        method_->setItemData(i, b.method_descriptions.value(i), Qt::ToolTipRole);
    }
    const int m = method_->findData(controller_->settings().method);
    method_->setCurrentIndex(m >= 0 ? m : 0);
    updating_ = false;
}

void TunePanel::showState() {
    const bool busy = isActive(controller_->state());
    reconstruct_->setEnabled(controller_->hasDataset());
    cancel_->setEnabled(busy);
    // One coil, or a CT scan: nothing to combine.
    const bool multi_coil = controller_->hasDataset() && controller_->modality() == Modality::Mr && controller_->summary().coils > 1;
    coil_combination_->setEnabled(multi_coil);
    coil_maps_->setEnabled(multi_coil && controller_->settings().coil_combination == recon::CoilCombination::Sense);
    {
        const QSignalBlocker block(virtual_coils_);  // a smaller range must not edit the settings
        virtual_coils_->setRange(0, multi_coil ? controller_->summary().coils - 1 : 0);
        virtual_coils_->setValue(controller_->settings().virtual_coils);
    }
    virtual_coils_->setEnabled(multi_coil);
    data_term_->setEnabled(controller_->modality() == Modality::Mr);  // CT weights by its photon counts
    const double s = controller_->lambdaScale();
    if (controller_->modality() == Modality::Ct) {
        lambda_scale_->setText(s > 0 ? tr("penalty lambda * s * R(x), s = trace(A^T W A) / voxels = %1").arg(s, 0, 'g', 4)
                                     : tr("penalty lambda * s * R(x), s = trace(A^T W A) / voxels (at the first solve)"));
        return;
    }
    if (controller_->densityWeighted()) {
        lambda_scale_->setText(controller_->hasDataset() && s > 0
                                   ? tr("penalty lambda * s * ||W rho||^2, s = Q_D(0) = %1 (density-weighted)").arg(s, 0, 'g', 4)
                                   : tr("penalty lambda * s * ||W rho||^2, s = Q_D(0) (density-weighted; at the first solve)"));
        return;
    }
    lambda_scale_->setText(controller_->hasDataset()
                               ? tr("penalty lambda * s * ||W rho||^2, s = Q(0) = %1").arg(s, 0, 'g', 4)
                               : tr("penalty lambda * s * ||W rho||^2, s = Q(0)"));
}

void TunePanel::showStart() {
    const int total = controller_->totalIterations();
    if (total == 0) {
        start_label_->clear();
    } else if (controller_->warmStart()) {
        start_label_->setText(tr("Warm start (lambda tuning): continued from the previous image, "
                                 "%1 CG iterations since the last start from zero. Reconstruct starts from zero.")
                                  .arg(total));
    } else {
        start_label_->setText(tr("Started from zero: %1 CG iterations.").arg(total));
    }
}

}  // namespace studio
