// A recipe (recon/io/recipe.hpp) as the command-line options it stands for, so
// that `recon --recipe R` takes exactly the path of the same options typed by hand.
#pragma once

#include <string>
#include <vector>

#include "recon/io/recipe.hpp"

namespace recon::cli {

// "--lambda", "30", "--regularizer", "anatomical", ... for the fields the recipe sets.
std::vector<std::string> recipeArguments(const io::Recipe& recipe);

// `args` with any "--recipe FILE" (or "--recipe=FILE") replaced by that recipe's
// options, placed first so that options typed on the command line win.
std::vector<std::string> expandRecipe(const std::vector<std::string>& args);

}  // namespace recon::cli
