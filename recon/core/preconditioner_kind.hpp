// Which preconditioner the quadratic CG solve uses (recon/backend/circulant_preconditioner.hpp).
// Its names live here, below io and session, so recipes, the CLI and the session share them.
// Auto: the session's rule, keyed by what is solved (resolvePreconditioner, recon/session).
#pragma once

#include <string>

#include "recon/core/errors.hpp"

namespace recon {

enum class PreconditionerKind { None, Circulant, Auto };

inline std::string toString(PreconditionerKind k) {
    return k == PreconditionerKind::Circulant ? "circulant" : k == PreconditionerKind::Auto ? "auto" : "none";
}

inline PreconditionerKind parsePreconditioner(const std::string& s) {
    if (s == "none") return PreconditionerKind::None;
    if (s == "circulant") return PreconditionerKind::Circulant;
    if (s == "auto") return PreconditionerKind::Auto;
    throw InputError("unknown preconditioner '" + s + "' (expected auto, none or circulant)");
}

}  // namespace recon
