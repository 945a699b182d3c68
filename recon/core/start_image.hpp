// Where the quadratic CG solve starts (recon/session/reconstruction.cpp): from zero, or from the
// density-compensated adjoint F^H (w d) (the gridded image, in the model's own F) scaled by the
// least-squares optimal scalar. Its names live here, below io and session, so recipes, the CLI
// and the session share them.
#pragma once

#include <string>

#include "recon/core/errors.hpp"

namespace recon {

enum class StartImage { Zero, Gridding };

inline std::string toString(StartImage k) { return k == StartImage::Gridding ? "gridding" : "zero"; }

inline StartImage parseStartImage(const std::string& s) {
    if (s == "zero") return StartImage::Zero;
    if (s == "gridding") return StartImage::Gridding;
    throw InputError("unknown start image '" + s + "' (expected zero or gridding)");
}

}  // namespace recon
