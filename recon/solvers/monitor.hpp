// How the engine talks back to whoever drives it (the CLI's progress bar, the
// GUI's controller): one injected interface, phases as an enum. Everything is
// called on the thread that runs the work; a monitor that forwards to another
// thread (the GUI) does so itself.
#pragma once

#include <atomic>

#include "recon/core/types.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/iteration_record.hpp"

namespace recon {

enum class Phase {
    DensityWeights,  // density compensation for gridding
    Gridding,        // spreading + FFT of a gridding baseline
    AdjointData,     // F^H d, once per data set and Fourier method
    ToeplitzKernel,  // Q on the 2N grid, once per trajectory and method
    Iterating,       // the solver's iterations (one progress step each)
};
const char* toString(Phase p);        // "F^H d", "Q", ...
const char* describe(Phase p);        // a sentence for a status bar

class Monitor {
public:
    explicit Monitor(const std::atomic<bool>* cancel = nullptr) : cancel_(cancel) {}
    virtual ~Monitor() = default;

    // Progress within a phase, 0..1 (Iterating: iterations done / budget).
    virtual void phase(Phase, double /*fraction*/) {}
    // After each iteration; `snapshot` (the current image, on the host) every k iterations and at the end.
    virtual void iteration(int /*coil*/, const IterationRecord&, const ComplexArray* /*snapshot*/) {}

    bool cancelRequested() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
    const std::atomic<bool>* cancelFlag() const { return cancel_; }
    // The Progress that long single operations (sums, gridding) take: reports into phase(p, ·), polls cancel.
    Progress progress(Phase p);

private:
    const std::atomic<bool>* cancel_;
};

}  // namespace recon
