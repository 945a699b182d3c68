// CT scans in the ReconStudio HDF5 layout (docs/FILE_FORMAT.md, "CT projections"): the
// geometry as attributes named with their units, the projections, the counts of a noisy
// scan and the truth of a simulated one. Written atomically (built in memory, then
// renamed into place); read in a child process (recon/io/isolated_read.hpp) and validated
// in the caller. Compiled into recon_io (it needs libhdf5); without HDF5 both throw.
#pragma once

#include <string>

#include "recon/ct/ct_data.hpp"

namespace recon::ct {

void writeCtFile(const std::string& path, const CtData& data);
CtData readCtFile(const std::string& path);
// Whether `path` is an HDF5 file of our layout holding a CT scan (the /ct group); false for
// anything else, unreadable files included (their reader then says what is wrong).
bool isCtFile(const std::string& path);

}  // namespace recon::ct
