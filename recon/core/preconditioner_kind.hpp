// Which preconditioner the quadratic CG solve uses (recon/backend/circulant_preconditioner.hpp).
// Its names live here, below io and session, so recipes, the CLI and the session share them.
#pragma once

#include <string>

#include "recon/core/errors.hpp"

namespace recon {

enum class PreconditionerKind { None, Circulant };

inline std::string toString(PreconditionerKind k) { return k == PreconditionerKind::Circulant ? "circulant" : "none"; }

inline PreconditionerKind parsePreconditioner(const std::string& s) {
    if (s == "none") return PreconditionerKind::None;
    if (s == "circulant") return PreconditionerKind::Circulant;
    throw InputError("unknown preconditioner '" + s + "' (expected none or circulant)");
}

}  // namespace recon
