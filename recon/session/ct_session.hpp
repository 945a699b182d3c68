// A CT reconstruction session (the CT counterpart of ReconstructionSession): one scan on
// one backend; FDK, and the iterative solve with its projector, s and the resident solver
// kept, so that a λ change continues warm. Progress goes to the Monitor: FDK reports per
// view as Phase::Gridding (FDK is CT's analytic baseline, gridding's place in MR), the
// iterative solve one step per CG iteration or OS-SART pass; cancel is honoured at either.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/iteration_record.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/ct/fdk.hpp"
#include "recon/ct/iterative.hpp"
#include "recon/ct/os_sart.hpp"
#include "recon/ct/projector.hpp"
#include "recon/solvers/monitor.hpp"

namespace recon {

// Penalised weighted least squares (CG; ADMM for TV), or OS-SART (no prior: its regularisation
// is the iteration budget and x >= 0).
// Auto: whichever won on the demo cases for this kind of scan (chooseCtSolver).
enum class CtSolver { Auto, Cg, OsSart };
const char* toString(CtSolver s);    // "auto", "cg", "os-sart"
CtSolver parseCtSolver(const std::string& s);  // InputError naming the choices otherwise
// Auto resolved: OS-SART for a noiseless scan (no counts: its error is few views or the model,
// where x >= 0 and early stopping beat a prior), CG with TV for a noisy one (OS-SART has no prior
// and amplifies the noise). Measured in docs/CT_PROJECTOR.md, "Iterative reconstructions".
CtSolver chooseCtSolver(CtSolver requested, const ct::CtData& data);
// The iteration budget when none is given: OS-SART's best passes on the demo cases (it
// semi-converges: noise and model error grow after), CG's 100.
int defaultIterations(CtSolver solver);

struct CtSolveOptions {
    CtSolver solver = CtSolver::Cg;  // Auto: chooseCtSolver
    ct::IterativeOptions iterative;  // prior and λ (CG)
    ct::OsSartCtOptions os_sart;     // subsets, relaxation, non-negativity (OS-SART)
    bool weighted = true;            // W = the scan's counts when it has them, else the identity
    // TV (ADMM) starts from the FDK image: from zero, its early outer steps hold the image near
    // Dx = 0 and it needs hundreds of iterations to reach what CG's quadratic fit reaches in 30.
    bool tv_starts_from_fdk = true;
    int iterations = 60;
    double tolerance = 0;
    int snapshot_every = 0;
    ct::ProjectorOptions projector;
    // Continue the resident solve with the new λ (same prior, weighting and projector), as
    // SolveOptions::warm_start does for MR; otherwise a solve starts from zero. OS-SART
    // continues its passes from the resident iterate when nothing else changed.
    bool warm_start = false;
};

struct CtResult {
    std::vector<double> image;  // 1/mm, geometry.volume.voxels() values
    double seconds = 0;
    std::vector<IterationRecord> history;  // iterative only
    bool cancelled = false;
    bool warm_started = false;
    double lambda_scale = 0;  // s = trace(AᵀWA) / voxels (CG)
    double lambda = 0;        // the λ used (CG; the automatic one's value when it was asked for)
    std::string description;
};

class CtSession {
public:
    CtSession(std::shared_ptr<Backend> backend, std::shared_ptr<const ct::CtData> data);
    ~CtSession();
    const ct::CtData& data() const { return *data_; }

    CtResult fdk(const ct::FdkOptions& options, Monitor& monitor);
    CtResult solve(const CtSolveOptions& options, Monitor& monitor);

private:
    struct Resident;
    std::shared_ptr<Backend> backend_;
    std::shared_ptr<const ct::CtData> data_;
    std::unique_ptr<Resident> resident_;
};

}  // namespace recon
