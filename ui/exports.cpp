#include "ui/exports.hpp"

#include <QJsonDocument>
#include <QJsonObject>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/output_guard.hpp"

namespace studio {

QString toQString(recon::RegularizerKind k) { return QString::fromStdString(recon::toString(k)); }

QString toQString(recon::BackendChoice c) {
    switch (c) {
        case recon::BackendChoice::Auto: return QStringLiteral("auto");
        case recon::BackendChoice::Cpu: return QStringLiteral("cpu");
        case recon::BackendChoice::Cuda: return QStringLiteral("cuda");
    }
    return QStringLiteral("auto");
}

QString dataTermSuffix(recon::DataWeighting w, Modality modality) {
    return modality == Modality::Mr && w == recon::DataWeighting::Density ? QStringLiteral(", density-weighted") : QString();
}

QByteArray convergenceCsv(const std::vector<recon::IterationRecord>& history) {
    QByteArray out = "iteration,seconds,residual,data_term,penalty_term,cost,psnr_db,error_percent\n";
    auto num = [](double v) { return QByteArray::number(v, 'g', 10); };
    for (const recon::IterationRecord& r : history) {
        out += QByteArray::number(r.iteration) + ',' + num(r.seconds) + ',' + num(r.residual) + ',' +
               num(r.data_term) + ',' + num(r.penalty_term) + ',' + num(r.cost()) + ',' +
               (r.has_truth ? num(r.psnr_db) : QByteArray()) + ',' +
               (r.has_truth ? num(r.error_percent) : QByteArray()) + '\n';
    }
    return out;
}

void writeExportFile(const QString& path, const QByteArray& bytes) {
    recon::io::writeFileAtomically(path.toStdString(), bytes.constData(), std::size_t(bytes.size()));
}

void refuseSavingOverInput(const QString& path, const DatasetSummary& data) {
    recon::InputSpec read;
    read.input = data.origin.toStdString();  // a demo's name is no file, and so never matches
    recon::io::refuseOverwritingInputs(read, path.toStdString(), "Save");
}

QByteArray settingsJson(const ReconSettings& s, const DatasetSummary& data, const BackendReport& backend,
                        double lambda_scale) {
    QJsonObject o;
    o["lambda"] = s.lambda;
    o["lambda_scale"] = lambda_scale;
    const bool weighted = !dataTermSuffix(s.weighting, data.modality).isEmpty();
    o["lambda_scale_definition"] = weighted ? QStringLiteral("s = Q_D(0) = sum_m w_m |phi(k_m)|^2 (density-weighted data term)")
                                            : QStringLiteral("s = Q(0) = sum_m |phi(k_m)|^2");
    o["regularizer"] = toQString(s.regularizer);
    o["data_weighting"] = QString::fromStdString(recon::toString(s.weighting));
    o["iterations"] = s.iterations;
    o["precision"] = QString::fromStdString(recon::toString(s.precision));
    o["backend"] = toQString(s.backend);
    o["method"] = s.method;
    QJsonObject d;
    d["name"] = data.name;
    d["origin"] = data.origin;
    d["matrix"] = QString::fromStdString(data.grid.describe());
    d["samples"] = data.samples;
    d["basis"] = data.basis;
    o["data"] = d;
    o["device"] = backend.description;
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

ReconSettings settingsFromJson(const QByteArray& json) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (!doc.isObject())
        throw recon::InputError("settings: not a JSON object (" + error.errorString().toStdString() + ")");
    const QJsonObject o = doc.object();
    ReconSettings s;
    if (o.contains("lambda")) {
        if (!o["lambda"].isDouble() || o["lambda"].toDouble() < 0)
            throw recon::InputError("settings: \"lambda\" must be a non-negative number");
        s.lambda = o["lambda"].toDouble();
    }
    if (o.contains("iterations")) {
        if (!o["iterations"].isDouble() || o["iterations"].toInt() < 1)
            throw recon::InputError("settings: \"iterations\" must be a positive integer");
        s.iterations = o["iterations"].toInt();
    }
    // The engine's parsers say what they accept; the message adds which field was wrong.
    auto parse = [&o](const char* field, auto parser, auto& into) {
        if (!o.contains(field)) return;
        try {
            into = parser(o[field].toString().toStdString());
        } catch (const std::exception& e) {
            throw recon::InputError(std::string("settings: \"") + field + "\": " + e.what());
        }
    };
    parse("regularizer", recon::parseRegularizer, s.regularizer);
    parse("data_weighting", recon::parseDataWeighting, s.weighting);
    parse("precision", recon::parsePrecision, s.precision);
    parse("backend", recon::parseBackendChoice, s.backend);
    if (o.contains("method")) s.method = o["method"].toString();
    return s;
}

}  // namespace studio
