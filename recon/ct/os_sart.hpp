// OS-SART for CT (recon/solvers/os_sart.hpp): the views dealt into ordered subsets, each
// subset's projector made by the caller's factory (the session passes Backend::ctProjector on
// the subset's angles, so the GPU projector serves it as it serves CG), the subsets visited
// far apart in angle.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recon/ct/geometry.hpp"
#include "recon/linop/linear_operator.hpp"
#include "recon/solvers/os_sart.hpp"

namespace recon::ct {

struct OsSartCtOptions {
    int subsets = 10;  // at most the number of views; 1 = SART
    OsSartOptions sart;
};

// The views of subset k: k, k + S, k + 2S, ... (each subset spans the whole orbit).
std::vector<std::size_t> subsetViews(std::size_t views, int subsets, int k);
// The order the subsets are visited in: each next one far in angle from the last (by the
// golden ratio's fractional parts), so that consecutive updates are nearly independent.
std::vector<int> subsetOrder(int subsets);

// The projector of a scan's geometry (e.g. Backend::ctProjector with fixed options).
using ProjectorFactory = std::function<LinearOperatorPtr(const CtGeometry&)>;

// OS-SART for the scan `geometry` with `projections` (u fastest, then v, then view) and
// `weights` (one per projection value, e.g. the counts; empty: W = I), each subset's
// projector from `projector`.
std::unique_ptr<OsSart> makeOsSart(const ProjectorFactory& projector, const CtGeometry& geometry,
                                   const std::vector<double>& projections, const std::vector<double>& weights,
                                   const OsSartCtOptions& options);

std::string describe(const OsSartCtOptions& options);  // "OS-SART, 10 subsets, relaxation 1, x >= 0"

}  // namespace recon::ct
