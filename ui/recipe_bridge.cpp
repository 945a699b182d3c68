#include "recipe_bridge.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "recon/core/errors.hpp"
#include "recon/sense/coil_maps.hpp"
#include "recon/session/reconstruction.hpp"

namespace studio {

recon::io::Recipe recipeFromSettings(const ReconSettings& s) {
    recon::io::Recipe r;
    r.method = "iterative";
    r.regularizer = recon::toString(s.regularizer);
    r.lambda = s.lambda;
    r.iterations = s.iterations;
    r.precision = recon::toString(s.precision);
    r.backend = s.backend == recon::BackendChoice::Cpu    ? "cpu"
                : s.backend == recon::BackendChoice::Cuda ? "cuda"
                                                          : "auto";
    if (!s.method.isEmpty()) r.fourier_method = s.method.toStdString();
    // The recipe spells sum of squares out (docs/RECIPE.md); virtual coils have no recipe key yet.
    r.coils = s.coil_combination == recon::CoilCombination::Sense ? "sense" : "sum-of-squares";
    r.coil_maps = recon::toString(s.coil_maps);
    r.data_weighting = recon::toString(s.weighting);
    return r;
}

ReconSettings settingsFromRecipe(const recon::io::Recipe& r, ReconSettings s) {
    // The recipe's values were checked by the same parsers when it was read.
    if (r.regularizer) s.regularizer = recon::parseRegularizer(*r.regularizer);
    if (r.lambda) s.lambda = *r.lambda;
    if (r.iterations) s.iterations = *r.iterations;
    if (r.precision) s.precision = recon::parsePrecision(*r.precision);
    if (r.backend) s.backend = recon::parseBackendChoice(*r.backend);
    if (r.fourier_method) s.method = QString::fromStdString(*r.fourier_method);
    s.coil_combination = recon::parseCoilCombination(r.coils);  // never absent: sum of squares by default
    if (r.coil_maps) s.coil_maps = recon::parseCoilMapMethod(*r.coil_maps);
    if (r.data_weighting) s.weighting = recon::parseDataWeighting(*r.data_weighting);
    return s;
}

QVector<BatchSummaryRow> readBatchSummary(const QString& path) {
    auto fail = [&](const QString& what) { throw recon::InputError((path + ": " + what).toStdString()); };
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) fail(f.errorString());
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    if (!doc.isObject() || !doc.object().contains("reconstudio_batch_summary"))
        fail(QStringLiteral("not a batch summary (%1)").arg(error.errorString()));
    const QDir dir = QFileInfo(path).absoluteDir();
    QVector<BatchSummaryRow> rows;
    for (const QJsonValue& v : doc.object().value("rows").toArray()) {
        const QJsonObject o = v.toObject();
        BatchSummaryRow r;
        r.index = o.value("index").toInt();
        r.input = o.value("input").toString();
        r.output = dir.filePath(o.value("output").toString());
        r.status = o.value("status").toString();
        r.device = o.value("device").toString();
        r.message = o.value("message").toString();
        r.seconds = o.value("seconds").toDouble();
        r.iterations = o.value("iterations").toInt();
        if (o.value("psnr_db").isDouble()) r.psnr_db = o.value("psnr_db").toDouble();
        if (o.value("error_percent").isDouble()) r.error_percent = o.value("error_percent").toDouble();
        const QString name = o.value("name").toString();
        if (r.input.isEmpty() || r.status.isEmpty() || name.isEmpty())
            fail(QStringLiteral("row %1 lacks its name, input or status").arg(r.index));
        r.recipe = dir.filePath("recipes/" + name + ".json");
        rows.push_back(r);
    }
    return rows;
}

}  // namespace studio
