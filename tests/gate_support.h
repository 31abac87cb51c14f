// Helpers for the tests of the CI-gate features (suppressions, baselines,
// output formats, integrations): run the CLI in-process in a temporary
// directory, and run external tools.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mblint::test {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

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

CliRun run_mblint(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                  const std::map<std::string, std::string>& environment = {});

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
