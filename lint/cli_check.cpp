// `mblint check FILE...`: lint the jobs and report every finding.
#include <algorithm>

#include <fmt/format.h>

#include "lint/cli_common.h"
#include "lint/cli_fix.h"
#include "lint/lint.h"
#include "lint/render.h"

namespace mblint {

namespace {

cxxopts::Options check_options() {
  cxxopts::Options options("mblint check", "Lint Megatron Bridge launch scripts and YAML configs.");
  options.custom_help("[options]");
  options.positional_help("FILE...");
  add_job_options(options);
  add_fix_options(options);
  options.add_options("output")
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("fail-on", "exit 1 when a finding is at least: error, warning or note",
       cxxopts::value<std::string>()->default_value("error"))
      ("color", "colour: auto, always or never", cxxopts::value<std::string>()->default_value("auto"))
      ("h,help", "show this help")
      ("paths", "files to check", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

}  // namespace

int run_check(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = check_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  if (!parsed.count("paths")) return usage_error(env, "check needs at least one file (see mblint check --help)");
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, fmt::format("unknown --format '{}'", format));
  auto fail_on = parse_severity(parsed["fail-on"].as<std::string>());
  if (!fail_on) return usage_error(env, "--fail-on takes error, warning or note");
  std::string color = parsed["color"].as<std::string>();
  if (color != "auto" && color != "always" && color != "never") {
    return usage_error(env, "--color takes auto, always or never");
  }
  std::optional<int> fix_stop;
  std::optional<FixFlags> fix_flags = read_fix_flags(parsed, env, fix_stop);
  if (fix_stop) return *fix_stop;

  SourceSet sources;
  std::vector<std::string> full_args = {"check"};
  full_args.insert(full_args.end(), args.begin(), args.end());
  CommandLine line = add_command_line(sources, full_args);
  LintOptions options;
  options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  if (fix_flags) return run_fixes(*fix_flags, full_args, options, rules, env, {format, *fail_on, use_color(color, env)});

  LintResult result = run_lint(sources, options, rules);
  Summary summary = summarize(result.diagnostics, result.files_checked);
  if (format == "json") {
    render_json(env.out, sources, result.diagnostics, summary);
  } else {
    render_text(env.out, sources, result.diagnostics, summary, use_color(color, env));
  }
  bool failing = std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                             [&](const Diagnostic& d) { return d.severity >= *fail_on; });
  return failing ? kExitFindings : kExitClean;
}

}  // namespace mblint
