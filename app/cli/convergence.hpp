// `reconstudio-cli benchmark --convergence CASES`: what the circulant preconditioner buys on
// the demo cases, as printed rows (a benchmark, not a test): iterations and whole-
// reconstruction time (Q, F^H d, CG; the preconditioner's setup included) to reach plain CG's
// 60-iteration PSNR, and after a lambda change the warm iterations and time to the PSNR a
// cold 60-iteration solve reaches at the new lambda.
#pragma once

#include <string>

#include "recon/core/data_weighting.hpp"
#include "recon/core/types.hpp"
#include "recon/session/reconstruction.hpp"  // CoilCombination

namespace recon::cli {

// `cases`: demo case names, comma separated, each optionally NAME@N for an N-voxel grid
// (readouts scaled to keep the undersampling). `regularizers`: "case" (each case's own) or a
// comma list. Prints the table; writes JSON rows to `json_path` when not empty.
void runConvergenceStudy(const std::string& cases, const std::string& regularizers, BackendChoice backend,
                         Precision precision, int iterations, const std::string& json_path);

// `reconstudio-cli benchmark --lambda-change CASES`: issue 17's lambda change at a case's size, as
// printed rows. Per case and quadratic prior: a fresh session's cold solve, converged references
// at 2 lambda and lambda, then lambda x2 and back, warm, until the PSNR is within 0.1 dB of the
// converged image's at the new lambda: iterations, wall and CPU seconds, and the distance to that
// image. CG keeps `kept_directions` search directions for the change (SolveOptions::kept_directions);
// multi-coil cases are solved by `coils` (SENSE: one solve, its complex image compared).
void runLambdaChangeStudy(const std::string& cases, const std::string& regularizers, BackendChoice backend, Precision precision,
                          int iterations, DataWeighting weighting, int kept_directions, CoilCombination coils,
                          const std::string& json_path);

// `reconstudio-cli benchmark --sparse CASES`: the sparse priors' speed targets (issue 13), as
// printed rows. Per case and prior (tv: ADMM; wavelet: FISTA and POGM), the PSNR after `reference`
// iterations from a fresh session, then the whole-reconstruction time (Q, F^H d, ||F^H F||, the
// solve; data on the host to image on the host) until the PSNR is within 0.1 dB of it; then
// lambda x2, warm, until within 0.1 dB of the PSNR a cold `reference`-iteration solve reaches there.
// `weightings`: the data terms, comma separated (uniform, density): each its own rows and references;
// `lambda_factors`: each row's lambda times each of these (a sweep around the default); `solver_list`:
// the solvers of every prior's rows, comma separated (empty: admm for tv, FISTA and POGM for wavelets).
void runSparseConvergenceStudy(const std::string& cases, const std::string& priors, const std::string& weightings,
                               const std::string& solver_list, const std::vector<double>& lambda_factors, BackendChoice backend, Precision precision, int reference,
                               const std::string& json_path);

}  // namespace recon::cli
