// Helpers for the tests of the CI-gate features (suppressions, baselines,
// output formats, integrations): a temporary directory, the CLI run
// in-process in it (tests/cli_run.h), and external tools.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/cli_run.h"

namespace mblint::test {

// A temporary directory removed at the end of the test.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  void write(const std::string& name, const std::string& text) const;
  std::string read(const std::string& name) const;
};

// Runs `command` with /bin/sh; stdout and stderr together. No shell input
// from tests is ever user data: commands are built from temp paths.
struct ToolRun {
  int code = -1;
  std::string output;
};
ToolRun run_tool(const std::string& command);

// The absolute path of `program` on PATH, or nullopt.
std::optional<std::filesystem::path> find_program(const std::string& program);

// Single-quoted for /bin/sh.
std::string shell_quote(const std::string& text);

}  // namespace mblint::test
