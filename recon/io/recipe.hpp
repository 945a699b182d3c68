// A reconstruction recipe: the settings tuned on one scan (method, prior, lambda,
// iterations, precision, backend, coil handling, outputs), saved as a small
// versioned JSON file so that the CLI, a batch and the GUI apply exactly the same
// reconstruction. Schema: docs/RECIPE.md. No Qt: the CLI and the GUI share it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace recon::io {

inline constexpr int kRecipeVersion = 1;

// Cluster resources for `batch --engine slurm`; they do not change the image, so
// they are not part of the recipe's hash.
struct SlurmResources {
    std::string partition;      // empty: the cluster's default
    std::string time;           // sbatch --time, e.g. "00:10:00"
    std::string memory;         // sbatch --mem, e.g. "4G"
    int gpus_per_task = 0;      // sbatch --gpus-per-task (0: none asked)
    int max_parallel = 0;       // array throttle "%N" (0: no limit)
};

// Every field but `version` is optional: an absent one keeps the CLI's default
// (or, for basis and lambda, the data set's or demo case's own).
struct Recipe {
    int version = kRecipeVersion;
    std::optional<std::string> method;          // iterative | gridding-kb | gridding-trilinear | all
    std::optional<std::string> regularizer;     // tikhonov | fd | anatomical
    std::optional<double> lambda;               // multiplies s = Q(0)
    bool lambda_auto = false;                   // "lambda": "auto" (--lambda auto: chosen per data set); lambda empty
    std::optional<int> iterations;
    std::optional<double> tolerance;
    std::optional<std::string> preconditioner;  // none | circulant
    std::optional<std::string> start;           // zero | gridding (the quadratic CG's start)
    std::optional<std::string> data_weighting;  // uniform | density (every solve's data term)
    std::optional<std::string> precision;       // float32 | float64
    std::optional<std::string> backend;         // auto | cpu | cuda
    std::optional<std::string> fourier_method;  // nufft | direct | a GPU kernel
    std::optional<double> nufft_tolerance;
    std::optional<std::string> basis;           // box | point
    std::string coils = "sum-of-squares";       // or "sense" (--coil-combine)
    std::optional<std::string> coil_maps;       // SENSE's maps: espirit | walsh | lowres (--coil-maps)
    std::string output_format = "h5";           // extension of each data set's output
    bool gridding_output = false;               // also write the Kaiser-Bessel image
    SlurmResources slurm;
};

// Parse and validate; throws recon::InputError naming `origin` (a file name) and
// the offending field: unknown keys, wrong types, out-of-range or unknown values.
Recipe parseRecipe(const std::string& json_text, const std::string& origin);
Recipe readRecipe(const std::string& path);

// Canonical JSON (sorted keys, absent fields left out), ends with a newline.
std::string recipeToJson(const Recipe& r);
// Written with write-then-rename; validates nothing (a Recipe is valid by construction).
void writeRecipe(const std::string& path, const Recipe& r);

// The top-level settings a batch manifest may set per data set.
const std::vector<std::string>& overridableKeys();

// One setting given as text (a column of a batch manifest), parsed and checked
// exactly as the same key in a recipe file. Throws InputError naming `origin`.
void applyOverride(Recipe& r, const std::string& key, const std::string& text, const std::string& origin);

// 16 hex digits over everything that changes the written images (not `slurm`).
std::string recipeHash(const Recipe& r);

}  // namespace recon::io
