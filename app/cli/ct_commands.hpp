// The CT side of reconstudio-cli: simulate, recon and compare on CT scans
// (recon/ct, recon/session/ct_session). main() routes a command here when it is
// about CT: --modality ct, a ct-* demo case, or an --input holding a CT scan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recon/solvers/monitor.hpp"

namespace recon::cli {

// Removes "--modality M" from args and returns M ("" when absent); UsageError for anything
// but "mr" or "ct".
std::string takeModality(std::vector<std::string>& args);
// A command without --modality is about CT when its --case is a CT case or its --input a CT scan.
bool looksLikeCt(const std::vector<std::string>& args);
int runCtCommand(const std::string& command, const std::vector<std::string>& args);

// While one lives, Ctrl-C ends the program at once with "cancelled while <what>; nothing
// written" (exit 130): for stages that hold nothing to keep and cannot poll a cancel flag.
struct AbortableStage {
    explicit AbortableStage(const char* what);
    ~AbortableStage();
    AbortableStage(const AbortableStage&) = delete;
    AbortableStage& operator=(const AbortableStage&) = delete;
};

// The CLI's progress bar (main.cpp): a Monitor that draws iterations, honours Ctrl-C.
std::unique_ptr<Monitor> makeProgressMonitor(bool quiet, int iterations);

}  // namespace recon::cli
