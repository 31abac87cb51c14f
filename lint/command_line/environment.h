// What a command touches of the process (streams, the environment, the
// working directory, whether stdout is a terminal), passed in so tests run
// commands in-process; and mblint's exit codes.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

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

}  // namespace mblint
