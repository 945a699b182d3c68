#include "ui/vtk/trajectory_decimation.hpp"

#include <algorithm>

namespace reconstudio::vtkviews {

DecimationPlan planDecimation(std::size_t samples, int readoutLength, std::size_t maxPoints) {
    DecimationPlan p;
    p.samples = samples;
    maxPoints = std::max<std::size_t>(maxPoints, 1);
    // Whole readouts only when at least one fits in the budget.
    p.unitLength = (readoutLength > 0 && std::size_t(readoutLength) <= maxPoints) ? std::size_t(readoutLength) : 1;
    const std::size_t units = p.units();
    const std::size_t unitBudget = std::max<std::size_t>(maxPoints / p.unitLength, 1);
    p.stride = units <= unitBudget ? 1 : (units + unitBudget - 1) / unitBudget;
    p.drawn = 0;
    for (std::size_t u = 0; u < units; u += p.stride)
        p.drawn += std::min(p.unitLength, samples - u * p.unitLength);
    return p;
}

}  // namespace reconstudio::vtkviews
