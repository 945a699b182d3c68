// Recipes: every field read back as written, bad input named by file and field,
// per-data-set overrides checked like the file's own fields, and a hash that
// changes exactly when the images would.
#include <gtest/gtest.h>

#include <fstream>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/recipe.hpp"

namespace recon::test {
namespace {

const char* kFull = R"({
  "reconstudio_recipe": 1,
  "method": "iterative",
  "regularizer": "anatomical",
  "lambda": 30,
  "iterations": 25,
  "tolerance": 0.001,
  "preconditioner": "circulant",
  "start": "gridding",
  "data_weighting": "density",
  "precision": "float64",
  "backend": "cpu",
  "fourier_method": "nufft",
  "nufft_tolerance": 1e-5,
  "basis": "point",
  "coils": "sum-of-squares",
  "output": {"format": "nii.gz", "gridding": true},
  "slurm": {"partition": "gpu", "time": "00:10:00", "memory": "4G", "gpus_per_task": 1, "max_parallel": 8}
})";

TEST(Recipe, ReadsEveryField) {
    const io::Recipe r = io::parseRecipe(kFull, "full.json");
    EXPECT_EQ(*r.method, "iterative");
    EXPECT_EQ(*r.regularizer, "anatomical");
    EXPECT_DOUBLE_EQ(*r.lambda, 30);
    EXPECT_EQ(*r.iterations, 25);
    EXPECT_DOUBLE_EQ(*r.tolerance, 0.001);
    EXPECT_EQ(*r.preconditioner, "circulant");
    EXPECT_EQ(*r.start, "gridding");
    EXPECT_EQ(*r.data_weighting, "density");
    EXPECT_EQ(*r.precision, "float64");
    EXPECT_EQ(*r.backend, "cpu");
    EXPECT_EQ(*r.fourier_method, "nufft");
    EXPECT_DOUBLE_EQ(*r.nufft_tolerance, 1e-5);
    EXPECT_EQ(*r.basis, "point");
    EXPECT_EQ(r.output_format, "nii.gz");
    EXPECT_TRUE(r.gridding_output);
    EXPECT_EQ(r.slurm.partition, "gpu");
    EXPECT_EQ(r.slurm.time, "00:10:00");
    EXPECT_EQ(r.slurm.memory, "4G");
    EXPECT_EQ(r.slurm.gpus_per_task, 1);
    EXPECT_EQ(r.slurm.max_parallel, 8);
}

TEST(Recipe, MinimalRecipeLeavesDefaultsAbsent) {
    const io::Recipe r = io::parseRecipe(R"({"reconstudio_recipe": 1})", "min.json");
    EXPECT_FALSE(r.lambda);
    EXPECT_FALSE(r.iterations);
    EXPECT_FALSE(r.regularizer);
    EXPECT_FALSE(r.data_weighting);  // the CLI's default, uniform
    EXPECT_EQ(r.output_format, "h5");
    EXPECT_FALSE(r.gridding_output);
}

TEST(Recipe, WriteThenReadIsIdentical) {
    ScratchDir dir;
    const io::Recipe r = io::parseRecipe(kFull, "full.json");
    io::writeRecipe(dir.file("r.json"), r);
    const io::Recipe back = io::readRecipe(dir.file("r.json"));
    EXPECT_EQ(io::recipeToJson(back), io::recipeToJson(r));
    EXPECT_EQ(io::recipeHash(back), io::recipeHash(r));
    EXPECT_TRUE(dir.partialFiles().empty());
}

