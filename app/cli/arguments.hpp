// A small, strict command-line parser: --name value / --flag, unknown options
// are errors. Hand-written because the engine's build (also on the GPU machine)
// must not depend on more than a compiler, FFTW and CUDA.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace recon::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Arguments {
public:
    // `flags` take no value; `options` take exactly one.
    Arguments(const std::vector<std::string>& args, const std::set<std::string>& options,
              const std::set<std::string>& flags);

    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    double number(const std::string& name, double fallback) const;
    int integer(const std::string& name, int fallback) const;
    // The same, refused with "--NAME must be between LO and HI" outside [lo, hi].
    double numberIn(const std::string& name, double fallback, double lo, double hi) const;
    int integerIn(const std::string& name, int fallback, int lo, int hi) const;
    // The option's value, refused when empty (--output "").
    std::string nonEmpty(const std::string& name) const;
    std::optional<std::string> maybe(const std::string& name) const;

private:
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
};

}  // namespace recon::cli
