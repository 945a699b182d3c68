#include "recon/core/types.hpp"

#include <stdexcept>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"

namespace recon {

std::string toString(Precision p) { return p == Precision::Single ? "float32" : "float64"; }

Precision parsePrecision(const std::string& s) {
    if (s == "float32" || s == "single" || s == "float" || s == "sp") return Precision::Single;
    if (s == "float64" || s == "double" || s == "dp") return Precision::Double;
    throw std::invalid_argument("unknown precision '" + s + "' (expected float32 or float64)");
}

Grid Grid::make2D(int nx, int ny) {
    Grid g;
    g.dims = 2;
    g.n = {nx, ny, 1};
    return g;
}

Grid Grid::make3D(int nx, int ny, int nz) {
    Grid g;
    g.dims = 3;
    g.n = {nx, ny, nz};
    return g;
}

Grid Grid::cube(int dims, int n) { return dims == 2 ? make2D(n, n) : make3D(n, n, n); }

Grid Grid::doubled() const {
    Grid g = *this;
    for (int a = 0; a < dims; ++a) {
        g.n[a] = 2 * n[a];
        g.fov_mm[a] = 2 * fov_mm[a];
    }
    return g;
}

std::string Grid::describe() const {
    std::string s = std::to_string(n[0]) + "x" + std::to_string(n[1]);
    if (dims == 3) s += "x" + std::to_string(n[2]);
    return s;
}

SampleGrid SampleGrid::image(const Grid& g) {
    SampleGrid s;
    s.dims = g.dims;
    s.size = g.n;
    for (int a = 0; a < 3; ++a) s.spacing[a] = 1.0 / g.n[a];
    return s;
}

SampleGrid SampleGrid::differences(const Grid& g) {
    SampleGrid s = image(g);
    for (int a = 0; a < g.dims; ++a) s.size[a] = 2 * g.n[a];
    return s;
}

std::string toString(BasisFunction b) { return b == BasisFunction::BoxVoxel ? "box" : "point"; }

BasisFunction parseBasis(const std::string& s) {
    if (s == "box" || s == "sinc") return BasisFunction::BoxVoxel;
    if (s == "point" || s == "none" || s == "dirac") return BasisFunction::Point;
    throw std::invalid_argument("unknown voxel basis '" + s + "' (expected box or point)");
}

std::string toString(TrajectoryUnits u) {
    switch (u) {
        case TrajectoryUnits::CyclesPerFov: return "cycles-per-fov";
        case TrajectoryUnits::CyclesPerVoxel: return "cycles-per-voxel";
        case TrajectoryUnits::RadiansPerVoxel: return "radians";
    }
    return "?";
}

TrajectoryUnits parseTrajectoryUnits(const std::string& s) {
    if (s == "cycles-per-fov" || s == "fov" || s == "bart") return TrajectoryUnits::CyclesPerFov;
    if (s == "cycles-per-voxel" || s == "voxel" || s == "normalized") return TrajectoryUnits::CyclesPerVoxel;
    if (s == "radians" || s == "rad") return TrajectoryUnits::RadiansPerVoxel;
    throw std::invalid_argument("unknown trajectory units '" + s +
                                "' (expected cycles-per-fov, cycles-per-voxel or radians)");
}

double toCyclesPerFov(TrajectoryUnits units, int n) {
    switch (units) {
        case TrajectoryUnits::CyclesPerFov: return 1.0;
        case TrajectoryUnits::CyclesPerVoxel: return n;
        case TrajectoryUnits::RadiansPerVoxel: return n / (2 * kPi);
    }
    return 1.0;
}

double regularizationScale(BasisFunction b, const Grid& g, const Trajectory& t) {
    double s = 0;
    for (std::size_t m = 0; m < t.samples(); ++m) {
        double p = basisTransform(b, g, t.kx(m), t.ky(m), t.kz(m));
        s += p * p;
    }
    return s;
}

namespace {
// How far a trajectory reaches beyond the band, and the unit mistake that scale points to:
// values already in cycles per FOV converted again as cycles per voxel (x N) or as radians
// per voxel (x N / 2 pi).
std::string likelyUnitMistake(const Grid& g, const Trajectory& t) {
    double reach = 0;  // the largest |k| relative to its axis's band edge N/2
    int axis = 0;
    for (std::size_t m = 0; m < t.samples(); ++m)
        for (int a = 0; a < g.dims; ++a) {
            const double r = std::abs(t.k[3 * m + a]) / (g.n[a] / 2.0);
            if (std::isfinite(r) && r > reach) reach = r, axis = a;
        }
    if (!(reach > 1)) return "";
    const double n = g.n[axis];
    // A trajectory in the right units reaches 85-100 % of the band (spirals and radial readouts may stop short).
    auto near = [&](double scale) { return reach > 0.85 * scale && reach < 1.05 * scale; };
    std::string s = "; the trajectory reaches " + formatNumber(std::round(reach * 10) / 10) +
                    " times the band's edge: likely in other units, scaled by about " + formatNumber(std::round(reach));
    if (near(n))
        s += " = N, as when values in cycles per FOV are declared cycles per voxel";
    else if (n > 8 && near(n / (2 * kPi)))
        s += " = N/(2 pi), as when values in cycles per FOV are declared radians per voxel";
    return s + " (this program uses cycles per FOV; --units overrides a file's units)";
}
}  // namespace

bool trajectoryInBand(const Grid& g, const Trajectory& t, std::string* why) {
    for (std::size_t m = 0; m < t.samples(); ++m) {
        for (int a = 0; a < g.dims; ++a) {
            double k = t.k[3 * m + a];
            double half = g.n[a] / 2.0;
            if (!std::isfinite(k) || k < -half - 1e-9 || k > half + 1e-9) {
                if (why) {
                    *why = "sample " + std::to_string(m) + " axis " + std::to_string(a) + " has k = " + formatNumber(k) +
                           " cycles/FOV, outside the band [" + formatNumber(-half) + ", " + formatNumber(half) + "] of a " +
                           std::to_string(g.n[a]) + "-voxel axis" +
                           (std::isfinite(k) ? likelyUnitMistake(g, t) : std::string(" (not a number)"));
                }
                return false;
            }
        }
    }
    return true;
}

BackendChoice parseBackendChoice(const std::string& s) {
    if (s == "auto") return BackendChoice::Auto;
    if (s == "cpu") return BackendChoice::Cpu;
    if (s == "cuda" || s == "gpu") return BackendChoice::Cuda;
    throw InputError("unknown backend '" + s + "' (expected auto, cpu or cuda)");
}

}  // namespace recon
