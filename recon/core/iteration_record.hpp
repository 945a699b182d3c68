// One solver iteration's scalars, in the units of the cost
// ||F rho - d||^2 + sum_k lambda_k s ||W_k rho||^2: what the runner records,
// the CLI prints, the GUI plots and the HDF5 layout saves.
#pragma once

namespace recon {

struct IterationRecord {
    int iteration = 0;          // counted from the last cold start (inner CG iterations included)
    double residual = 0;        // ||b - A x|| / ||b||
    double data_term = 0;       // ||F rho - d||^2
    double penalty_term = 0;    // the weighted penalty terms, summed
    int outer_iteration = 0;    // two-level solvers (ADMM): the outer step this iteration belongs to, from 1; else 0
    double cost() const { return data_term + penalty_term; }
    double seconds = 0;         // since the solve started (set by the runner)
    bool has_truth = false;
    double error_percent = 0;   // 100 ||rho - truth|| / ||truth||
    double psnr_db = 0;         // 20 log10(max|truth| / sqrt(MSE))
};

}  // namespace recon
