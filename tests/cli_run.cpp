#include "tests/cli_run.h"

#include <sstream>

#include "lint/cli/cli.h"
#include "rules/registry.h"

namespace mblint::test {

CliRun run_mblint(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                  const std::map<std::string, std::string>& environment, bool tty) {
  std::ostringstream out, err;
  CliEnvironment env{out, err, tty,
                     [environment](const std::string& name) -> std::optional<std::string> {
                       auto it = environment.find(name);
                       if (it == environment.end()) return std::nullopt;
                       return it->second;
                     },
                     cwd};
  CliRun run;
  run.code = run_cli(args, all_rules(), env);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace mblint::test
