#include "ui/main_window.hpp"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleValidator>
#include <QLineEdit>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "recon/core/conventions.hpp"
#include "recon/core/version.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/sense/coil_maps.hpp"
#include "recon/session/demo_cases.hpp"
#include "recon/session/reconstruction.hpp"
#include "ui/sinogram_view.hpp"
#include "ui/coil_map_view.hpp"
#include "ui/comparison_grid.hpp"
#include "ui/convergence_plot.hpp"
#include "ui/data_panel.hpp"
#include "ui/dicom_export.hpp"
#include "ui/exports.hpp"
#include "ui/measurement_panel.hpp"
#include "ui/pin_panel.hpp"
#include "ui/slice_view.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/tune_panel.hpp"
#ifdef RECONSTUDIO_HAVE_VTK_VIEWS
#include "ui/three_d_panel.hpp"
#endif

namespace studio {

namespace {

constexpr int kMaxRecentFiles = 8;

QString humanSeconds(double s) {
    if (s < 0) return QStringLiteral("?");
    if (s < 60) return QStringLiteral("%1 s").arg(std::ceil(s));
    return QStringLiteral("%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}

// The engine lists its formats as file-dialog filters ("BART (*.cfl *.hdr)").
QStringList fileFilters(const std::vector<std::string>& formats) {
    QStringList out;
    for (const auto& f : formats) out << QString::fromStdString(f);
    return out;
}

// The session's phase names are terse; the status bar says what they mean.
QString describePhase(const QString& phase) {
    if (phase == QLatin1String("Q")) return QObject::tr("Computing Q (the Toeplitz kernel, once per trajectory)");
    if (phase == QLatin1String("F^H d")) return QObject::tr("Computing F^H d (once per data)");
    if (phase == QLatin1String("CG")) return QObject::tr("Conjugate gradient");
    if (phase == QLatin1String("FDK")) return QObject::tr("FDK (filtered backprojection, once per scan)");
    return phase;
}

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent) : QMainWindow(parent), options_(options) {
    setObjectName(QStringLiteral("main-window"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/reconstudio.png")));
    setAcceptDrops(true);
    controller_ = new ReconstructionController(this);
    model_ = new SliceViewModel(this);

    tabs_ = new QTabWidget(this);
    comparison_ = new ComparisonGrid(&controller_->layers(), model_, tabs_);
    tabs_->addTab(comparison_, tr("Compare"));
    pin_panel_ = new PinPanel(controller_, model_, tabs_);
    tabs_->addTab(pin_panel_, tr("Pinned A/B"));
    sinogram_model_ = new SinogramViewModel(this);
    sinogram_view_ = new SinogramView(sinogram_model_, tabs_);
    sinogram_tab_index_ = tabs_->addTab(sinogram_view_, tr("Sinogram"));
    tabs_->setTabVisible(sinogram_tab_index_, false);  // CT data sets only
    coil_map_model_ = new CoilMapViewModel(model_, this);
    coil_map_view_ = new CoilMapView(coil_map_model_, tabs_);
    coil_map_tab_index_ = tabs_->addTab(coil_map_view_, tr("Coil maps"));
    tabs_->setTabVisible(coil_map_tab_index_, false);  // multi-coil MR data only
#ifdef RECONSTUDIO_HAVE_VTK_VIEWS
    if (options_.enable_3d) {
        three_d_ = new ThreeDPanel(controller_, model_, tabs_);
        tabs_->addTab(three_d_, tr("3D"));
    }
#endif
    setCentralWidget(tabs_);

    buildActions();
    buildMenus();
    buildToolBar();
    buildDocks();
    buildStatusBar();
    connectController();
    if (options_.persist_settings) restoreSettings();
    updateTitle();
    showState(controller_->state());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions() {
    QStyle* s = style();
    open_action_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open..."), this);
    open_action_->setShortcut(QKeySequence::Open);
    open_action_->setToolTip(tr("Open a data set: %1").arg(fileFilters(recon::supportedInputFormats()).join(", ")));
    connect(open_action_, &QAction::triggered, this, [this] {
        QStringList filters = fileFilters(recon::supportedInputFormats());
        filters << tr("All files (*)");
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open data set"), dialogDirectory(), filters.join(QStringLiteral(";;")));
        if (!path.isEmpty()) openFile(path);
    });

    reconstruct_action_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Reconstruct"), this);
    reconstruct_action_->setShortcut(Qt::Key_F5);
    reconstruct_action_->setToolTip(tr("Reconstruct from zero: the same settings and data give the same image"));
    connect(reconstruct_action_, &QAction::triggered, controller_, &ReconstructionController::reconstruct);
    pin_action_ = new QAction(tr("&Pin Current Image"), this);
    pin_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    pin_action_->setToolTip(tr("Keep the iterative image shown now and compare the next solves with it (Pinned A/B tab)"));
    connect(pin_action_, &QAction::triggered, this, [this] {
        pin_panel_->pinNow();
        tabs_->setCurrentWidget(pin_panel_);
    });
    cancel_action_ = new QAction(s->standardIcon(QStyle::SP_MediaStop), tr("&Cancel"), this);
    cancel_action_->setShortcut(Qt::Key_Escape);
    cancel_action_->setToolTip(tr("Stop at the next iteration; the last complete image stays"));
    connect(cancel_action_, &QAction::triggered, controller_, &ReconstructionController::cancel);

    auto saveAction = [this](const QString& text, const QString& title, const QString& filter, auto save) {
        auto* a = new QAction(text, this);
        connect(a, &QAction::triggered, this, [this, title, filter, save] {
            const QString path = QFileDialog::getSaveFileName(this, title, dialogDirectory(), filter);
            if (path.isEmpty()) return;
            last_directory_ = QFileInfo(path).absolutePath();
            QString error;
            if (!save(path, &error)) showError(title, error);
        });
        return a;
    };
    save_images_action_ = saveAction(tr("Save &Images..."), tr("Save images"),
                                     fileFilters(recon::supportedOutputFormats()).join(QStringLiteral(";;")),
                                     [this](const QString& p, QString* e) { return saveImages(p, e); });
    save_images_action_->setShortcut(QKeySequence::Save);
    save_png_action_ = saveAction(tr("Save &Comparison as PNG..."), tr("Save comparison"), tr("PNG image (*.png)"),
                                  [this](const QString& p, QString* e) {
                                      if (saveComparisonPng(p)) return true;
                                      *e = tr("Could not write %1").arg(p);
                                      return false;
                                  });
    save_csv_action_ = saveAction(tr("Save Con&vergence as CSV..."), tr("Save convergence"), tr("CSV (*.csv)"),
                                  [this](const QString& p, QString* e) { return saveConvergenceCsv(p, e); });
    save_settings_action_ = saveAction(tr("Save &Settings..."), tr("Save settings"), tr("JSON (*.json)"),
                                       [this](const QString& p, QString* e) { return saveSettings(p, e); });
    export_dicom_action_ = new QAction(tr("Export &DICOM..."), this);
    export_dicom_action_->setToolTip(tr("Every image shown as a DICOM MR series (one folder per image) in a new folder"));
    connect(export_dicom_action_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export DICOM into a new folder"), dialogDirectory(),
                                                          QString(), nullptr, QFileDialog::ShowDirsOnly);
        if (path.isEmpty()) return;
        last_directory_ = QFileInfo(path).absolutePath();
        QString error;
        if (!exportDicom(path, &error)) showError(tr("Export DICOM"), error);
    });
    load_settings_action_ = new QAction(tr("&Load Settings..."), this);
    connect(load_settings_action_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Load settings"), dialogDirectory(), tr("JSON (*.json)"));
        QString error;
        if (!path.isEmpty() && !loadSettings(path, &error)) showError(tr("Load settings"), error);
    });
    quit_action_ = new QAction(tr("&Quit"), this);
    quit_action_->setShortcut(QKeySequence::Quit);
    connect(quit_action_, &QAction::triggered, this, &QWidget::close);

    auto_wl_action_ = new QAction(tr("&Auto Window/Level"), this);
    auto_wl_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    auto_wl_action_->setToolTip(tr("Window/level from the 0.5-99.5 percentiles of the current slice"));
    connect(auto_wl_action_, &QAction::triggered, this, [this] {
        for (Layer l : {Layer::Truth, Layer::Iterative, Layer::GriddingKaiserBessel}) {
            if (const LayerImage* image = controller_->layers().get(l)) {
                model_->setWindowLevel(percentileWindow(
                    extractSlice(image->volume, model_->orientation(), model_->slice(), model_->displayMode())));
                return;
            }
        }
    });
    reset_view_action_ = new QAction(tr("&Reset Zoom and Pan"), this);
    reset_view_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    connect(reset_view_action_, &QAction::triggered, model_, &SliceViewModel::resetView);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(open_action_);
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    demo_menu_ = file->addMenu(tr("&Demo Cases"));
    for (const recon::CaseSpec& c : recon::demoCases()) {
        const QString name = QString::fromStdString(c.name);
        QAction* a = demo_menu_->addAction(name);
        a->setToolTip(tr("Analytic Shepp-Logan phantom, %1, %2")
                          .arg(QString::fromStdString(recon::toString(c.trajectory.kind)))
                          .arg(c.snr_db > 0 ? tr("SNR %1 dB").arg(c.snr_db) : tr("noiseless")));
        connect(a, &QAction::triggered, this, [this, name] { openDemo(name); });
    }
    demo_menu_->addSeparator();
    for (const recon::ct::CtCase& c : recon::ct::ctDemoCases()) {
        const QString name = QString::fromStdString(c.name);
        QAction* a = demo_menu_->addAction(name);
        a->setToolTip(QString::fromStdString(c.description));
        connect(a, &QAction::triggered, this, [this, name] { openDemo(name); });
    }
    demo_menu_->setToolTipsVisible(true);
    file->addSeparator();
    file->addAction(save_images_action_);
    file->addAction(save_png_action_);
    file->addAction(save_csv_action_);
    file->addAction(save_settings_action_);
    file->addAction(export_dicom_action_);
    file->addAction(load_settings_action_);
    addBatchActions(file);
    file->addSeparator();
    file->addAction(quit_action_);

    QMenu* recon_menu = menuBar()->addMenu(tr("&Reconstruction"));
    recon_menu->addAction(reconstruct_action_);
    recon_menu->addAction(cancel_action_);
    recon_menu->addSeparator();
    recon_menu->addAction(pin_action_);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QMenu* orientation = view->addMenu(tr("&Orientation"));
    auto* orientation_group = new QActionGroup(this);
    int key = Qt::Key_1;
    for (Orientation o : {Orientation::Axial, Orientation::Coronal, Orientation::Sagittal}) {
        QAction* a = orientation->addAction(toString(o));
        a->setCheckable(true);
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(key++)));
        a->setChecked(o == model_->orientation());
        orientation_group->addAction(a);
        connect(a, &QAction::triggered, model_, [this, o] { model_->setOrientation(o); });
        connect(model_, &SliceViewModel::orientationChanged, a, [a, o](Orientation now) { a->setChecked(now == o); });
    }
    view->addAction(auto_wl_action_);
    view->addAction(reset_view_action_);
    QMenu* presets = view->addMenu(tr("Window/Level &Presets"));
    for (const QString& p : SliceViewModel::presetNames())
        connect(presets->addAction(p), &QAction::triggered, model_, [this, p] { model_->applyPreset(p); });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Mouse and Keys"), this, [this] {
        QMessageBox::information(
            this, tr("Mouse and keys"),
            tr("<table>"
               "<tr><td>Wheel, Up/Down</td><td>next / previous slice (all views)</td></tr>"
               "<tr><td>Ctrl + wheel, +/-</td><td>zoom</td></tr>"
               "<tr><td>Middle drag, Shift + left drag</td><td>pan</td></tr>"
               "<tr><td>Right drag</td><td>window (left/right) and level (up/down)</td></tr>"
               "<tr><td>Right double-click, A</td><td>auto window/level</td></tr>"
               "<tr><td>Left click or drag</td><td>cursor, with its value in every view</td></tr>"
               "<tr><td>R, Ctrl+0</td><td>reset zoom and pan</td></tr>"
               "<tr><td>Ctrl+1/2/3</td><td>axial / coronal / sagittal</td></tr>"
               "</table>"));
    });
    help->addAction(tr("&About ReconStudio"), this,
                    [this] { QMessageBox::about(this, tr("About ReconStudio"), aboutText()); });
}

