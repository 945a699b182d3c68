#include "recon/solvers/runner.hpp"

#include <chrono>
#include <cmath>
#include <sstream>

namespace recon {

const char* toString(Phase p) {
    switch (p) {
        case Phase::DensityWeights: return "density weights";
        case Phase::Gridding: return "gridding";
        case Phase::AdjointData: return "F^H d";
        case Phase::ToeplitzKernel: return "Q";
        case Phase::Iterating: return "iterations";
    }
    return "?";
}

const char* describe(Phase p) {
    switch (p) {
        case Phase::DensityWeights: return "Computing density weights (once per trajectory)";
        case Phase::Gridding: return "Gridding";
        case Phase::AdjointData: return "Computing F^H d (once per data)";
        case Phase::ToeplitzKernel: return "Computing Q (the Toeplitz kernel, once per trajectory)";
        case Phase::Iterating: return "Iterating";
    }
    return "";
}

Progress Monitor::progress(Phase p) {
    Progress progress;
    progress.cancel = cancel_;
    progress.report = [this, p](double f) { phase(p, f); };
    return progress;
}

const char* toString(StopReason r) {
    switch (r) {
        case StopReason::Budget: return "iteration budget";
        case StopReason::Converged: return "converged";
        case StopReason::NothingLeft: return "nothing left to do";
        case StopReason::Cancelled: return "cancelled";
    }
    return "?";
}

namespace {
bool finite(const IterationRecord& r) {
    return std::isfinite(r.residual) && std::isfinite(r.data_term) && std::isfinite(r.penalty_term);
}
}  // namespace

RunResult runIterations(IterativeAlgorithm& alg, const RunOptions& opts, Monitor& monitor, int coil) {
    if (opts.iterations < 0) throw InputError("the number of iterations must not be negative");
    if (!(opts.tolerance >= 0) || !std::isfinite(opts.tolerance)) throw InputError("the tolerance must be a finite number >= 0");
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    RunResult result;
    const IterationRecord start = alg.record();
    if (!finite(start)) {
        std::ostringstream s;
        s << "the solve cannot start: its initial residual or cost is not a finite number (data or lambda too large "
             "for the working precision, or NaN in the input)";
        throw NumericalError(s.str());
    }
    bool snapshot_current = false, last_complete = true;
    for (int it = 1; it <= opts.iterations; ++it) {
        if (monitor.cancelRequested()) {
            result.reason = StopReason::Cancelled;
            break;
        }
        if (!alg.step()) {
            result.reason = StopReason::NothingLeft;
            break;
        }
        const bool exact = opts.record_costs && opts.exact_data_term;
        IterationRecord rec = exact ? alg.exactRecord() : opts.record_costs ? alg.record() : alg.progressRecord();
        const bool converged = opts.tolerance > 0 && rec.residual < opts.tolerance;
        const bool last = it == opts.iterations || converged;
        // The last record whole, and exact where costs are recorded (what the plot, a report and the
        // discrepancy principle read); without costs nobody reads its data term: no forward application.
        if (last && !exact) rec = opts.record_costs ? alg.exactRecord() : alg.record();
        last_complete = exact || last;
        rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!finite(rec)) {
            std::ostringstream s;
            s << "the solve diverged at iteration " << rec.iteration
              << ": the residual or cost is no longer a finite number (overflow in the working precision)";
            throw NumericalError(s.str());
        }
        result.history.push_back(rec);
        if (converged) result.reason = StopReason::Converged;
        const bool snap = last || (opts.snapshot_every > 0 && it % opts.snapshot_every == 0);
        if (snap) alg.image(result.image);  // the same host array each time: no fresh pages to fault in
        snapshot_current = snap;
        monitor.phase(Phase::Iterating, opts.iterations > 0 ? double(it) / opts.iterations : 1.0);
        monitor.iteration(coil, rec, snap ? &result.image : nullptr);
        if (last) break;
    }
    if (!last_complete && !result.history.empty()) {  // stopped early (nothing left, cancelled): the last record whole
        IterationRecord& back = result.history.back();
        const double seconds = back.seconds;
        back = opts.record_costs ? alg.exactRecord() : alg.record();
        back.seconds = seconds;
    }
    if (!snapshot_current) alg.image(result.image);
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return result;
}

}  // namespace recon
