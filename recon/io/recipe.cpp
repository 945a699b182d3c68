#include "recipe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "file_util.hpp"
#include "recon/core/conventions.hpp"
#include "recon/core/data_weighting.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/core/preconditioner_kind.hpp"
#include "recon/core/start_image.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon::io {
namespace {

using Json = nlohmann::json;

constexpr const char* kVersionKey = "reconstudio_recipe";
constexpr std::size_t kMaxRecipeBytes = 1 << 20;

// Reads one object's fields, naming the file and the field in every error.
class FieldReader {
public:
    FieldReader(const Json& object, std::string origin, std::string prefix)
        : object_(object), origin_(std::move(origin)), prefix_(std::move(prefix)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw InputError("recipe '" + origin_ + "': '" + prefix_ + key + "' " + what);
    }
    void rejectUnknown(const std::set<std::string>& known) const {
        for (const auto& [key, value] : object_.items())
            if (!known.count(key)) {
                std::string list;
                for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
                throw InputError("recipe '" + origin_ + "': unknown key '" + prefix_ + key + "' (known: " + list + ")");
            }
    }
    const Json* find(const std::string& key) const {
        auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    std::optional<std::string> text(const std::string& key) const {
        const Json* v = find(key);
        if (!v) return std::nullopt;
        if (!v->is_string()) fail(key, "must be a string, got " + v->dump());
        if (v->get<std::string>().empty()) fail(key, "must not be empty");
        return v->get<std::string>();
    }
    // A string that `parse` accepts; its own message (the allowed values) is kept.
    template <class Parse>
    std::optional<std::string> choice(const std::string& key, Parse parse) const {
        auto s = text(key);
        if (s) try {
                parse(*s);
            } catch (const std::exception& e) {
                fail(key, std::string("is not valid: ") + e.what());
            }
        return s;
    }
    std::optional<std::string> oneOf(const std::string& key, const std::set<std::string>& allowed) const {
        auto s = text(key);
        if (s && !allowed.count(*s)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            fail(key, "must be one of " + list + ", got \"" + *s + "\"");
        }
        return s;
    }
    std::optional<double> number(const std::string& key, double lo, double hi, bool lo_open = false) const {
        const Json* v = find(key);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(key, "must be a number, got " + v->dump());
        const double x = v->get<double>();
        if (!std::isfinite(x) || x < lo || x > hi || (lo_open && x == lo))
            fail(key, "must be in " + std::string(lo_open ? "(" : "[") + Json(lo).dump() + ", " + Json(hi).dump() +
                          "], got " + v->dump());
        return x;
    }
    std::optional<int> integer(const std::string& key, int lo, int hi) const {
        const Json* v = find(key);
        if (!v) return std::nullopt;
        if (!v->is_number_integer()) fail(key, "must be an integer, got " + v->dump());
        const std::int64_t x = v->get<std::int64_t>();
        if (x < lo || x > hi)
            fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v->dump());
        return int(x);
    }
    std::optional<bool> boolean(const std::string& key) const {
        const Json* v = find(key);
        if (!v) return std::nullopt;
        if (!v->is_boolean()) fail(key, "must be true or false, got " + v->dump());
        return v->get<bool>();
    }
    // A string of the characters in `allowed` only (what sbatch flags carry).
    std::string token(const std::string& key, const std::string& allowed, const std::string& example) const {
        auto s = text(key);
        if (!s) return "";
        for (char c : *s)
            if (allowed.find(c) == std::string::npos) fail(key, "must look like \"" + example + "\", got \"" + *s + "\"");
        return *s;
    }
    const Json* object(const std::string& key) const {
        const Json* v = find(key);
        if (v && !v->is_object()) fail(key, "must be an object, got " + v->dump());
        return v;
    }

private:
    const Json& object_;
    std::string origin_, prefix_;
};

const std::set<std::string> kOutputFormats = {"h5", "cfl", "nii", "nii.gz", "png", "mrd"};
const std::set<std::string> kMethods = {"all", "iterative", "gridding-kb", "gridding-trilinear"};
const std::string kDigits = "0123456789";

Recipe fromJson(const Json& j, const std::string& origin) {
    if (!j.is_object()) throw InputError("recipe '" + origin + "': must be a JSON object, got " + j.type_name());
    FieldReader f(j, origin, "");
    f.rejectUnknown({kVersionKey, "method", "regularizer", "lambda", "iterations", "tolerance", "precision", "backend",
                     "fourier_method", "nufft_tolerance", "basis", "coils", "coil_maps", "output", "slurm", "preconditioner", "start",
                     "data_weighting"});
    Recipe r;
    const auto version = f.integer(kVersionKey, 1, 1 << 20);
    if (!version) f.fail(kVersionKey, "is missing (the schema version, " + std::to_string(kRecipeVersion) + ")");
    if (*version != kRecipeVersion)
        f.fail(kVersionKey, "is " + std::to_string(*version) + "; this program reads version " +
                                std::to_string(kRecipeVersion));
    r.method = f.oneOf("method", kMethods);
    r.regularizer = f.choice("regularizer", parseRegularizer);
    // "auto": chosen from each data set when it is reconstructed (--lambda auto).
    if (const Json* l = f.find("lambda"); l && l->is_string()) {
        if (l->get<std::string>() != "auto") f.fail("lambda", "must be a number or \"auto\", got " + l->dump());
        r.lambda_auto = true;
    } else {
        r.lambda = f.number("lambda", 0, 1e12);
    }
    r.iterations = f.integer("iterations", 0, 100000);
    r.tolerance = f.number("tolerance", 0, 1);
    r.preconditioner = f.choice("preconditioner", parsePreconditioner);
    r.start = f.choice("start", parseStartImage);
    r.data_weighting = f.choice("data_weighting", parseDataWeighting);
    r.precision = f.choice("precision", parsePrecision);
    r.backend = f.choice("backend", parseBackendChoice);
    r.fourier_method = f.text("fourier_method");
    r.nufft_tolerance = f.number("nufft_tolerance", 0, 0.1, true);
    r.basis = f.choice("basis", parseBasis);
    if (auto c = f.oneOf("coils", {"sum-of-squares", "sense"})) r.coils = *c;
    // The names of recon/sense's CoilMapMethod (io may not include sense); a file of maps belongs to
    // one data set, not to a recipe.
    r.coil_maps = f.oneOf("coil_maps", {"espirit", "walsh", "lowres"});
    if (const Json* out = f.object("output")) {
        FieldReader o(*out, origin, "output.");
        o.rejectUnknown({"format", "gridding"});
        if (auto fmt = o.oneOf("format", kOutputFormats)) r.output_format = *fmt;
        if (auto g = o.boolean("gridding")) r.gridding_output = *g;
    }
    if (const Json* sl = f.object("slurm")) {
        FieldReader s(*sl, origin, "slurm.");
        s.rejectUnknown({"partition", "time", "memory", "gpus_per_task", "max_parallel"});
        r.slurm.partition = s.token("partition", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-.," + kDigits, "gpu");
        r.slurm.time = s.token("time", kDigits + ":-", "00:10:00");
        r.slurm.memory = s.token("memory", kDigits + "KMGTkmgt", "4G");
        r.slurm.gpus_per_task = s.integer("gpus_per_task", 0, 64).value_or(0);
        r.slurm.max_parallel = s.integer("max_parallel", 0, 1000000).value_or(0);
    }
    return r;
}

Json toJson(const Recipe& r, bool with_slurm) {
    Json j = Json::object();
    j[kVersionKey] = r.version;
    auto put = [&](const char* key, const auto& v) {
        if (v) j[key] = *v;
    };
    put("method", r.method);
    put("regularizer", r.regularizer);
    put("lambda", r.lambda);
    if (r.lambda_auto) j["lambda"] = "auto";
    put("iterations", r.iterations);
    put("tolerance", r.tolerance);
    put("preconditioner", r.preconditioner);
    put("start", r.start);
    put("data_weighting", r.data_weighting);
    put("precision", r.precision);
    put("backend", r.backend);
    put("fourier_method", r.fourier_method);
    put("nufft_tolerance", r.nufft_tolerance);
    put("basis", r.basis);
    j["coils"] = r.coils;
    put("coil_maps", r.coil_maps);
    j["output"] = {{"format", r.output_format}, {"gridding", r.gridding_output}};
    if (with_slurm) {
        Json s = Json::object();
        if (!r.slurm.partition.empty()) s["partition"] = r.slurm.partition;
        if (!r.slurm.time.empty()) s["time"] = r.slurm.time;
        if (!r.slurm.memory.empty()) s["memory"] = r.slurm.memory;
        if (r.slurm.gpus_per_task) s["gpus_per_task"] = r.slurm.gpus_per_task;
        if (r.slurm.max_parallel) s["max_parallel"] = r.slurm.max_parallel;
        if (!s.empty()) j["slurm"] = s;
    }
    return j;
}

}  // namespace

Recipe parseRecipe(const std::string& json_text, const std::string& origin) {
    Json j;
    try {
        j = Json::parse(json_text);
    } catch (const Json::parse_error& e) {
        throw InputError("recipe '" + origin + "': not valid JSON (" + e.what() + ")");
    }
    return fromJson(j, origin);
}

Recipe readRecipe(const std::string& path) {
    return parseRecipe(readSmallFile(path, "recipe", kMaxRecipeBytes), path);
}

std::string recipeToJson(const Recipe& r) { return toJson(r, true).dump(2) + "\n"; }

void writeRecipe(const std::string& path, const Recipe& r) { writeTextAtomically(path, recipeToJson(r)); }

const std::vector<std::string>& overridableKeys() {
    static const std::vector<std::string> keys = {"method",    "regularizer", "lambda",         "iterations",
                                                  "tolerance", "precision",   "backend",        "fourier_method",
                                                  "nufft_tolerance", "basis", "coil_maps", "preconditioner", "start",
                                                  "data_weighting"};
    return keys;
}

void applyOverride(Recipe& r, const std::string& key, const std::string& text, const std::string& origin) {
    const auto& keys = overridableKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        std::string list;
        for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
        throw InputError(origin + ": '" + key + "' cannot be overridden per data set (allowed: " + list + ")");
    }
    // A number when the whole text is one, else a string: the field's own check decides.
    Json value = text;
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (!text.empty() && end && *end == '\0') {
        const bool integral = text.find_first_of(".eE") == std::string::npos && std::abs(x) < 2e9;
        value = integral ? Json(std::int64_t(x)) : Json(x);
    }
    Json j = toJson(r, true);
    j[key] = value;
    r = fromJson(j, origin);
}

std::string recipeHash(const Recipe& r) {
    const std::string canonical = toJson(r, false).dump();
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits: stable across builds and machines
    for (unsigned char c : canonical) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

}  // namespace recon::io