QString MainWindow::aboutText() {
    return tr("<h3>ReconStudio %1</h3><p>Non-Cartesian MRI reconstruction: gridding and the "
              "iterative regularised least-squares method of Stone et al. (2008), "
              "compared side by side.</p>"
              "<p><b>Not for diagnostic use.</b> ReconStudio is research software; its images "
              "must not be used to diagnose or treat patients.</p><p>Qt %2</p>")
        .arg(QStringLiteral(RECONSTUDIO_VERSION))
        .arg(QString::fromLatin1(qVersion()));
}

void MainWindow::buildToolBar() {
    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("main-toolbar"));
    bar->addAction(open_action_);
    auto* demo_button = new QAction(style()->standardIcon(QStyle::SP_FileDialogContentsView), tr("Demo"), this);
    demo_button->setMenu(demo_menu_);
    connect(demo_button, &QAction::triggered, this, [this] {
        openDemo(last_demo_.isEmpty() ? QStringLiteral("default") : last_demo_);
    });
    bar->addAction(demo_button);
    bar->addSeparator();
    bar->addAction(reconstruct_action_);
    bar->addAction(cancel_action_);
    bar->addSeparator();

    auto combo = [this, bar](const QString& tip) {
        auto* box = new QComboBox(this);
        box->setToolTip(tip);
        bar->addWidget(box);
        return box;
    };
    orientation_box_ = combo(tr("Slice orientation"));
    for (Orientation o : {Orientation::Axial, Orientation::Coronal, Orientation::Sagittal})
        orientation_box_->addItem(toString(o), int(o));
    connect(orientation_box_, &QComboBox::activated, this,
            [this] { model_->setOrientation(Orientation(orientation_box_->currentData().toInt())); });
    connect(model_, &SliceViewModel::orientationChanged, this,
            [this](Orientation o) { orientation_box_->setCurrentIndex(orientation_box_->findData(int(o))); });

    mode_box_ = combo(tr("What to show of the complex images"));
    for (DisplayMode m : {DisplayMode::Magnitude, DisplayMode::Phase, DisplayMode::Real, DisplayMode::Imaginary})
        mode_box_->addItem(toString(m), int(m));
    connect(mode_box_, &QComboBox::activated, this,
            [this] { model_->setDisplayMode(DisplayMode(mode_box_->currentData().toInt())); });

    colormap_box_ = combo(tr("Colour map"));
    for (ColorMap c : {ColorMap::Gray, ColorMap::Hot, ColorMap::Viridis, ColorMap::CoolWarm})
        colormap_box_->addItem(toString(c), int(c));
    connect(colormap_box_, &QComboBox::activated, this,
            [this] { model_->setColorMap(ColorMap(colormap_box_->currentData().toInt())); });
    connect(model_, &SliceViewModel::displayChanged, this, [this] {
        mode_box_->setCurrentIndex(mode_box_->findData(int(model_->displayMode())));
        colormap_box_->setCurrentIndex(colormap_box_->findData(int(model_->colorMap())));
    });

    preset_box_ = combo(tr("Window/level preset (right drag in a view adjusts it)"));
    preset_box_->addItems(SliceViewModel::presetNames());
    connect(preset_box_, &QComboBox::activated, this, [this] {
        if (SliceViewModel::presetNames().contains(preset_box_->currentText())) model_->applyPreset(preset_box_->currentText());
    });
    // Window and level as numbers: they follow drags and presets, and take typed values.
    auto number = [this, bar](const QString& label, const QString& tip) {
        bar->addWidget(new QLabel(label, this));
        auto* field = new QLineEdit(this);
        field->setToolTip(tip);
        auto* validator = new QDoubleValidator(field);
        validator->setLocale(QLocale::c());
        field->setValidator(validator);
        field->setMaximumWidth(fontMetrics().horizontalAdvance(QStringLiteral("-0.00000")) + 16);
        bar->addWidget(field);
        return field;
    };
    window_field_ = number(tr(" W "), tr("Window: the width of the displayed value range (in the image's units)"));
    level_field_ = number(tr(" L "), tr("Level: the centre of the displayed value range (in the image's units)"));
    auto typed = [this] {
        bool ok_w = false, ok_l = false;
        const double window = QLocale::c().toDouble(window_field_->text(), &ok_w);
        const double level = QLocale::c().toDouble(level_field_->text(), &ok_l);
        if (ok_w && ok_l && window > 0) model_->setWindowLevel({window, level});
    };
    connect(window_field_, &QLineEdit::editingFinished, this, typed);
    connect(level_field_, &QLineEdit::editingFinished, this, typed);
    auto showWindowLevel = [this] {
        const WindowLevel wl = model_->windowLevel();
        const double scale = model_->displayMode() == DisplayMode::Phase ? recon::kPi : model_->intensityMax();
        window_field_->setText(formatReadout(wl.window, scale));
        level_field_->setText(formatReadout(wl.level, scale));
        const QString preset = model_->matchingPreset();
        const QString custom = tr("Custom");
        if (preset.isEmpty()) {
            if (preset_box_->findText(custom) < 0) preset_box_->addItem(custom);
            preset_box_->setCurrentText(custom);
        } else {
            preset_box_->setCurrentText(preset);
            if (const int i = preset_box_->findText(custom); i >= 0) preset_box_->removeItem(i);
        }
    };
    connect(model_, &SliceViewModel::windowLevelChanged, this, showWindowLevel);
    showWindowLevel();
    bar->addAction(auto_wl_action_);
    bar->addAction(reset_view_action_);
}

