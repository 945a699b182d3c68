// The workstation's settings as a recipe (recon/io/recipe.hpp, docs/RECIPE.md)
// and back, and a batch's summary.json read for browsing (docs/BATCH.md). No
// widgets: the main window and the tests call these directly.
#pragma once

#include <QString>
#include <QVector>
#include <optional>

#include "recon/io/recipe.hpp"
#include "session_worker.hpp"

namespace studio {

// The recipe a batch needs to reconstruct like this window does (iterative method).
recon::io::Recipe recipeFromSettings(const ReconSettings& settings);
// `base` with every field the recipe sets; the others keep base's value.
ReconSettings settingsFromRecipe(const recon::io::Recipe& recipe, ReconSettings base);

struct BatchSummaryRow {
    int index = 0;
    QString input, output, status, device, message;
    double seconds = 0;
    int iterations = 0;
    std::optional<double> psnr_db, error_percent;
    QString recipe;  // the row's effective recipe file (D/recipes/NAME.json)
};

// Reads D/summary.json; throws recon::InputError naming the file and what is wrong.
QVector<BatchSummaryRow> readBatchSummary(const QString& summary_json);

}  // namespace studio
