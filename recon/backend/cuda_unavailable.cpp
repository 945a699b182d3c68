// Linked when the CUDA backend is not built: auto selection falls back to the CPU.
#include "recon/backend/backend.hpp"

namespace recon {

bool cudaCompiledIn() { return false; }
int cudaDeviceCount() { return 0; }

std::unique_ptr<Backend> createCudaBackend(Precision, int, std::string* why) {
    if (why) *why = "this build has no CUDA backend (configured without a CUDA compiler)";
    return nullptr;
}

}  // namespace recon