void MainWindow::buildDocks() {
    auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    // The side panels scroll vertically when the screen is short, instead of being
    // squeezed until their rows overlap; their text wraps to the dock's width.
    auto scrolling = [this](QWidget* panel) {
        auto* area = new QScrollArea(this);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        area->setWidget(panel);
        area->setMinimumWidth(panel->minimumSizeHint().width() + area->verticalScrollBar()->sizeHint().width());
        return area;
    };
    data_panel_ = new DataPanel(controller_, this);
    tune_panel_ = new TunePanel(controller_, this);
    dock(tr("Data"), QStringLiteral("data-dock"), scrolling(data_panel_), Qt::LeftDockWidgetArea);
    dock(tr("Reconstruction"), QStringLiteral("tune-dock"), tune_panel_, Qt::LeftDockWidgetArea);  // scrolls inside
    convergence_ = new ConvergencePlot(this);
    convergence_->setMinimumHeight(250);
    QDockWidget* convergence_dock = dock(tr("Convergence"), QStringLiteral("convergence-dock"), convergence_, Qt::BottomDockWidgetArea);
    // ROI statistics and profiles share the bottom area with the convergence plot.
    measurements_ = new MeasurementModel(model_, this);
    for (SliceView* v : findChildren<SliceView*>()) v->setMeasurements(measurements_);
    measurement_panel_ = new MeasurementPanel(&controller_->layers(), model_, measurements_, this);
    QDockWidget* measurement_dock =
        dock(tr("Measurements"), QStringLiteral("measurement-dock"), measurement_panel_, Qt::BottomDockWidgetArea);
    tabifyDockWidget(convergence_dock, measurement_dock);
    convergence_dock->raise();
}

