#include "recon/ct/os_sart.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "recon/core/errors.hpp"

namespace recon::ct {

std::vector<std::size_t> subsetViews(std::size_t views, int subsets, int k) {
    std::vector<std::size_t> v;
    for (std::size_t i = std::size_t(k); i < views; i += std::size_t(subsets)) v.push_back(i);
    return v;
}

std::vector<int> subsetOrder(int subsets) {
    std::vector<int> order(static_cast<std::size_t>(subsets));
    std::iota(order.begin(), order.end(), 0);
    const double phi = 0.5 * (std::sqrt(5.0) - 1);
    auto place = [phi](int k) { return std::fmod(k * phi, 1.0); };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return place(a) < place(b); });
    return order;
}

std::unique_ptr<OsSart> makeOsSart(const ProjectorFactory& projector, const CtGeometry& geometry,
                                   const std::vector<double>& projections, const std::vector<double>& weights,
                                   const OsSartCtOptions& options) {
    const std::size_t views = geometry.beam.views();
    if (options.subsets < 1 || std::size_t(options.subsets) > views)
        throw InputError("OS-SART: the number of subsets must lie between 1 and the number of views (" +
                         std::to_string(views) + "), got " + std::to_string(options.subsets));
    if (projections.size() != geometry.beam.samples())
        throw InputError("OS-SART: " + std::to_string(projections.size()) + " projection values for " +
                         std::to_string(geometry.beam.samples()) + " detector samples");
    if (!weights.empty() && weights.size() != projections.size())
        throw InputError("OS-SART: " + std::to_string(weights.size()) + " weights for " +
                         std::to_string(projections.size()) + " projection values");
    // W made mean 1, as the CG solve's: records in the same units.
    const double mean_weight =
        weights.empty() ? 1.0 : std::accumulate(weights.begin(), weights.end(), 0.0) / double(weights.size());
    if (!weights.empty() && !(mean_weight > 0)) throw InputError("OS-SART: the weights must be positive");

    const std::size_t per_view = std::size_t(geometry.beam.detector_columns) * geometry.beam.detector_rows;
    std::vector<SartSubset> subsets;
    for (int k : subsetOrder(options.subsets)) {
        const std::vector<std::size_t> v = subsetViews(views, options.subsets, k);
        CtGeometry g = geometry;
        g.beam.angles_rad.clear();
        SartSubset s;
        s.data.reserve(v.size() * per_view);
        for (std::size_t view : v) {
            g.beam.angles_rad.push_back(geometry.beam.angles_rad[view]);
            const std::size_t at = view * per_view;
            s.data.insert(s.data.end(), projections.begin() + std::ptrdiff_t(at),
                          projections.begin() + std::ptrdiff_t(at + per_view));
            if (!weights.empty())
                for (std::size_t i = at; i < at + per_view; ++i) s.weights.push_back(weights[i] / mean_weight);
        }
        s.op = projector(g);
        subsets.push_back(std::move(s));
    }
    return std::make_unique<OsSart>(std::move(subsets), options.sart);
}

std::string describe(const OsSartCtOptions& options) {
    return std::string(options.subsets == 1 ? "SART" : "OS-SART, " + std::to_string(options.subsets) + " subsets") +
           ", relaxation " + formatNumber(options.sart.relaxation) + (options.sart.nonnegative ? ", x ≥ 0" : "");
}

}  // namespace recon::ct
