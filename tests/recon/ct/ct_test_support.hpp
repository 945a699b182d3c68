// Geometries and references shared by the CT tests.
#pragma once

#include <array>
#include <vector>

#include "recon/core/types.hpp"
#include "recon/ct/geometry.hpp"

namespace recon::ct::test {

// A fan beam on an n x n slice of 1 mm voxels: D_so 400 mm, D_sd 600 mm, a detector of
// `columns` pixels whose width at the isocentre is one voxel, `views` over a full scan.
CtGeometry fanBeam(int n, int columns, int views);
// A cone beam on an n^3 volume of 1 mm voxels, a rows x columns detector, pixels one voxel
// wide at the isocentre; D_so 300 mm, D_sd 450 mm.
CtGeometry coneBeam(int n, int columns, int rows, int views);

// The exact line integral of an axis-aligned box [lo, hi] of `attenuation` along the line
// through `point` in `direction` (slab method).
double boxLineIntegral(const std::array<double, 3>& lo, const std::array<double, 3>& hi, double attenuation,
                       const std::array<double, 3>& point, const std::array<double, 3>& direction, int dims);
// Every pixel's mean over sub x sub rays (sub x 1 for fan beam) of the box's line integral.
std::vector<double> projectBox(const CtGeometry& g, const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                               double attenuation, int sub);

// The CPU DD projector as a dense row-major matrix (beam.samples() x volume.voxels()), column by column.
std::vector<double> denseProjector(const CtGeometry& g);
// Solves the symmetric positive definite system m x = b (n x n, row-major) by Cholesky.
std::vector<double> denseSolve(std::vector<double> m, std::vector<double> b, int n);

double relativeError(const std::vector<double>& a, const std::vector<double>& ref);  // ||a - ref|| / ||ref||
ComplexArray toComplex(const std::vector<double>& v);
std::vector<double> realPart(const ComplexArray& v);

}  // namespace recon::ct::test
