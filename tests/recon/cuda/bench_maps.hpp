// Synthetic coil maps for the GPU benchmarks (sense_bench, multi_gpu_bench).
#pragma once

#include <cmath>
#include <complex>
#include <thread>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

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
