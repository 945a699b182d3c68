#include "ui/dicom_export.hpp"

namespace studio {

recon::DicomExportSpec dicomExportFor(const ReconstructionController& c, const PinnedSnapshot* pin) {
    recon::DicomExportSpec spec;
    spec.grid = c.summary().grid;
    spec.study_description = ("ReconStudio " + c.summary().name).toStdString();
    for (Layer l : {Layer::Truth, Layer::GriddingTrilinear, Layer::GriddingKaiserBessel, Layer::Iterative, Layer::Pinned}) {
        const LayerImage* image = c.layers().get(l);
        if (!image || (l == Layer::Pinned && !pin)) continue;
        recon::DicomSeriesSpec s;
        s.image = image->volume.data.get();
        s.folder = layerKey(l).toStdString();
        switch (l) {
            case Layer::Truth: s.description = "Truth (simulated phantom)"; break;
            case Layer::GriddingTrilinear: s.description = recon::dicomGriddingDescription(false); break;
            case Layer::GriddingKaiserBessel: s.description = recon::dicomGriddingDescription(true); break;
            case Layer::Pinned:
                s.description = (QStringLiteral("Pinned ") + (pin ? pin->describe() : QString())).left(64).toStdString();
                s.comments = pin ? pin->describe().toStdString() : std::string();
                break;
            default: {
                const ReconSettings& r = c.settings();
                const int last = c.history().empty() ? 0 : c.history().back().iteration;
                const int start = std::max(0, c.totalIterations() - last);
                s.description = recon::dicomIterativeDescription(recon::toString(r.regularizer), r.lambda, last, start);
                s.comments = QStringLiteral("lambda %1 x s (s = %2 = %3), regularizer %4, %5 CG iterations since "
                                            "the start from zero, backend %6")
                                 .arg(r.lambda, 0, 'g', 6)
                                 .arg(c.densityWeighted() ? QStringLiteral("Q_D(0), density-weighted data term") : QStringLiteral("Q(0)"))
                                 .arg(c.lambdaScale(), 0, 'g', 6)
                                 .arg(QString::fromStdString(recon::toString(r.regularizer)))
                                 .arg(c.totalIterations())
                                 .arg(c.backend().description)
                                 .toStdString();
            }
        }
        if (c.summary().has_truth && l != Layer::Iterative && l != Layer::Truth)
            s.comments = s.description + ", multiplied by the least-squares optimal scalar against the truth";
        spec.series.push_back(std::move(s));
    }
    return spec;
}

}  // namespace studio
