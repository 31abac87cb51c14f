// The mblint command line. Everything the process touches (streams, the
// environment, the working directory, whether stdout is a terminal) comes in
// through CliEnvironment so tests can run the CLI in-process.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "lint/rule.h"

namespace mblint {

struct CliEnvironment {
  std::ostream& out;
  std::ostream& err;
  bool stdout_is_tty = false;
  std::function<std::optional<std::string>(const std::string&)> getenv;
  std::filesystem::path cwd;
};

// Exit codes.
inline constexpr int kExitClean = 0;     // nothing at or above --fail-on
inline constexpr int kExitFindings = 1;  // findings at or above --fail-on
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitInternal = 3;  // a bug in mblint

// `args` excludes the program name.
int run_cli(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);

}  // namespace mblint
