// Turns the generic CG's scalars into the cost and quality readouts of an
// IterationRecord: shared by every backend's solver so the numbers mean the
// same everywhere. Term 0 is F^H F (data), term 1 is W^H W (penalty).
#pragma once

#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/solvers/cg.hpp"

namespace recon {

struct RecordContext {
    double data_norm2 = 0;     // ||d||^2
    double penalty_weight = 0; // lambda * s
    bool has_truth = false;
    TruthStats truth;
    std::size_t voxels = 0;
};

inline IterationRecord makeIterationRecord(const CgStats& s, const RecordContext& c) {
    IterationRecord r;
    r.iteration = s.iteration;
    r.residual = s.residual;
    // ||F x - d||^2 = x^H F^H F x - 2 Re x^H F^H d + ||d||^2
    r.data_term = s.forms.size() > 0 ? std::max(0.0, s.forms[0] - 2 * s.real_xb + c.data_norm2) : 0.0;
    r.penalty_term = s.forms.size() > 1 ? c.penalty_weight * s.forms[1] : 0.0;
    if (c.has_truth && s.has_reference) {
        const Quality q = qualityFromErrorNorm(s.error_norm2, c.truth.norm2, c.truth.max_abs, c.voxels);
        r.has_truth = true;
        r.error_percent = q.error_percent;
        r.psnr_db = q.psnr_db;
    }
    return r;
}

}  // namespace recon