void MainWindow::buildStatusBar() {
    state_label_ = new QLabel(this);
    phase_label_ = new QLabel(this);
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("progress"));
    progress_->setMinimumWidth(220);
    progress_->setMaximumWidth(280);
    progress_->setTextVisible(true);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    cache_label_ = new QLabel(this);
    cache_label_->setObjectName(QStringLiteral("cache-status"));
    device_label_ = new QLabel(this);
    statusBar()->addWidget(state_label_);
    statusBar()->addWidget(phase_label_, 1);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cache_label_);
    statusBar()->addPermanentWidget(device_label_);
}

void MainWindow::connectController() {
    ReconstructionController* c = controller_;
    connect(c, &ReconstructionController::stateChanged, this, &MainWindow::showState);
    connect(c, &ReconstructionController::failed, this, [this](const QString& message) {
        phase_label_->setText(tr("Failed: %1").arg(message));
        if (!pending_open_.isEmpty()) {
            // The file did not load: say so where it cannot be missed, and keep it out of Open Recent.
            pending_open_.clear();
            showError(tr("Could not open the file"), message);
        } else {
            statusBar()->showMessage(tr("Failed: %1").arg(message), 15000);
        }
    });
    connect(c, &ReconstructionController::datasetChanged, this, [this] {
        if (!pending_open_.isEmpty() && controller_->summary().origin == pending_open_)
            addRecentFile(QFileInfo(pending_open_).absoluteFilePath());
        pending_open_.clear();
        const DatasetSummary& s = controller_->summary();
        model_->setGrid(s.grid, s.truth_max);
        orientation_box_->setEnabled(s.grid.dims == 3);
        convergence_->clearReferences();
        const bool ct = controller_->layers().modality() == Modality::Ct;
        convergence_->setReferenceName(Layer::GriddingTrilinear, ct ? QString() : tr("trilinear"));
        convergence_->setReferenceName(Layer::GriddingKaiserBessel, ct ? tr("FDK") : tr("Kaiser-Bessel"));
        convergence_->setFloorName(ct ? QString() : tr("floor"));
        sinogram_model_->setScan(controller_->ctData());
        if (!ct && tabs_->currentIndex() == sinogram_tab_index_) tabs_->setCurrentWidget(comparison_);
        tabs_->setTabVisible(sinogram_tab_index_, ct);
        const bool multi_coil = !ct && s.coils > 1;
        if (!multi_coil && tabs_->currentIndex() == coil_map_tab_index_) tabs_->setCurrentWidget(comparison_);
        tabs_->setTabVisible(coil_map_tab_index_, multi_coil);
        updateTitle();
    });
    connect(c, &ReconstructionController::coilMapsChanged, this,
            [this] { coil_map_model_->setMaps(controller_->coilMaps(), controller_->summary().grid); });
    connect(c, &ReconstructionController::griddingFinished, this, [this](Layer l) {
        const LayerImage* image = controller_->layers().get(l);
        if (!image) return;
        if (image->quality) convergence_->setReference(l, *image->quality);
        // Without a truth, the window/level follows the first gridded image.
        const Layer first = controller_->layers().modality() == Modality::Ct ? Layer::GriddingKaiserBessel
                                                                              : Layer::GriddingTrilinear;
        if (!controller_->summary().has_truth && l == first)
            model_->setIntensityMax(image->volume.maxMagnitude());
    });
    connect(&c->layers(), &ImageLayers::floorChanged, this, [this] {
        if (const auto& floor = controller_->layers().floor()) convergence_->setFloor(*floor);
    });
    connect(c, &ReconstructionController::historyReset, this,
            [this] {
                const bool warm = controller_->warmStart();
                convergence_->reset(controller_->settings().iterations, warm ? controller_->totalIterations() : 0,
                                    warm ? controller_->coldStartCost() : 0);
            });
    connect(c, &ReconstructionController::iterationAdvanced, this,
            [this](const IterationUpdate& u) { convergence_->addRecord(u.record); });
    connect(c, &ReconstructionController::phaseChanged, this, [this](const QString& phase, double fraction) {
        phase_label_->setText(describePhase(phase));
        if (phase == QLatin1String("CG")) return;  // progressChanged counts iterations
        progress_->setRange(0, 100);
        progress_->setValue(int(std::lround(100 * fraction)));
        progress_->setFormat(QStringLiteral("%p %"));
    });
    connect(c, &ReconstructionController::progressChanged, this, [this](int done, int total, double eta) {
        progress_->setRange(0, total);
        progress_->setValue(done);
        const int outer = controller_->outerIteration();
        progress_->setFormat(outer > 0 ? tr("ADMM step %1, CG iteration %2/%3, %4 left")
                                             .arg(outer)
                                             .arg(done)
                                             .arg(total)
                                             .arg(humanSeconds(eta))
                                       : tr("Iteration %1/%2, %3 left").arg(done).arg(total).arg(humanSeconds(eta)));
    });
    connect(c, &ReconstructionController::jobFinished, this, [this](const JobOutcome& o) {
        convergence_->flush();  // the whole history is drawn when the job ends
        // A lambda change stops at the first solve's accuracy (SolveOptions::lambda_change_to_cold_accuracy).
        const QString to_accuracy =
            o.cold_accuracy > 0 ? tr(" to the first solve's residual %1").arg(o.cold_accuracy, 0, 'g', 2) : QString();
        if (o.solved)
            statusBar()->showMessage(
                (o.start_iteration > 0
                     ? tr("%1 CG iterations in %2, warm start%3: %4 since the last start from zero (lambda %5 x s, %6)")
                           .arg(o.iterations_done)
                           .arg(humanSeconds(o.seconds))
                           .arg(to_accuracy)
                           .arg(o.start_iteration + o.iterations_done)
                     : tr("%1 CG iterations from zero in %2 (lambda %3 x s, %4)")
                           .arg(o.iterations_done)
                           .arg(humanSeconds(o.seconds)))
                    .arg(o.lambda, 0, 'g', 3)
                    .arg(o.method + dataTermSuffix(o.weighting, controller_->modality())),
                15000);
    });
    connect(c, &ReconstructionController::cacheStatusChanged, this, [this](const QString& s) {
        // The label names what is cached; how each was made (method, tolerance) is in the tooltip.
        QString brief = s;
        brief.remove(QRegularExpression(QStringLiteral(" \\([^)]*\\)")));
        QStringList items = brief.split(QStringLiteral(", "));
        items.removeDuplicates();
        cache_label_->setText(items.join(QStringLiteral(", ")));
        cache_label_->setToolTip(s + tr("\nQ depends only on the trajectory and F^H d only on the data: a lambda "
                                        "or regulariser change reruns CG alone."));
    });
    connect(c, &ReconstructionController::backendChanged, this, [this] {
        device_label_->setText(controller_->backend().description);
        device_label_->setToolTip(controller_->backend().note);
    });
}

