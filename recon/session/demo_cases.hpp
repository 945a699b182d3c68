// The built-in demo cases: analytic phantom + trajectory (+ noise), made on the fly.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recon/core/dataset.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon {

struct CaseSpec {
    std::string name;
    TrajectorySpec trajectory;
    double snr_db = 0;          // 0: noiseless
    std::uint64_t seed = 1;
    int truth_subsamples = 3;
    double lambda = 0.02;       // a good lambda for this case (tuned)
    std::string regularizer = "fd";
    bool reference = true;      // also simulate a reference scan (other contrast) for the anatomical prior
    // Receive coils (SyntheticCoils, exact k-space). With several the truth is the coil-combined
    // magnitude |rho| sqrt(sum_c |S_c|^2): what sum of squares of perfect coil images gives, and
    // what SENSE with maps normalised to unit root sum of squares estimates.
    int coils = 1;
};

// The named presets ("default" is the acceptance case: 3D Shepp-Logan, 64^3,
// 3D radial, 1,024 spokes x 64 samples, noiseless).
std::vector<CaseSpec> demoCases();
CaseSpec demoCase(const std::string& name);  // throws InputError listing the names
std::shared_ptr<Dataset> simulate(const CaseSpec& spec);

}  // namespace recon

#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"

namespace recon {
// The Gibbs floor of a simulated case: the quality of the reconstruction from
// full Cartesian data (every integer k in the band, exact analytic values)
// against the case's truth. Methods without prior knowledge stay below it; a
// regulariser that knows the object's edges (the anatomical prior) can pass it.
Quality cartesianFloor(const CaseSpec& spec, const Dataset& data, Backend& backend);
}  // namespace recon