TEST(Recipe, BadInputNamesFileAndField) {
    using io::parseRecipe;
    EXPECT_THROW_MESSAGE(parseRecipe("{", "a.json"), InputError, "a.json", "not valid JSON");
    EXPECT_THROW_MESSAGE(parseRecipe("[1]", "a.json"), InputError, "a.json", "JSON object");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"lambda": 1})", "a.json"), InputError, "'reconstudio_recipe'", "missing");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 2})", "a.json"), InputError, "is 2",
                         "reads version 1");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "preconditioner": "jacobi"})", "a.json"), InputError,
                         "'preconditioner'", "none or circulant");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "start": "fdk"})", "a.json"), InputError, "'start'",
                         "zero or gridding");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "data_weighting": "jackson"})", "a.json"), InputError,
                         "a.json", "'data_weighting'", "uniform or density");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "data_weighting": true})", "a.json"), InputError,
                         "'data_weighting' must be a string");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "lamda": 1})", "a.json"), InputError,
                         "unknown key 'lamda'", "lambda");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "lambda": -1})", "a.json"), InputError, "'lambda'",
                         "-1");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "lambda": "big"})", "a.json"), InputError,
                         "'lambda' must be a number", "\"big\"");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "iterations": 2.5})", "a.json"), InputError,
                         "'iterations' must be an integer");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "regularizer": "lasso"})", "a.json"), InputError,
                         "'regularizer'", "tikhonov, fd, anatomical, tv, wavelet or anatomical-tv");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "precision": "half"})", "a.json"), InputError,
                         "'precision'");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "output": {"format": "jpg"}})", "a.json"),
                         InputError, "'output.format'", "\"jpg\"");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "slurm": {"time": "ten minutes"}})", "a.json"),
                         InputError, "'slurm.time'", "00:10:00");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "coils": "adaptive"})", "a.json"), InputError,
                         "'coils'", "sum-of-squares");
    EXPECT_EQ(parseRecipe(R"({"reconstudio_recipe": 1, "coils": "sense"})", "a.json").coils, "sense");
    EXPECT_THROW_MESSAGE(parseRecipe(R"({"reconstudio_recipe": 1, "coil_maps": "maps.cfl"})", "a.json"), InputError,
                         "'coil_maps'", "espirit, lowres, walsh");
    EXPECT_EQ(*parseRecipe(R"({"reconstudio_recipe": 1, "coil_maps": "walsh"})", "a.json").coil_maps, "walsh");
    EXPECT_FALSE(parseRecipe(R"({"reconstudio_recipe": 1})", "a.json").coil_maps.has_value());
}

// "lambda": "auto" (chosen per data set): read, written back, overridden and hashed like a number.
TEST(Recipe, LambdaAutoRoundTrips) {
    io::Recipe r = io::parseRecipe(R"({"reconstudio_recipe": 1, "regularizer": "tv", "lambda": "auto"})", "auto.json");
    EXPECT_TRUE(r.lambda_auto);
    EXPECT_FALSE(r.lambda);
    const std::string text = io::recipeToJson(r);
    EXPECT_NE(text.find("\"lambda\": \"auto\""), std::string::npos) << text;
    const io::Recipe back = io::parseRecipe(text, "written.json");
    EXPECT_TRUE(back.lambda_auto);
    EXPECT_EQ(io::recipeHash(back), io::recipeHash(r));
    // A number per data set replaces auto, and auto a number; either way the hash changes.
    io::Recipe fixed = r;
    io::applyOverride(fixed, "lambda", "0.5", "m.csv row 2");
    EXPECT_FALSE(fixed.lambda_auto);
    EXPECT_DOUBLE_EQ(*fixed.lambda, 0.5);
    EXPECT_NE(io::recipeHash(fixed), io::recipeHash(r));
    io::applyOverride(fixed, "lambda", "auto", "m.csv row 3");
    EXPECT_TRUE(fixed.lambda_auto);
    EXPECT_FALSE(fixed.lambda);
    EXPECT_EQ(io::recipeHash(fixed), io::recipeHash(r));
    EXPECT_THROW_MESSAGE(io::parseRecipe(R"({"reconstudio_recipe": 1, "lambda": "Auto"})", "a.json"), InputError, "'lambda'",
                         "a number or \"auto\"");
    EXPECT_THROW_MESSAGE(io::applyOverride(fixed, "lambda", "automatic", "m.csv row 4"), InputError, "m.csv row 4", "'lambda'");
}

