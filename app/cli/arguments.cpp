#include "arguments.hpp"

#include <cmath>
#include <cstdlib>

#include "recon/core/errors.hpp"

namespace recon::cli {

Arguments::Arguments(const std::vector<std::string>& args, const std::set<std::string>& options,
                     const std::set<std::string>& flags) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + a + "'");
        std::string name = a.substr(2), value;
        const auto eq = name.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inline_value) throw UsageError("--" + name + " takes no value");
            flags_.insert(name);
        } else if (options.count(name)) {
            if (!inline_value) {
                if (i + 1 >= args.size()) throw UsageError("--" + name + " needs a value");
                value = args[++i];
            }
            values_[name] = value;
        } else {
            throw UsageError("unknown option --" + name);
        }
    }
}

std::string Arguments::get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

std::optional<std::string> Arguments::maybe(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

double Arguments::number(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || !std::isfinite(v))
        throw UsageError("--" + name + " expects a number, got '" + it->second + "'");
    return v;
}

int Arguments::integer(const std::string& name, int fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || v < -2147483647L || v > 2147483647L)
        throw UsageError("--" + name + " expects an integer, got '" + it->second + "'");
    return int(v);
}

double Arguments::numberIn(const std::string& name, double fallback, double lo, double hi) const {
    const double v = number(name, fallback);
    if (!(v >= lo && v <= hi))
        throw UsageError("--" + name + " must be between " + formatNumber(lo) + " and " + formatNumber(hi) + ", got " +
                         get(name));
    return v;
}

int Arguments::integerIn(const std::string& name, int fallback, int lo, int hi) const {
    const int v = integer(name, fallback);
    if (v < lo || v > hi)
        throw UsageError("--" + name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                         ", got " + get(name));
    return v;
}

std::string Arguments::nonEmpty(const std::string& name) const {
    const std::string v = get(name);
    if (has(name) && v.empty()) throw UsageError("--" + name + " is empty: give a file name");
    return v;
}

}  // namespace recon::cli
