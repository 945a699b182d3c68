// The main window's recipe and batch actions, apart from main_window.cpp so that
// batch reconstruction (docs/BATCH.md) stays one small, separate piece of the window.
#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include "ui/batch_summary_dialog.hpp"
#include "ui/main_window.hpp"
#include "ui/recipe_bridge.hpp"

namespace studio {

bool MainWindow::exportRecipe(const QString& path, QString* error) {
    try {
        recon::io::writeRecipe(path.toStdString(), recipeFromSettings(controller_->settings()));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::openRecipe(const QString& path, QString* error) {
    try {
        controller_->setSettings(settingsFromRecipe(recon::io::readRecipe(path.toStdString()), controller_->settings()));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::openBatchSummary(const QString& summary_json, QString* error) {
    QVector<BatchSummaryRow> rows;
    try {
        rows = readBatchSummary(summary_json);
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    auto* dialog = new BatchSummaryDialog(summary_json, rows, this);
    dialog->setObjectName(QStringLiteral("batchSummary"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &BatchSummaryDialog::openRequested, this, [this](const BatchSummaryRow& row) {
        // The row's own recipe first, so the data set is reconstructed as the batch did.
        QString why;
        if (QFileInfo::exists(row.recipe) && !openRecipe(row.recipe, &why)) showError(tr("Open recipe"), why);
        openFile(row.input);
    });
    dialog->show();
    return true;
}

void MainWindow::addBatchActions(QMenu* file) {
    QAction* export_recipe = file->addAction(tr("&Export Recipe..."));
    export_recipe->setToolTip(tr("Save the current settings as a recipe for reconstudio-cli recon/batch"));
    connect(export_recipe, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export recipe"), dialogDirectory(), tr("Recipe (*.json)"));
        QString error;
        if (!path.isEmpty() && !exportRecipe(path, &error)) showError(tr("Export recipe"), error);
    });
    QAction* open_recipe = file->addAction(tr("Open Re&cipe..."));
    connect(open_recipe, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open recipe"), dialogDirectory(), tr("Recipe (*.json)"));
        QString error;
        if (!path.isEmpty() && !openRecipe(path, &error)) showError(tr("Open recipe"), error);
    });
    QAction* open_summary = file->addAction(tr("Open &Batch Summary..."));
    connect(open_summary, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open batch summary"), dialogDirectory(),
                                                          tr("Batch summary (summary.json)"));
        QString error;
        if (!path.isEmpty() && !openBatchSummary(path, &error)) showError(tr("Open batch summary"), error);
    });
}

}  // namespace studio
