// Shared by the GPU test files: the CUDA backend, or a test failure naming why not
// (gpu_main.cpp has already skipped the whole run where no GPU exists).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "recon/backend/backend.hpp"

namespace recon::test {

inline std::unique_ptr<Backend> gpu(Precision p) {
    std::string why;
    auto b = createCudaBackend(p, 0, &why);
    if (!b) throw std::runtime_error("no CUDA backend: " + why);
    return b;
}

}  // namespace recon::test
