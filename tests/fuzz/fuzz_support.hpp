// Shared by the libFuzzer targets: inputs become files in a private scratch
// folder (the readers take paths), and only the errors a reader is allowed to
// raise for bad input are caught; anything else (a crash, a sanitizer report,
// another exception) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "recon/core/errors.hpp"

namespace recon::fuzz {

inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("reconstudio-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline std::string writeFile(const std::string& name, const std::uint8_t* data, std::size_t size) {
    const std::string path = (scratch() / name).string();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
    return path;
}

// Runs `f`; bad input must surface as recon::Error (InputError and kin).
template <class F>
void expectOnlyInputErrors(F&& f) {
    try {
        f();
    } catch (const recon::Error&) {
    }
}

}  // namespace recon::fuzz
