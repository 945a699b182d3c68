// `reconstudio-cli benchmark`: the reference paper's Figure 9 (F^H d by every
// kernel version) and what lies beyond it on this machine (exact-fast, NUFFT),
// then Q, 60 CG iterations, whole reconstructions and a lambda re-solve; CPU
// rows for scale. Prints a table and writes JSON (--json FILE).
#pragma once

#include <string>
#include <vector>

namespace recon::cli {

int runBenchmark(const std::vector<std::string>& args);

}  // namespace recon::cli
