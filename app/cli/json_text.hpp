// JSON values as text, the one writer of the CLI's `--json` lines, reports and
// the benchmark's file: nlohmann-json does the escaping; a number that is not
// finite becomes null.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace recon::cli {

inline std::string jsonString(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string jsonNumber(double v) { return std::isfinite(v) ? nlohmann::json(v).dump() : "null"; }

}  // namespace recon::cli
