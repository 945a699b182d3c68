// Any bytes as a NIfTI-1 image -> readImage.
#include "fuzz_support.hpp"
#include "recon/io/dataset_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = recon::fuzz::writeFile("image.nii", data, size);
    recon::fuzz::expectOnlyInputErrors([&] { recon::readImage(path); });
    return 0;
}
