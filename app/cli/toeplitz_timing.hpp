// `reconstudio-cli benchmark --toeplitz GRIDS`: the CPU Toeplitz product (F^H F x through the
// 2N grid) as the CPU backend runs it (recon/nufft/padded_convolution: pruned FFTs, the
// spectrum product fused into the slowest axis's transforms) against the plain product it
// replaced (whole 2N-grid FFTs, product, whole inverse, crop), and the same pruned product
// with the fused stage's tiles as wide as a thread's share of the grid (so each step is a
// pass over the whole half grid: what fusing avoids). Printed rows, not a test.
#pragma once

#include <string>

namespace recon::cli {

// `grids`: comma separated, each NxN or NxNxN. `repetitions`: products timed per variant.
void runToeplitzTiming(const std::string& grids, int repetitions);

}  // namespace recon::cli