void MainWindow::showState(JobState s) {
    state_label_->setText(toString(s));
    const bool busy = isActive(s);
    cancel_action_->setEnabled(busy);
    reconstruct_action_->setEnabled(controller_->hasDataset());
    for (QAction* a : {save_images_action_, save_png_action_, save_csv_action_, save_settings_action_, export_dicom_action_})
        a->setEnabled(controller_->hasDataset());
    if (!busy) {
        phase_label_->setText(s == JobState::Failed ? tr("Failed: %1").arg(controller_->lastError())
                                                    : QString());
        if (s == JobState::Completed && progress_->maximum() > 0) progress_->setValue(progress_->maximum());
        // A finished job has no time left: the bar keeps where it stopped and how it ended.
        if (progress_->format().contains(QLatin1Char('/')))
            progress_->setFormat(s == JobState::Completed ? tr("Iteration %v/%m") : tr("%1 at iteration %v/%m").arg(toString(s)));
    }
    updateTitle();
}

void MainWindow::updateTitle() {
    QString title = QStringLiteral("ReconStudio %1").arg(QStringLiteral(RECONSTUDIO_VERSION));
    if (controller_->hasDataset()) title += QStringLiteral(" - ") + controller_->summary().name;
    if (isActive(controller_->state())) title += QStringLiteral(" [%1]").arg(toString(controller_->state()));
    setWindowTitle(title);
}

