// `reconstudio-cli batch`: one recipe over many data sets, on this machine (a
// bounded pool of worker processes) or on a Slurm cluster (one sbatch job array).
// Either way every data set is one `reconstudio-cli recon --recipe` run, and its
// outcome one small JSON record; the summary, resume and retry read only those.
// Layout of the output folder and the commands: docs/BATCH.md.
#pragma once

#include <string>
#include <vector>

namespace recon::cli {

// batch --recipe R --manifest M --output-dir D [--engine local|slurm] [-j N] ...
// batch status D | batch retry D | batch task D --index I (what one array task runs)
int runBatchCommand(const std::vector<std::string>& args);

}  // namespace recon::cli
