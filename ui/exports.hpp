// What "Save" writes besides images: the convergence history as CSV and the
// settings a reconstruction used as JSON. Plain functions, tested directly.
#pragma once

#include <QByteArray>
#include <QString>

#include <vector>

#include "recon/backend/backend.hpp"
#include "ui/session_worker.hpp"

namespace studio {

// One row per iteration: iteration, seconds, residual, data term, penalty term,
// cost, PSNR, percent error (the last two empty without a truth).
QByteArray convergenceCsv(const std::vector<recon::IterationRecord>& history);

// The settings, with lambda's scale s (ReconstructionController::lambdaScale: the settings' data term's)
// and the data and backend they were used on.
QByteArray settingsJson(const ReconSettings& settings, const DatasetSummary& data, const BackendReport& backend,
                        double lambda_scale);
// Reads back what settingsJson wrote; throws recon::InputError naming the bad field.
ReconSettings settingsFromJson(const QByteArray& json);

// Writes a CSV/JSON export the way the engine writes every output
// (recon/io/file_util.hpp: whole or not at all, every write checked, the
// target's mode and symbolic link kept); throws recon::Error naming the file.
void writeExportFile(const QString& path, const QByteArray& bytes);

// Throws recon::InputError when saving to `path` would overwrite the file the
// shown data were read from (data.origin), under any name or link.
void refuseSavingOverInput(const QString& path, const DatasetSummary& data);

QString toQString(recon::RegularizerKind k);
QString toQString(recon::BackendChoice c);
// ", density-weighted" for the density-weighted data term of an MR solve, else empty: appended where
// the GUI names how an image was made (the plain least-squares default goes unsaid).
QString dataTermSuffix(recon::DataWeighting w, Modality modality);

}  // namespace studio
