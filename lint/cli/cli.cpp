// The mblint command line: dispatch to one file per command.
#include "lint/cli/cli.h"

#include <fmt/format.h>

#include "lint/base/version.h"
#include "lint/command_line/command_line.h"

namespace mblint {

namespace {

const char* kUsage =
    "usage: mblint <command> [options]\n"
    "\n"
    "commands:\n"
    "  check PATH...     lint launch scripts and Megatron Bridge YAML files (directories are walked)\n"
    "  diff [BASE [HEAD]] what a change does to each job: settings, sizes, memory, speed, new findings\n"
    "  estimate PATH...  per-GPU memory of the most loaded rank, part by part\n"
    "  rules             list every rule (code, name, severity, summary)\n"
    "  explain RULE      print a rule's documentation (name or code)\n"
    "  lsp               language server for editors (LSP over stdio)\n"
    "  layout PATH...    which ranks form each TP/CP/DP/PP/EP group; what crosses nodes\n"
    "  resolve PATH...   print each training job as it will run: every setting, its value and origin\n"
    "  recipes [PATTERN] list the Megatron Bridge recipes mblint knows (the names --recipe takes)\n"
    "  plan              rank the parallel layouts of a model on N GPUs that pass every error rule\n"
    "  version           print mblint's version and default Megatron releases (--version: the version)\n"
    "\n"
    "run `mblint <command> --help` for the options of a command.\n";

}  // namespace

int run_cli(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  if (args.empty()) {
    env.err << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "check") return run_check(rest, rules, env);
  if (command == "diff") return run_diff(rest, rules, env);
  if (command == "estimate") return run_estimate(rest, rules, env);
  if (command == "rules") return run_rules(rest, rules, env);
  if (command == "explain") return run_explain(rest, rules, env);
  if (command == "lsp") return run_lsp(rest, rules, env);
  if (command == "layout") return run_layout(rest, rules, env);
  if (command == "plan") return run_plan(rest, rules, env);
  if (command == "resolve") return run_resolve(rest, rules, env);
  if (command == "recipes") return run_recipes(rest, rules, env);
  // `--version` is one line, for scripts and bug reports; `version` adds the
  // Megatron releases checked against when the files do not say.
  if (command == "--version" || command == "-V") {
    env.out << "mblint " << version_text() << "\n";
    return kExitClean;
  }
  if (command == "version") {
    env.out << "mblint " << version_text() << "\nchecks Megatron Bridge " << to_string(kNewestBridge)
            << " and Megatron-Core " << to_string(kNewestMegatronCore) << " when the files do not name a version\n";
    return kExitClean;
  }
  if (command == "help" || command == "-h" || command == "--help") {
    env.out << kUsage;
    return kExitClean;
  }
  env.err << fmt::format("mblint: unknown command '{}'\n\n{}", command, kUsage);
  return kExitUsage;
}

}  // namespace mblint
