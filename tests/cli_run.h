// Running mblint's command line in-process from a test: its exit code and
// what it printed, with `dir` as the working directory and no environment.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "lint/cli/cli.h"
#include "rules/registry.h"

namespace mblint::test {

struct CliRun {
  int code = 0;
  std::string out, err;
};

inline CliRun run_cli_in(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliEnvironment env{out, err, false, [](const std::string&) { return std::optional<std::string>(); }, dir};
  CliRun run;
  run.code = run_cli(args, all_rules(), env);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace mblint::test
