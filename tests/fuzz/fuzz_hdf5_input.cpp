// Any bytes as an HDF5 input: classification, our layout and ISMRMRD readers,
// and the image reader. HDF5 itself parses the container; the target checks
// that nothing it lets through crashes our readers.
#include "fuzz_support.hpp"
#include "recon/io/dataset_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = recon::fuzz::writeFile("input.h5", data, size);
    recon::InputSpec spec;
    spec.input = path;
    recon::fuzz::expectOnlyInputErrors([&] { recon::readDataset(spec); });
    recon::fuzz::expectOnlyInputErrors([&] { recon::readImage(path); });
    return 0;
}
