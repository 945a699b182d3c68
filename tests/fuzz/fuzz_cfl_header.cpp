// BART header text -> parseCflHeader.
#include <string>

#include "fuzz_support.hpp"
#include "recon/io/bart_cfl.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    recon::fuzz::expectOnlyInputErrors([&] {
        const auto dims = recon::io::parseCflHeader(text, "fuzz.hdr");
        if (dims.empty() || dims.size() > 16) std::abort();  // the parser's promise
    });
    return 0;
}
