// Brute-force references and helpers shared by the engine's tests.
#pragma once

#include <random>

#include "recon/core/conventions.hpp"
#include "recon/core/types.hpp"

namespace recon::test {

// The plain double sum of the seeds' Fig. 14.4, one term at a time.
ComplexArray bruteAdjoint(const Trajectory& t, const ComplexArray& c, const SampleGrid& g);
ComplexArray bruteForward(const Trajectory& t, const ComplexArray& f, const SampleGrid& g);

ComplexArray randomComplex(std::size_t n, unsigned seed);
// Random samples inside the band of grid g, including some exactly at -N/2 and clustered near 0.
Trajectory randomTrajectory(const Grid& g, std::size_t m, unsigned seed);

double relativeError(const ComplexArray& a, const ComplexArray& ref);
cdouble inner(const ComplexArray& a, const ComplexArray& b);  // a^H b

}  // namespace recon::test
