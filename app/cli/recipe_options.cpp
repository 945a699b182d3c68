#include "recipe_options.hpp"

#include <cstdio>

#include "arguments.hpp"

namespace recon::cli {
namespace {
std::string exact(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
}  // namespace

std::vector<std::string> recipeArguments(const io::Recipe& r) {
    std::vector<std::string> out;
    auto add = [&](const char* option, const std::optional<std::string>& v) {
        if (v) out.insert(out.end(), {option, *v});
    };
    add("--only", r.method);
    add("--regularizer", r.regularizer);
    if (r.lambda) out.insert(out.end(), {"--lambda", exact(*r.lambda)});
    if (r.lambda_auto) out.insert(out.end(), {"--lambda", "auto"});
    if (r.iterations) out.insert(out.end(), {"--iterations", std::to_string(*r.iterations)});
    if (r.tolerance) out.insert(out.end(), {"--tolerance", exact(*r.tolerance)});
    add("--preconditioner", r.preconditioner);
    add("--start", r.start);
    add("--data-weighting", r.data_weighting);
    add("--precision", r.precision);
    add("--backend", r.backend);
    add("--method", r.fourier_method);
    if (r.nufft_tolerance) out.insert(out.end(), {"--nufft-tolerance", exact(*r.nufft_tolerance)});
    add("--basis", r.basis);
    if (r.coils == "sense") out.insert(out.end(), {"--coil-combine", "sense"});
    add("--coil-maps", r.coil_maps);
    return out;
}

std::vector<std::string> expandRecipe(const std::vector<std::string>& args) {
    std::vector<std::string> rest, path;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--recipe") {
            if (i + 1 >= args.size()) throw UsageError("--recipe needs a value");
            path.push_back(args[++i]);
        } else if (args[i].rfind("--recipe=", 0) == 0) {
            path.push_back(args[i].substr(9));
        } else {
            rest.push_back(args[i]);
        }
    }
    if (path.empty()) return args;
    if (path.size() > 1) throw UsageError("--recipe given more than once");
    std::vector<std::string> out = recipeArguments(io::readRecipe(path.front()));
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

}  // namespace recon::cli
