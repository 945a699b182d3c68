// The data term of the quadratic CG solve (recon/session/reconstruction.cpp): plain least squares
// ||F x - d||^2, or density-weighted least squares ||D^{1/2} (F x - d)||^2 with D the density
// weights gridding uses (Pruessmann et al. 2001): another problem, whose normal matrix F^H D F is
// close to a multiple of the identity on the sampled band, so its early iterates are good images
// (docs/SCALING.md). Its names live here, below io and session, so recipes, the CLI and the
// session share them.
#pragma once

#include <string>

#include "recon/core/errors.hpp"

namespace recon {

enum class DataWeighting { Uniform, Density };

inline std::string toString(DataWeighting w) { return w == DataWeighting::Density ? "density" : "uniform"; }

inline DataWeighting parseDataWeighting(const std::string& s) {
    if (s == "uniform") return DataWeighting::Uniform;
    if (s == "density") return DataWeighting::Density;
    throw InputError("unknown data weighting '" + s + "' (expected uniform or density)");
}

}  // namespace recon
