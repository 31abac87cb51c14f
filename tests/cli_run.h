// Running mblint's command line in-process from a test: its exit code and
// what it printed.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mblint::test {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

// `mblint ARGS` run in `cwd`, seeing no environment variables but those of
// `environment` (NO_COLOR, GITHUB_ACTIONS), and a terminal on stdout when
// `tty` is set.
CliRun run_mblint(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                  const std::map<std::string, std::string>& environment = {}, bool tty = false);

}  // namespace mblint::test
