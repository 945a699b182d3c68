// A CT data set as the CLI, the files and the reconstructions see it, and the
// simulated demo cases (ct-2d, ct-2d-sparse, ct-2d-lowdose, ct-2d-short, ct-3d).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/ct/geometry.hpp"

namespace recon::ct {

struct CtData {
    std::string name;
    std::string source;               // where it came from
    CtGeometry geometry;
    std::vector<double> projections;  // line integrals, geometry.beam.samples() values (u fastest, then v, view)
    double photons = 0;               // incident photons per pixel of a noisy scan (0: noiseless)
    std::vector<double> counts;       // detected counts (empty when noiseless): the WLS weights
    std::vector<double> truth;        // optional true volume (geometry.volume.voxels()), 1/mm

    bool hasTruth() const { return !truth.empty(); }
    // Throws InputError naming what is wrong (geometry, sizes, non-finite values, counts < 0).
    void validate(const std::string& origin = "CT data") const;
};

// A simulated scan of the Shepp-Logan sized to the volume (recon/ct/phantom.hpp).
struct CtCase {
    std::string name, description;
    CtGeometry geometry;
    double photons = 0;     // 0: noiseless
    std::uint64_t seed = 1;
    int subpixels = 3;      // rays per pixel side for the analytic line integrals
    double fd_lambda = 0;   // the finite-difference λ tuned for this case (0: ct::defaultLambda's)
};

std::vector<CtCase> ctDemoCases();
bool isCtCase(const std::string& name);
CtCase ctDemoCase(const std::string& name);  // InputError listing the names otherwise

// Analytic line integrals of the case's phantom, Poisson noise when photons > 0, the truth.
CtData simulate(const CtCase& c, const Progress& progress = {});

}  // namespace recon::ct
