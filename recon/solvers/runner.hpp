// One runner owns every solve's loop (SigPy's App around an Alg): the step
// budget, the stopping rule, cancel, per-iteration records with wall time,
// snapshots every k iterations, and the check that the numbers are still
// numbers. An algorithm only knows how to take one step.
#pragma once

#include <vector>

#include "recon/core/iteration_record.hpp"
#include "recon/core/types.hpp"
#include "recon/solvers/monitor.hpp"

namespace recon {

// One iteration at a time; step() returns false when nothing is left to do.
// One step is one progress unit: one CG iteration, inner iterations included.
class IterativeAlgorithm {
public:
    virtual ~IterativeAlgorithm() = default;
    virtual bool step() = 0;
    virtual IterationRecord record() const = 0;       // after the last step (iteration 0: the start)
    // The same with the data term exact where the cheap record's form of it is below its accuracy
    // (recon/solvers/data_term.hpp: one operator application then); by default record().
    virtual IterationRecord exactRecord() const { return record(); }
    // The iteration and residual alone, where the rest of the record costs a pass over the vectors
    // (CG's inner products with the iterate); by default the whole record.
    virtual IterationRecord progressRecord() const { return record(); }
    virtual void image(ComplexArray& out) const = 0;  // the current iterate, to host
};

struct RunOptions {
    int iterations = 60;      // the step budget of this run
    double tolerance = 0;     // stop when the relative residual falls below (0: use the whole budget)
    int snapshot_every = 5;   // snapshots to the monitor every k iterations (0: the last only)
    // Every record with the cost terms and the error (the GUI's live plot, a saved history); false:
    // the records before the last carry the iteration, residual and time only (progressRecord).
    bool record_costs = true;
    // Every such record's data term exact (exactRecord: one forward application each where the fit is
    // better than the expanded form's accuracy; `recon --exact-records`); false: the last record's
    // only (with record_costs), the others in the cheap expanded form.
    bool exact_data_term = false;
};

enum class StopReason { Budget, Converged, NothingLeft, Cancelled };
const char* toString(StopReason r);

struct RunResult {
    std::vector<IterationRecord> history;  // one record per step taken
    ComplexArray image;                    // the last complete iterate
    StopReason reason = StopReason::Budget;
    bool cancelled() const { return reason == StopReason::Cancelled; }
    double seconds = 0;
};

// Runs `alg` until the budget, the tolerance, cancel or the end. Throws
// NumericalError when a record turns non-finite (overflow in the working precision).
RunResult runIterations(IterativeAlgorithm& alg, const RunOptions& opts, Monitor& monitor, int coil = 0);

}  // namespace recon
