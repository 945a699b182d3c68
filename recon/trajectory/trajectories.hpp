// Trajectory generators, all in cycles per FOV on a grid of n voxels per axis
// (band [-n/2, n/2)). Readouts are contiguous in memory: sample m belongs to
// readout m / readout_length.
#pragma once

#include <string>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

enum class TrajectoryKind { Radial3D, StackOfSpirals, GoldenAngleRadial2D, Spiral2D };
std::string toString(TrajectoryKind k);
TrajectoryKind parseTrajectoryKind(const std::string& s);  // radial-3d, stack-of-spirals, radial-2d, spiral-2d
int dimsOf(TrajectoryKind k);

struct TrajectorySpec {
    TrajectoryKind kind = TrajectoryKind::Radial3D;
    int n = 64;               // grid size per axis the trajectory is designed for
    int readout = 0;          // samples per readout (0: n for radial, chosen for spirals)
    int readouts = 0;         // spokes / interleaves (per partition for stack-of-spirals); 0: fully sampled
    double undersampling = 1; // divides the Nyquist number of readouts when readouts == 0
    double density_power = 1.5; // variable-density spiral: radius = kmax * tau^power (> 1: denser centre)
};

// 3D radial "kooshball": full-diameter spokes whose directions follow the 2D
// golden means (Chan et al. 2009), so any prefix of spokes covers the sphere evenly.
Trajectory radial3D(int n, int spokes, int readout);
// 2D golden-angle radial (111.246 degrees between successive spokes).
Trajectory goldenAngleRadial2D(int n, int spokes, int readout);
// 2D variable-density spiral: `interleaves` rotated copies, denser at the centre.
Trajectory variableDensitySpiral2D(int n, int interleaves, int readout, double density_power = 1.5);
// 3D stack of spirals: the 2D spiral on each of `partitions` kz planes (Cartesian in kz).
Trajectory stackOfSpirals(int n, int partitions, int interleaves, int readout, double density_power = 1.5);

Trajectory makeTrajectory(const TrajectorySpec& spec);
// Readouts needed for Nyquist sampling at the edge of k-space for this kind and size.
int nyquistReadouts(TrajectoryKind kind, int n);

// For a trajectory whose readouts are straight spokes through the centre (full or
// half diameter, from any source): Nyquist spokes for `grid` / spokes present,
// counting a full spoke as two halves (1: Nyquist at the edge of k-space; 3: a third
// of that). 0 when the readouts are not such spokes or their length is unknown.
double radialUndersampling(const Trajectory& t, const Grid& grid);

// Density weights of straight spokes through the centre, `dims`-dimensional: the radial density
// |k|^(dims-1) times the sample's cell along the spoke (between the midpoints to its neighbours, so
// unequal spacing, as on a gradient's ramp, counts). That is the midpoint rule for the smooth integrand
// r^(dims-1) g(r): second order, and better on BART's 3D phantoms than each cell's exact shell share
// (r^2 + dr^2/12 in 3D: -0.25 dB at Nyquist). The cell around the centre is the exception: |k|^(dims-1)
// vanishes there (and has a kink in 2D), so a sample at k = 0 gets its cell's exact share instead of 0
// (on spokes that sample k = 0, +3.6 dB in 2D and +1.9 dB in 3D over the point value). Scaled so they add
// up to the volume of the ball the cells reach. Where the readouts are not such spokes (or their length
// is unknown), the point value |k|^(dims-1), scaled likewise.
std::vector<double> radialDensityWeights(const Trajectory& t, int dims);

}  // namespace recon
