// What was loaded and how it will be reconstructed: matrix, samples, trajectory,
// coils, the device in use, the memory the reconstruction needs, and the
// conventions behind the numbers (k units, basis phi, lambda's scale s = Q(0)).
#pragma once

#include <QString>
#include <QWidget>

#include <map>

class QGridLayout;
class QLabel;
class QSpinBox;

namespace studio {

class ReconstructionController;

class DataPanel : public QWidget {
    Q_OBJECT
public:
    explicit DataPanel(ReconstructionController* controller, QWidget* parent = nullptr);
    QString field(const QString& name) const;  // the text shown for a field, for tests

private:
    void refresh();
    QLabel* add(const QString& name, const QString& tooltip = {});

    ReconstructionController* controller_;
    QGridLayout* form_ = nullptr;
    void refreshCt();
    void showCoilProcessing();  // virtual coils, prewhitening, the maps' source
    // A file of several frames: which one is open, and the chooser that switches to another.
    void addFrameChooser();
    void refreshFrames();
    QSpinBox* frame_chooser_ = nullptr;
    void showRows(bool ct);  // MR's rows or CT's

    std::map<QString, QLabel*> fields_;
    std::map<QString, QLabel*> labels_;
};

}  // namespace studio
