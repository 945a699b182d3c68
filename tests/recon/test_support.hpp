// Brute-force references and helpers shared by the engine's tests.
#pragma once

#include <random>

#include <memory>

#include "recon/backend/backend.hpp"
#include "recon/core/conventions.hpp"
#include "recon/core/types.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/solvers/normal_cg.hpp"

namespace recon::test {

// The plain double sum of the seeds' Fig. 14.4, one term at a time.
ComplexArray bruteAdjoint(const Trajectory& t, const ComplexArray& c, const SampleGrid& g);
ComplexArray bruteForward(const Trajectory& t, const ComplexArray& f, const SampleGrid& g);

ComplexArray randomComplex(std::size_t n, unsigned seed);
// Random samples inside the band of grid g, including some exactly at -N/2 and clustered near 0.
Trajectory randomTrajectory(const Grid& g, std::size_t m, unsigned seed);

double relativeError(const ComplexArray& a, const ComplexArray& ref);
cdouble inner(const ComplexArray& a, const ComplexArray& b);  // a^H b
// y projected onto the ball of radius w per group (the dual step of the l2,1 norm in the reference
// primal-dual solves): `group` components per voxel, stored y.size() / group apart.
void projectOntoGroupBalls(ComplexArray& y, std::size_t group, double w);

// CG on (F^H F + weight W^T W) x = rhs as the session builds it: F with phi = 1 on
// `t`, its normal the Toeplitz kernel `tk`; no penalty term when `reg` is null.
std::unique_ptr<NormalEquationsCg> toeplitzCg(Backend& b, const Trajectory& t, std::shared_ptr<const ToeplitzOperator> tk,
                                              const ComplexArray& rhs, double data_norm2, const Regularizer* reg = nullptr,
                                              double weight = 0);

}  // namespace recon::test
