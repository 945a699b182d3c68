// The workstation's window: the comparison grid (and the 3D views when VTK is
// built and OpenGL is available) in the centre, the data and tune panels on the
// left, the convergence plot below; menus for open, demo cases, save and view
// settings; a status bar with the job's phase, per-iteration progress with ETA,
// what the session has cached and the device in use.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include "ui/reconstruction_controller.hpp"
#include "ui/slice_view_model.hpp"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace studio {

class ComparisonGrid;
class ConvergencePlot;
class DataPanel;
class PinPanel;
class MeasurementPanel;
class MeasurementModel;
class TunePanel;
class ThreeDPanel;
class SinogramView;
class SinogramViewModel;
class CoilMapView;
class CoilMapViewModel;

struct MainWindowOptions {
    // Show the VTK 3D views (needs OpenGL: not with the offscreen platform).
    bool enable_3d = true;
    // Restore and save window geometry and last choices with QSettings.
    bool persist_settings = true;
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    ReconstructionController* controller() const { return controller_; }
    SliceViewModel* viewModel() const { return model_; }
    ComparisonGrid* comparison() const { return comparison_; }
    ConvergencePlot* convergence() const { return convergence_; }
    DataPanel* dataPanel() const { return data_panel_; }
    TunePanel* tunePanel() const { return tune_panel_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* cacheLabel() const { return cache_label_; }
    bool has3D() const { return three_d_ != nullptr; }
    PinPanel* pinPanel() const { return pin_panel_; }
    MeasurementModel* measurements() const { return measurements_; }
    QComboBox* presetBox() const { return preset_box_; }
    QLineEdit* windowField() const { return window_field_; }
    QLineEdit* levelField() const { return level_field_; }
    MeasurementPanel* measurementPanel() const { return measurement_panel_; }
    // The Sinogram tab (shown for CT data sets only).
    SinogramViewModel* sinogramModel() const { return sinogram_model_; }
    SinogramView* sinogramView() const { return sinogram_view_; }
    // The Coil maps tab (multi-coil MR data sets only): the maps of the last SENSE solve.
    CoilMapViewModel* coilMapModel() const { return coil_map_model_; }
    CoilMapView* coilMapView() const { return coil_map_view_; }
    QTabWidget* centreTabs() const { return tabs_; }

    // Open a data file (any format the engine reads) or a demo case by name.
    void openFile(const QString& path);
    void openDemo(const QString& name, bool use_case_tuning = true);

    // Saves; each returns false and shows (or, with `quiet`, only returns) the error.
    bool saveImages(const QString& path, QString* error = nullptr);
    bool saveComparisonPng(const QString& path);
    bool saveConvergenceCsv(const QString& path, QString* error = nullptr);
    bool saveSettings(const QString& path, QString* error = nullptr);
    bool loadSettings(const QString& path, QString* error = nullptr);
    // Recipes and batch summaries (main_window_batch.cpp; docs/RECIPE.md, docs/BATCH.md).
    bool exportRecipe(const QString& path, QString* error = nullptr);
    bool openRecipe(const QString& path, QString* error = nullptr);
    bool openBatchSummary(const QString& summary_json, QString* error = nullptr);
    // Every image shown as a DICOM MR series, into the new folder `directory`.
    bool exportDicom(const QString& directory, QString* error = nullptr);

    QStringList recentFiles() const { return recent_files_; }
    // Help > About's text (rich text).
    static QString aboutText();

protected:
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void buildActions();
    void buildMenus();
    void addBatchActions(QMenu* file);
    void buildToolBar();
    void buildDocks();
    void buildStatusBar();
    void connectController();
    void restoreSettings();
    void storeSettings() const;
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void updateTitle();
    void showState(JobState s);
    // A window-modal message box that does not block (so tests see it), and the status bar.
    void showError(const QString& what, const QString& message);
    void confirmSaved(const QString& where);
    QString dialogDirectory() const;

    MainWindowOptions options_;
    ReconstructionController* controller_ = nullptr;
    SliceViewModel* model_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    ComparisonGrid* comparison_ = nullptr;
    ConvergencePlot* convergence_ = nullptr;
    DataPanel* data_panel_ = nullptr;
    TunePanel* tune_panel_ = nullptr;
    ThreeDPanel* three_d_ = nullptr;
    PinPanel* pin_panel_ = nullptr;
    MeasurementModel* measurements_ = nullptr;
    MeasurementPanel* measurement_panel_ = nullptr;
    QAction* pin_action_ = nullptr;
    SinogramViewModel* sinogram_model_ = nullptr;
    SinogramView* sinogram_view_ = nullptr;
    int sinogram_tab_index_ = -1;
    CoilMapViewModel* coil_map_model_ = nullptr;
    CoilMapView* coil_map_view_ = nullptr;
    int coil_map_tab_index_ = -1;

    QAction* open_action_ = nullptr;
    QAction* reconstruct_action_ = nullptr;
    QAction* cancel_action_ = nullptr;
    QAction* save_images_action_ = nullptr;
    QAction* save_png_action_ = nullptr;
    QAction* save_csv_action_ = nullptr;
    QAction* save_settings_action_ = nullptr;
    QAction* export_dicom_action_ = nullptr;
    QAction* load_settings_action_ = nullptr;
    QAction* quit_action_ = nullptr;
    QAction* auto_wl_action_ = nullptr;
    QAction* reset_view_action_ = nullptr;
    QMenu* recent_menu_ = nullptr;
    QMenu* demo_menu_ = nullptr;
    QComboBox* orientation_box_ = nullptr;
    QComboBox* mode_box_ = nullptr;
    QComboBox* colormap_box_ = nullptr;
    QComboBox* preset_box_ = nullptr;
    QLineEdit* window_field_ = nullptr;  // window/level as numbers, editable
    QLineEdit* level_field_ = nullptr;

    QLabel* state_label_ = nullptr;
    QLabel* phase_label_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* cache_label_ = nullptr;
    QLabel* device_label_ = nullptr;

    QStringList recent_files_;
    QString last_directory_;
    QString last_demo_;
    QString pending_open_;  // a file being opened: it enters Open Recent once it has loaded
};

}  // namespace studio
