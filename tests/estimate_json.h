// `mblint estimate --format json ARGS` run in a scratch directory, parsed:
// the estimate tests that read the CLI's JSON share it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/test_support.h"

namespace mblint::test {

inline nlohmann::json estimate_json(const std::vector<std::string>& extra) {
  auto cwd = make_temp_dir("mblint-estimate-json");
  std::vector<std::string> args = {"estimate", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto doc = nlohmann::json::parse(run_mblint(args, cwd).out);
  std::filesystem::remove_all(cwd);
  return doc;
}

}  // namespace mblint::test
