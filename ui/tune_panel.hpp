// The reconstruction's settings: lambda on a logarithmic slider with a numeric
// field, the regulariser, iterations, precision, backend and Fourier method, and
// the Reconstruct / Cancel buttons. Edits go to the controller, which restarts
// the solve after its debounce; the panel follows the controller's settings.
#pragma once

#include <QWidget>

#include <functional>

#include "ui/session_worker.hpp"

class QComboBox;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QLabel;

namespace studio {

class ReconstructionController;

class TunePanel : public QWidget {
    Q_OBJECT
public:
    explicit TunePanel(ReconstructionController* controller, QWidget* parent = nullptr);

    // The slider spans lambda = 10^kMinLog10 .. 10^kMaxLog10 on a log scale, kStepsPerDecade per decade.
    static constexpr double kMinLog10 = -6, kMaxLog10 = 3;  // the anatomical prior wants lambda up to a few hundred
    static constexpr int kStepsPerDecade = 50;
    static int sliderPosition(double lambda);
    static double lambdaAt(int slider_position);

    QSlider* lambdaSlider() const { return lambda_slider_; }
    QLineEdit* lambdaField() const { return lambda_field_; }
    QComboBox* regularizerBox() const { return regularizer_; }
    // The data term: least squares (uniform) or density-weighted least squares (MR; SolveOptions::weighting).
    QComboBox* dataTermBox() const { return data_term_; }
    QPushButton* suggestButton() const { return suggest_; }
    // "auto: lambda = ... (rule)" while the lambda in use is the one Suggest chose; empty otherwise.
    QLabel* autoLambdaLabel() const { return auto_label_; }
    QSpinBox* iterationsBox() const { return iterations_; }
    // Multi-coil data: sum of squares or SENSE, and how SENSE gets its coil maps.
    QComboBox* coilCombinationBox() const { return coil_combination_; }
    QComboBox* coilMapsBox() const { return coil_maps_; }
    QSpinBox* virtualCoilsBox() const { return virtual_coils_; }  // 0: "all coils" (no compression)
    QPushButton* reconstructButton() const { return reconstruct_; }
    // How the image shown was started: from zero, or warm (lambda tuning) with
    // the iterations since the last start from zero.
    QLabel* startLabel() const { return start_label_; }

private:
    void showSettings(const ReconSettings& s);  // without echoing edits back
    void showBackend();
    void showAutoLambda();
    void showState();
    void showStart();
    void edit(const std::function<void(ReconSettings&)>& change);

    ReconstructionController* controller_;
    QSlider* lambda_slider_ = nullptr;
    QLineEdit* lambda_field_ = nullptr;
    QLabel* lambda_scale_ = nullptr;
    QComboBox* regularizer_ = nullptr;
    QComboBox* data_term_ = nullptr;
    QSpinBox* iterations_ = nullptr;
    QComboBox* coil_combination_ = nullptr;
    QComboBox* coil_maps_ = nullptr;
    QSpinBox* virtual_coils_ = nullptr;
    QComboBox* precision_ = nullptr;
    QComboBox* backend_ = nullptr;
    QComboBox* method_ = nullptr;
    QPushButton* reconstruct_ = nullptr;
    QPushButton* suggest_ = nullptr;
    QLabel* auto_label_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* start_label_ = nullptr;
    double shown_lambda_ = -1;  // the controller's lambda the field last showed
    bool updating_ = false;
};

}  // namespace studio
