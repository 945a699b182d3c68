// Which preconditioner the quadratic CG solve uses (recon/backend/circulant_preconditioner.hpp).
// Its names live here, below io and session, so recipes, the CLI and the session share them.
#pragma once

#include <string>

#include "recon/core/errors.hpp"

namespace recon {

// Auto: the quadratic CG's choice by backend and prior (recon/session: resolvePreconditioner);
// ADMM's inner CG takes none or circulant only.
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
