// mblint: a linter for Megatron Bridge training launches.
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "lint/cli/cli.h"
#include "rules/registry.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  mblint::CliEnvironment env{std::cout, std::cerr, false, {}, {}};
  env.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  std::error_code error;
  env.cwd = std::filesystem::current_path(error);
  try {
    int code = mblint::run_cli(args, mblint::all_rules(), env);
    std::cout.flush();
    return code;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "mblint: internal error: " << e.what()
              << "\nThis is a bug in mblint; please report it with the files that triggered it.\n";
    return mblint::kExitInternal;
  }
}
