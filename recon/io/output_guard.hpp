// Refusing an output that would destroy an input of the same run
// (`recon --input raw.mrd --output raw.mrd` used to keep only the image).
#pragma once

#include <string>
#include <vector>

#include "recon/io/dataset_io.hpp"

namespace recon::io {

// The files a name stands for: a BART array's .cfl and .hdr, else the file itself.
std::vector<std::string> filesOfName(const std::string& name);
// Every file reading `spec` opens.
std::vector<std::string> filesReadBy(const InputSpec& spec);
// True when both exist and are one file (through symbolic and hard links).
bool sameFile(const std::string& a, const std::string& b);

// Throws InputError when writing an image to `output` (given with `option`, such
// as "--output") would replace a file of `spec`. A ReconStudio .h5 output is
// allowed: its writer adds /results to a file of its own layout and keeps the
// data there (and refuses any other HDF5 file).
void refuseOverwritingInputs(const InputSpec& spec, const std::string& output, const std::string& option);

}  // namespace recon::io
