// The GPU benchmarks' synthetic data (sense_bench, multi_gpu_bench): the paper's trajectory scaled
// to any grid, and smooth coil maps.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <thread>
#include <vector>

#include "recon/core/types.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon {

// The reference paper's 3D radial case (M = 284,592 at 128^3) with M scaled as n^3.
inline Trajectory paperTrajectory(int n) {
    const double f = n / 128.0;
    const double m = 284592 * f * f * f;
    const int readout = std::max(8, int(std::lround(112 * f)));
    Trajectory traj = radial3D(n, int(std::ceil(m / readout)), readout);
    traj.k.resize(3 * std::size_t(std::llround(m)));
    return traj;
}

// Smooth coil maps: Gaussian bumps on a ring around the object (alternating heights along z),
// each with its own phase. Enough for timing: the split does not depend on the maps' values.
inline ComplexArray ringMaps(const Grid& g, int coils) {
    ComplexArray maps(std::size_t(coils) * g.voxels());
    std::vector<std::thread> threads;  // a coil per thread: 32 coils of 256^3 take seconds each
    for (int c = 0; c < coils; ++c) threads.emplace_back([&, c] {
        const double a = 2 * M_PI * c / coils, cx = 0.35 * std::cos(a), cy = 0.35 * std::sin(a), cz = (c % 2 ? 0.15 : -0.15);
        const cdouble phase = std::polar(1.0, 0.7 * c);
        for (int z = 0; z < g.n[2]; ++z)
            for (int y = 0; y < g.n[1]; ++y)
                for (int x = 0; x < g.n[0]; ++x) {
                    const double dx = (x - g.n[0] / 2) / double(g.n[0]) - cx, dy = (y - g.n[1] / 2) / double(g.n[1]) - cy,
                                 dz = (z - g.n[2] / 2) / double(g.n[2]) - cz;
                    const std::size_t i = (std::size_t(z) * g.n[1] + y) * g.n[0] + x;
                    maps[std::size_t(c) * g.voxels() + i] = phase * std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * 0.3 * 0.3));
                }
    });
    for (auto& t : threads) t.join();
    return maps;
}

}  // namespace recon