TEST(Recipe, MissingFileIsNamed) {
    EXPECT_THROW_MESSAGE(io::readRecipe("/nonexistent/r.json"), InputError, "/nonexistent/r.json");
}

TEST(Recipe, OverridesAreCheckedLikeTheFile) {
    io::Recipe r = io::parseRecipe(kFull, "full.json");
    io::applyOverride(r, "lambda", "0.5", "m.csv row 2");
    io::applyOverride(r, "iterations", "7", "m.csv row 2");
    io::applyOverride(r, "regularizer", "fd", "m.csv row 2");
    EXPECT_DOUBLE_EQ(*r.lambda, 0.5);
    EXPECT_EQ(*r.iterations, 7);
    EXPECT_EQ(*r.regularizer, "fd");
    EXPECT_THROW_MESSAGE(io::applyOverride(r, "lambda", "x", "m.csv row 3"), InputError, "m.csv row 3", "'lambda'");
    EXPECT_THROW_MESSAGE(io::applyOverride(r, "iterations", "-4", "m.csv row 3"), InputError, "'iterations'");
    EXPECT_THROW_MESSAGE(io::applyOverride(r, "slurm", "x", "m.csv row 3"), InputError, "cannot be overridden");
}

TEST(Recipe, HashFollowsTheImageNotTheCluster) {
    const io::Recipe base = io::parseRecipe(kFull, "full.json");
    io::Recipe other_cluster = base;
    other_cluster.slurm.partition = "cpu";
    other_cluster.slurm.memory = "64G";
    EXPECT_EQ(io::recipeHash(other_cluster), io::recipeHash(base));
    io::Recipe other_lambda = base;
    other_lambda.lambda = 31;
    EXPECT_NE(io::recipeHash(other_lambda), io::recipeHash(base));
    io::Recipe other_format = base;
    other_format.output_format = "h5";
    EXPECT_NE(io::recipeHash(other_format), io::recipeHash(base));
    EXPECT_EQ(io::recipeHash(base).size(), 16u);
    io::Recipe other_maps = base;
    other_maps.coil_maps = "walsh";  // other coil maps, another SENSE image
    EXPECT_NE(io::recipeHash(other_maps), io::recipeHash(base));
    io::applyOverride(other_maps, "coil_maps", "lowres", "m.csv row 2");
    EXPECT_EQ(*other_maps.coil_maps, "lowres");
}

// The data term is another problem, so another image: in the canonical JSON, the hash and a manifest's columns.
TEST(Recipe, DataWeightingRoundTripsAndChangesTheHash) {
    const io::Recipe base = io::parseRecipe(kFull, "full.json");
    const std::string text = io::recipeToJson(base);
    EXPECT_NE(text.find("\"data_weighting\": \"density\""), std::string::npos) << text;
    EXPECT_EQ(*io::parseRecipe(text, "written.json").data_weighting, "density");
    io::Recipe uniform = base;
    io::applyOverride(uniform, "data_weighting", "uniform", "m.csv row 2");
    EXPECT_EQ(*uniform.data_weighting, "uniform");
    EXPECT_NE(io::recipeHash(uniform), io::recipeHash(base));
    io::Recipe absent = base;
    absent.data_weighting.reset();
    EXPECT_NE(io::recipeHash(absent), io::recipeHash(base));
    EXPECT_EQ(io::recipeToJson(absent).find("data_weighting"), std::string::npos);
    EXPECT_THROW_MESSAGE(io::applyOverride(uniform, "data_weighting", "weighted", "m.csv row 3"), InputError, "m.csv row 3",
                         "'data_weighting'", "uniform or density");
}

}  // namespace
}  // namespace recon::test
