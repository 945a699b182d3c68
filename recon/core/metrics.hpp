// Image quality exactly as the seeds define it (docs/CONVENTIONS.md):
//   MSE = mean |I - I0|^2, PSNR = 20 log10(max|I0| / sqrt(MSE)),
//   percent error = 100 ||I - I0|| / ||I0||.
// Gridded images are first multiplied by the least-squares optimal complex
// scalar a = <I, I0> / <I, I>; iterative results are not rescaled.
#pragma once

#include "recon/core/iteration_record.hpp"
#include "recon/core/types.hpp"

namespace recon {

struct Quality {
    double mse = 0;
    double psnr_db = 0;
    double error_percent = 0;
};

cdouble optimalScale(const ComplexArray& image, const ComplexArray& truth);
Quality measureQuality(const ComplexArray& image, const ComplexArray& truth, bool rescale);
// From an accumulated squared error, for solvers that keep only scalars.
Quality qualityFromErrorNorm(double error_norm2, double truth_norm2, double truth_max, std::size_t voxels);

struct TruthStats {
    double norm2 = 0;
    double max_abs = 0;
};
TruthStats truthStats(const ComplexArray& truth);

// A solver's record from the scalars it keeps: the step count, the residual (1 before the first
// step), the cost terms and, with `truth`, the truth readout from the accumulated squared error.
IterationRecord scalarRecord(int iteration, double residual, double data_term, double penalty_term, const TruthStats* truth,
                             double error_norm2, std::size_t voxels);

}  // namespace recon
