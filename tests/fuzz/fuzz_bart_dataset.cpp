// Four files in one input, split at "\n@@\n": trajectory .hdr, .cfl, k-space
// .hdr, .cfl -> readDataset (headers, sizes, shapes, NaN, band, grid inference).
#include <array>
#include <string_view>

#include "fuzz_support.hpp"
#include "recon/io/dataset_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    std::array<std::string_view, 4> part{};
    std::size_t start = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        const std::size_t end = i == 3 ? std::string_view::npos : all.find("\n@@\n", start);
        if (end == std::string_view::npos && i < 3) return 0;
        part[i] = all.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        start = end + 4;
    }
    const char* names[4] = {"t.hdr", "t.cfl", "k.hdr", "k.cfl"};
    for (int i = 0; i < 4; ++i)
        recon::fuzz::writeFile(names[i], reinterpret_cast<const std::uint8_t*>(part[std::size_t(i)].data()),
                               part[std::size_t(i)].size());
    recon::InputSpec spec;
    spec.trajectory = (recon::fuzz::scratch() / "t").string();
    spec.kspace = (recon::fuzz::scratch() / "k").string();
    recon::fuzz::expectOnlyInputErrors([&] { recon::readDataset(spec); });
    return 0;
}
