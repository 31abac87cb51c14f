// The fix flags of `mblint check`: --fix, --unsafe-fixes, --diff.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "lint/base/diagnostic.h"
#include "lint/cli/cli.h"
#include "lint/model/job.h"
#include "lint/model/rule_selection.h"

namespace mblint {

struct FixFlags {
  bool fix = false;     // write the fixes
  bool unsafe = false;  // also unsafe fixes
  bool diff = false;    // print the diff instead of writing
};

void add_fix_options(cxxopts::Options& options);

// The fix flags given, nullopt for a plain check. Returns an exit code in
// `stop` on a usage error.
std::optional<FixFlags> read_fix_flags(const cxxopts::ParseResult& parsed, const CliEnvironment& env,
                                       std::optional<int>& stop);

struct CheckOutput {
  std::string format;  // text or json
  Severity fail_on = Severity::Error;
  bool color = false;
};

// Apply (or show) the fixes of the selected rules, then report what remains
// of them.
int run_fixes(const FixFlags& flags, const std::vector<std::string>& full_args, const LintOptions& options,
              RuleSet rules, const CliEnvironment& env, const CheckOutput& output,
              const RuleSelection& selection);

}  // namespace mblint