void MainWindow::showError(const QString& what, const QString& message) {
    statusBar()->showMessage(QStringLiteral("%1: %2").arg(what, message), 15000);
    // open(), not exec(): nothing waits for the click, so an unattended --screenshot run goes on.
    auto* box = new QMessageBox(QMessageBox::Warning, what, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("error-dialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::confirmSaved(const QString& where) {
    statusBar()->showMessage(tr("Saved to %1").arg(QDir::toNativeSeparators(QFileInfo(where).absoluteFilePath())), 15000);
}

QString MainWindow::dialogDirectory() const { return last_directory_; }

void MainWindow::openFile(const QString& path) {
    last_directory_ = QFileInfo(path).absolutePath();
    pending_open_ = path;
    controller_->openFile(path);
}

void MainWindow::openDemo(const QString& name, bool use_case_tuning) {
    last_demo_ = name;
    pending_open_.clear();
    controller_->openDemo(name, use_case_tuning);
}

bool MainWindow::saveImages(const QString& path, QString* error) {
    try {
        const recon::Grid& grid = controller_->summary().grid;
        const QFileInfo info(path);
        const QString suffix = info.completeSuffix().toLower();
        const bool ct = controller_->modality() == Modality::Ct;
        if ((suffix == QLatin1String("h5") || suffix == QLatin1String("hdf5")) && ct)
            throw recon::InputError("the HDF5 reconstruction record holds MR results; save CT images as NIfTI "
                                    "(.nii, .nii.gz: the signed attenuation in 1/mm) or PNG");
        if (suffix == QLatin1String("h5") || suffix == QLatin1String("hdf5")) {
            // One HDF5 file keeps every image with how it was made.
            recon::ReconstructionRecord rec;
            rec.grid = grid;
            auto take = [this](Layer l) {
                const LayerImage* image = controller_->layers().get(l);
                return image ? *image->volume.data : recon::ComplexArray{};
            };
            rec.gridding_trilinear = take(Layer::GriddingTrilinear);
            rec.gridding_kb = take(Layer::GriddingKaiserBessel);
            rec.iterative = take(Layer::Iterative);
            rec.lambda = controller_->settings().lambda;
            rec.lambda_scale = controller_->lambdaScale();
            rec.regularizer = recon::toString(controller_->settings().regularizer);
            rec.data_weighting = recon::toString(controller_->settings().weighting);
            rec.method = controller_->settings().method.toStdString();
            rec.backend = controller_->backend().description.toStdString();
            rec.iterations = int(controller_->history().size());
            rec.history = controller_->history();
            recon::writeReconstruction(path.toStdString(), rec);
            confirmSaved(path);
            return true;
        }
        // Other formats hold one image each: NAME_<layer>.EXT per image shown.
        const QString base = info.absolutePath() + '/' + info.baseName();
        int written = 0;
        for (Layer l : {Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel, Layer::Iterative}) {
            const LayerImage* image = controller_->layers().get(l);
            if (!image) continue;
            recon::ImageWriteOptions opts;
            opts.slice = model_->slice();
            opts.slice_axis = planeAxes(model_->orientation()).normal;
            opts.description = controller_->layers().title(l).toStdString();
            opts.real_part = ct;  // CT: attenuation in 1/mm, signed (as reconstudio-cli recon --case ct-...)
            const QString key = ct && l == Layer::GriddingKaiserBessel ? QStringLiteral("fdk") : layerKey(l);
            const QString file = base + '_' + key + '.' + suffix;
            refuseSavingOverInput(file, controller_->summary());
            recon::writeImage(file.toStdString(), grid, *image->volume.data, opts);
            ++written;
        }
        if (written == 0) throw recon::InputError("there is no image to save yet");
        confirmSaved(base + QStringLiteral("_*.") + suffix);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::exportDicom(const QString& directory, QString* error) {
    try {
        if (controller_->modality() == Modality::Ct)
            throw recon::InputError("DICOM export writes MR Image series; CT images are saved as NIfTI or PNG "
                                    "(File > Save Images)");
        const auto& pin = pin_panel_->pin()->snapshot();
        recon::writeDicomSeries(directory.toStdString(), dicomExportFor(*controller_, pin ? &*pin : nullptr));
        confirmSaved(directory);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::saveComparisonPng(const QString& path) {
    if (!comparison_->grab().save(path, "PNG")) return false;
    confirmSaved(path);
    return true;
}

namespace {
bool writeFile(const QString& path, const QByteArray& bytes, QString* error) {
    try {
        writeExportFile(path, bytes);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}
}  // namespace

bool MainWindow::saveConvergenceCsv(const QString& path, QString* error) {
    if (!writeFile(path, convergenceCsv(controller_->history()), error)) return false;
    confirmSaved(path);
    return true;
}

bool MainWindow::saveSettings(const QString& path, QString* error) {
    if (!writeFile(path, settingsJson(controller_->settings(), controller_->summary(), controller_->backend(),
                                        controller_->lambdaScale()), error))
        return false;
    confirmSaved(path);
    return true;
}

bool MainWindow::loadSettings(const QString& path, QString* error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = tr("Could not read %1: %2").arg(path, f.errorString());
        return false;
    }
    try {
        controller_->setSettings(settingsFromJson(f.readAll()));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QStringLiteral("%1: %2").arg(path, QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::addRecentFile(const QString& path) {
    recent_files_.removeAll(path);
    recent_files_.prepend(path);
    while (recent_files_.size() > kMaxRecentFiles) recent_files_.removeLast();
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recent_menu_->clear();
    for (const QString& path : recent_files_) {
        QAction* a = recent_menu_->addAction(QFileInfo(path).fileName());
        a->setToolTip(path);
        connect(a, &QAction::triggered, this, [this, path] { openFile(path); });
    }
    recent_menu_->setEnabled(!recent_files_.isEmpty());
}

void MainWindow::restoreSettings() {
    QSettings s;
    // The first run fills the screen (maximised); later runs come back as they were left.
    if (!restoreGeometry(s.value("window/geometry").toByteArray())) setWindowState(windowState() | Qt::WindowMaximized);
    restoreState(s.value("window/state").toByteArray());
    recent_files_ = s.value("files/recent").toStringList();
    last_directory_ = s.value("files/directory").toString();
    last_demo_ = s.value("files/demo").toString();
    rebuildRecentMenu();
    ReconSettings r = controller_->settings();
    r.lambda = s.value("recon/lambda", r.lambda).toDouble();
    r.iterations = s.value("recon/iterations", r.iterations).toInt();
    try {
        r.regularizer = recon::parseRegularizer(s.value("recon/regularizer", toQString(r.regularizer)).toString().toStdString());
        r.precision = recon::parsePrecision(
            s.value("recon/precision", QString::fromStdString(recon::toString(r.precision))).toString().toStdString());
        r.backend = recon::parseBackendChoice(s.value("recon/backend", toQString(r.backend)).toString().toStdString());
    } catch (const std::exception&) {
        // A settings file from another version: keep the defaults.
    }
    // Multi-coil choices, each on its own: an unknown name keeps that one default only.
    try {
        r.coil_combination = recon::parseCoilCombination(
            s.value("recon/coil_combination", QString::fromStdString(recon::toString(r.coil_combination))).toString().toStdString());
    } catch (const std::exception&) {
    }
    try {
        r.coil_maps = recon::parseCoilMapMethod(
            s.value("recon/coil_maps", QString::fromStdString(recon::toString(r.coil_maps))).toString().toStdString());
    } catch (const std::exception&) {
    }
    try {
        r.weighting = recon::parseDataWeighting(
            s.value("recon/data_weighting", QString::fromStdString(recon::toString(r.weighting))).toString().toStdString());
    } catch (const std::exception&) {
    }
    // K applies to data with more than K coils; the session ignores it elsewhere (session_worker.cpp).
    r.virtual_coils = std::max(0, s.value("recon/virtual_coils", r.virtual_coils).toInt());
    r.method = s.value("recon/method", r.method).toString();
    controller_->setSettings(r);
    model_->setColorMap(ColorMap(std::clamp(s.value("view/colormap", 0).toInt(), 0, 3)));
}

void MainWindow::storeSettings() const {
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    s.setValue("files/recent", recent_files_);
    s.setValue("files/directory", last_directory_);
    s.setValue("files/demo", last_demo_);
    const ReconSettings& r = controller_->settings();
    s.setValue("recon/lambda", r.lambda);
    s.setValue("recon/iterations", r.iterations);
    s.setValue("recon/regularizer", toQString(r.regularizer));
    s.setValue("recon/precision", QString::fromStdString(recon::toString(r.precision)));
    s.setValue("recon/backend", toQString(r.backend));
    s.setValue("recon/method", r.method);
    s.setValue("recon/coil_combination", QString::fromStdString(recon::toString(r.coil_combination)));
    s.setValue("recon/coil_maps", QString::fromStdString(recon::toString(r.coil_maps)));
    s.setValue("recon/virtual_coils", r.virtual_coils);
    s.setValue("recon/data_weighting", QString::fromStdString(recon::toString(r.weighting)));
    s.setValue("view/colormap", int(model_->colorMap()));
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (options_.persist_settings) storeSettings();
    // The controller's destructor cancels and joins the worker; nothing to wait for here.
    QMainWindow::closeEvent(e);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    const QMimeData* mime = e->mimeData();
    if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().front().isLocalFile()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const QList<QUrl> urls = e->mimeData()->urls();
    if (urls.isEmpty() || !urls.front().isLocalFile()) return;
    openFile(urls.front().toLocalFile());
    e->acceptProposedAction();
}

}  // namespace studio
