// Core value types shared by every layer of the engine. The conventions behind
// them (units, memory order, the model) are pinned in recon/core/conventions.hpp
// and written out in docs/CONVENTIONS.md.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

namespace recon {

using cdouble = std::complex<double>;
using cfloat = std::complex<float>;

// Host arrays cross every interface in double precision; a backend converts to
// its working precision once, at its boundary.
using ComplexArray = std::vector<cdouble>;

enum class Precision { Single, Double };
std::string toString(Precision p);

// Which backend a run asks for (recon/backend creates it).
enum class BackendChoice { Auto, Cpu, Cuda };
BackendChoice parseBackendChoice(const std::string& s);  // "auto" | "cpu" | "cuda"
Precision parsePrecision(const std::string& s);  // "float32"/"single", "float64"/"double"

// An image grid: dims = 2 or 3, n[2] == 1 in 2D. Memory order: x fastest.
struct Grid {
    int dims = 3;
    std::array<int, 3> n{1, 1, 1};
    std::array<double, 3> fov_mm{240.0, 240.0, 240.0};  // physical field of view per axis

    static Grid make2D(int nx, int ny);
    static Grid make3D(int nx, int ny, int nz);
    static Grid cube(int dims, int n);

    std::size_t voxels() const { return std::size_t(n[0]) * n[1] * n[2]; }
    std::size_t index(int x, int y, int z) const {
        return (std::size_t(z) * n[1] + y) * n[0] + x;
    }
    // The 2N grid on which Q is evaluated (voxel differences); 2D keeps n[2] == 1.
    Grid doubled() const;
    bool operator==(const Grid& o) const { return dims == o.dims && n == o.n; }
    bool operator!=(const Grid& o) const { return !(*this == o); }
    std::string describe() const;  // "64x64x64"
};

// k-space sample positions in cycles per FOV, three components per sample
// (the third is zero in 2D). Component i goes with image axis i.
struct Trajectory {
    int dims = 3;
    std::vector<double> k;  // size 3*M
    std::string kind;       // "radial-3d", "spiral-2d", ... for display
    int readout_length = 0; // samples per readout (0: unknown)

    std::size_t samples() const { return k.size() / 3; }
    double kx(std::size_t m) const { return k[3 * m]; }
    double ky(std::size_t m) const { return k[3 * m + 1]; }
    double kz(std::size_t m) const { return k[3 * m + 2]; }
    std::size_t readouts() const {
        return readout_length > 0 ? samples() / std::size_t(readout_length) : 1;
    }
};

// Samples on a regular grid at positions x_j = (j - size/2) * spacing, per axis,
// in FOV units. The image grid has spacing 1/N; Q's grid has size 2N, spacing 1/N.
struct SampleGrid {
    int dims = 3;
    std::array<int, 3> size{1, 1, 1};
    std::array<double, 3> spacing{1.0, 1.0, 1.0};
    std::size_t points() const { return std::size_t(size[0]) * size[1] * size[2]; }
    static SampleGrid image(const Grid& g);
    static SampleGrid differences(const Grid& g);  // 2N grid for Q
};

}  // namespace recon
