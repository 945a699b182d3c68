#include "recon/ct/ct_data.hpp"

#include <cmath>

#include "recon/ct/phantom.hpp"

namespace recon::ct {

void CtData::validate(const std::string& origin) const {
    try {
        ct::validate(geometry);
    } catch (const InputError& e) {
        throw InputError(origin + ": " + e.what());
    }
    if (projections.size() != geometry.beam.samples())
        throw InputError(origin + ": " + std::to_string(projections.size()) + " projection values for " +
                         std::to_string(geometry.beam.views()) + " views of " +
                         std::to_string(geometry.beam.detector_rows) + " x " +
                         std::to_string(geometry.beam.detector_columns) + " pixels");
    for (std::size_t i = 0; i < projections.size(); ++i)
        if (!std::isfinite(projections[i]))
            throw InputError(origin + ": projection value " + std::to_string(i) + " is not finite");
    if (!counts.empty()) {
        if (counts.size() != projections.size())
            throw InputError(origin + ": " + std::to_string(counts.size()) + " counts for " +
                             std::to_string(projections.size()) + " projection values");
        for (std::size_t i = 0; i < counts.size(); ++i)
            if (!(counts[i] >= 0) || !std::isfinite(counts[i]))
                throw InputError(origin + ": count " + std::to_string(i) + " is negative or not finite");
    }
    if (!(photons >= 0) || !std::isfinite(photons))
        throw InputError(origin + ": incident photons must be >= 0, got " + formatNumber(photons));
    if (!truth.empty()) {
        if (truth.size() != geometry.volume.voxels())
            throw InputError(origin + ": the truth has " + std::to_string(truth.size()) + " values for " +
                             std::to_string(geometry.volume.voxels()) + " voxels");
        for (double v : truth)
            if (!std::isfinite(v)) throw InputError(origin + ": the truth has non-finite values");
    }
}

namespace {

// A head-sized fan beam: a 128 x 128 slice of 2 mm voxels (256 mm), source 500 mm from the
// isocentre, detector 800 mm from the source, 192 columns of 3.2 mm (2 mm at the isocentre).
CtGeometry headFan(int views) {
    CtGeometry g;
    g.beam.source_to_isocentre_mm = 500;
    g.beam.source_to_detector_mm = 800;
    g.beam.detector_columns = 192;
    g.beam.detector_rows = 1;
    g.beam.pixel_u_mm = 3.2;
    g.beam.angles_rad = fullScanAngles(views);
    g.volume.size = {128, 128, 1};
    g.volume.voxel_mm = {2, 2, 2};
    return g;
}

}  // namespace

std::vector<CtCase> ctDemoCases() {
    std::vector<CtCase> cases;
    cases.push_back({"ct-2d", "fan beam, 128^2 slice of 2 mm, 360 views over a full turn, noiseless", headFan(360)});
    cases.push_back({"ct-2d-sparse", "the ct-2d scan with 60 views (sparse view), noiseless", headFan(60)});
    CtCase low{"ct-2d-lowdose", "the ct-2d scan at 500 incident photons per pixel (Poisson noise)", headFan(360)};
    low.photons = 500;
    low.seed = 18;
    low.fd_lambda = 0.03;  // best of 0.03, 0.1, 0.3 (60 iterations); 0.1, best on ct-2d-sparse, loses 0.65 dB
    cases.push_back(low);
    CtCase half{"ct-2d-short", "the ct-2d scan as a short scan (π + fan angle, 240 views; Parker weights)", headFan(240)};
    half.geometry.beam.angles_rad = shortScanAngles(half.geometry.beam, 240);
    cases.push_back(half);
    CtCase cone{"ct-3d", "cone beam, 64^3 volume of 4 mm, 96 x 96 detector, 180 views, noiseless", {}};
    CtGeometry& g = cone.geometry;
    g.beam.source_to_isocentre_mm = 500;
    g.beam.source_to_detector_mm = 800;
    g.beam.detector_columns = 96;
    g.beam.detector_rows = 96;
    g.beam.pixel_u_mm = g.beam.pixel_v_mm = 6.4;
    g.beam.angles_rad = fullScanAngles(180);
    g.volume.size = {64, 64, 64};
    g.volume.voxel_mm = {4, 4, 4};
    cone.subpixels = 2;
    cases.push_back(cone);
    return cases;
}

bool isCtCase(const std::string& name) {
    for (const CtCase& c : ctDemoCases())
        if (c.name == name) return true;
    return false;
}

CtCase ctDemoCase(const std::string& name) {
    std::string names;
    for (const CtCase& c : ctDemoCases()) {
        if (c.name == name) return c;
        names += (names.empty() ? "" : ", ") + c.name;
    }
    throw InputError("unknown CT case '" + name + "' (" + names + ")");
}

CtData simulate(const CtCase& c, const Progress& progress) {
    validate(c.geometry);
    CtData d;
    d.name = c.name;
    d.source = "simulated: " + c.description + "; exact line integrals of the Shepp-Logan ellipsoids, " +
               std::to_string(c.subpixels) + (c.geometry.beam.fanBeam() ? "" : "^2") + " rays per pixel";
    d.geometry = c.geometry;
    const CtPhantom phantom = CtPhantom::sheppLogan(c.geometry.volume);
    d.projections = phantom.project(c.geometry, c.subpixels, progress);
    d.photons = c.photons;
    if (c.photons > 0) d.counts = addPoissonNoise(d.projections, c.photons, c.seed);
    d.truth = phantom.voxelise(c.geometry.volume);
    return d;
}

}  // namespace recon::ct
