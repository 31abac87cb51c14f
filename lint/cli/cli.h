// The mblint command line. Everything the process touches (streams, the
// environment, the working directory, whether stdout is a terminal) comes in
// through CliEnvironment so tests can run the CLI in-process.
#pragma once

#include <string>
#include <vector>

#include "lint/command_line/environment.h"
#include "lint/rule/rule.h"

namespace mblint {

// The commands (one file each: cli_check.cpp, cli_rules.cpp, ...).
// `args` excludes the program name (and, below, the command name).
int run_cli(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);

int run_diff(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_check(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_rules(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_estimate(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_explain(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_lsp(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_layout(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_plan(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_recipes(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);
int run_resolve(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env);

}  // namespace mblint
