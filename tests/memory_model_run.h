// The memory model of a job built from a catalog recipe, for the estimate's
// unit tests.
#pragma once

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "lint/facts/estimate.h"
#include "tests/lint_run.h"

namespace mblint::test {

// The memory model of `run`'s one job, linted with every rule; nullopt, with
// the reason in `why`, when the estimate declines it.
inline std::optional<MemoryModel> memory_model_of(LintRun& run, std::string* why = nullptr,
                                                  std::vector<std::string>* assumptions = nullptr) {
  run.result = run_lint(run.sources, run.options, all_rules());
  REQUIRE(run.result.jobs.size() == 1);
  std::vector<std::string> kept;
  std::optional<MemoryModel> m = read_memory_model(run.result.jobs[0], run.derived(), kept, why);
  if (assumptions) *assumptions = std::move(kept);
  return m;
}

// The same, for a job the estimate must not decline.
inline MemoryModel estimated_model_of(LintRun& run, std::vector<std::string>* assumptions = nullptr) {
  std::string why;
  std::optional<MemoryModel> m = memory_model_of(run, &why, assumptions);
  INFO(why);
  REQUIRE(m);
  return *m;
}

// The memory model of the one job `script` (a launch script) starts, which
// the estimate must not decline.
inline MemoryModel estimated_launch_model(const std::string& script) {
  LintRun run("mblint-estimate-launch");
  run.write("launch.sh", script);
  run.options.paths = {"launch.sh"};
  return estimated_model_of(run);
}

// The memory model `mblint estimate --recipe NAME` reads (the recipe alone,
// as without a file), or with the YAML `override` over the recipe; nullopt,
// with the reason in `why`, when the estimate declines it.
inline std::optional<MemoryModel> recipe_memory_model(const std::string& recipe, const std::string& override = "",
                                                      std::string* why = nullptr) {
  LintRun run("mblint-estimate-recipe");
  run.options.recipe = run.value(recipe);
  if (!override.empty()) {
    run.write("override.yaml", override);
    run.options.paths = {"override.yaml"};
  }
  return memory_model_of(run, why);
}

// The same, for a recipe the estimate must not decline.
inline MemoryModel estimated_recipe_model(const std::string& recipe, const std::string& override = "") {
  std::string why;
  std::optional<MemoryModel> m = recipe_memory_model(recipe, override, &why);
  INFO(why);
  REQUIRE(m);
  return *m;
}

}  // namespace mblint::test
