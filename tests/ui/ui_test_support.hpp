// Helpers shared by the workstation's Qt Test suites.
#pragma once

#include <QString>

#include "ui/image_layers.hpp"

namespace studio::testing {

// The smallest built-in demo case (2D, 48^2, 40 golden-angle spokes, with a truth).
inline const QString kSmallDemo = QStringLiteral("small-2d");
// Generous: CI shares two cores among everything; a solve of this case takes ~1 s.
constexpr int kSolveTimeoutMs = 60000;

// A 3D volume whose value identifies its voxel: v(x, y, z) = x + 100 y + 10000 z
// (real), so a test knows what every view must show where.
inline double codedValue(int x, int y, int z) { return x + 100.0 * y + 10000.0 * z; }
inline Volume codedVolume(const recon::Grid& g, double offset = 0) {
    recon::ComplexArray v(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) v[g.index(x, y, z)] = codedValue(x, y, z) + offset;
    return Volume::make(g, std::move(v));
}

}  // namespace studio::testing
