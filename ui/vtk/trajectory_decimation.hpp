// Which k-space samples a 3D view draws when a trajectory has more than it
// can show smoothly. Whole readouts are kept (every stride-th one), so what is
// drawn still looks like the sampling pattern: full spokes or spiral arms, only
// fewer of them. Without a known readout length, every stride-th sample.
// No Qt, no VTK: tested on its own.
#pragma once

#include <cstddef>

namespace reconstudio::vtkviews {

struct DecimationPlan {
    std::size_t samples = 0;      // in the trajectory
    std::size_t unitLength = 1;   // samples per kept unit: a readout, or 1
    std::size_t stride = 1;       // keep every stride-th unit, starting with the first
    std::size_t drawn = 0;        // samples kept; drawn <= max(maxPoints, 1)

    std::size_t units() const { return (samples + unitLength - 1) / unitLength; }
    // Calls f(m) for each kept sample index m, ascending.
    template <class F>
    void forEachKept(F&& f) const {
        for (std::size_t u = 0; u < units(); u += stride) {
            const std::size_t begin = u * unitLength;
            const std::size_t end = begin + unitLength < samples ? begin + unitLength : samples;
            for (std::size_t m = begin; m < end; ++m) f(m);
        }
    }
};

// readoutLength <= 0: unknown. maxPoints == 0 is treated as 1.
DecimationPlan planDecimation(std::size_t samples, int readoutLength, std::size_t maxPoints);

}  // namespace reconstudio::vtkviews
