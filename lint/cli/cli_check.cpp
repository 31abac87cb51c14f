// `mblint check PATH...`: lint the jobs and report every finding.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lint/base/output_file.h"
#include "lint/cli/cli.h"
#include "lint/cli/cli_fix.h"
#include "lint/command_line/command_line.h"
#include "lint/engine/baseline.h"
#include "lint/load/yaml/yaml_ahead.h"
#include "lint/model/rule_selection.h"
#include "lint/report/render.h"
#include "lint/run/lint.h"

namespace mblint {

namespace {

cxxopts::Options check_options() {
  cxxopts::Options options("mblint check", "Lint Megatron Bridge launch scripts and YAML configs.");
  options.custom_help("[options]");
  options.positional_help("PATH...");
  add_job_options(options);
  add_fix_options(options);
  options.add_options("rules")
      ("select", "report only these rules: names or codes, comma-separated (repeatable)",
       cxxopts::value<std::vector<std::string>>())
      ("ignore", "do not report these rules: names or codes, comma-separated (repeatable)",
       cxxopts::value<std::vector<std::string>>());
  options.add_options("output")
      ("format", "output format: text (default), json, sarif or github (the default when GITHUB_ACTIONS=true)",
       cxxopts::value<std::string>())
      ("output", "write the report to FILE (atomically) instead of standard output", cxxopts::value<std::string>())
      ("fail-on", "exit 1 when a finding is at least: error, warning or note",
       cxxopts::value<std::string>()->default_value("error"))
      ("exit-zero", "exit 0 even when there are findings (usage and internal errors still fail)")
      ("require-complete", "a job mblint can check only partly (unknown recipe, allocation, ...) is an error")
      ("q,quiet", "print only the diagnostics: no summary line, nothing when clean")
      ("statistics", "print how often each rule fired instead of the diagnostics")
      ("baseline", "hide the findings listed in baseline FILE (report only new ones)", cxxopts::value<std::string>())
      ("write-baseline", "write the current findings to baseline FILE and exit 0", cxxopts::value<std::string>())
      ("color", "colour: auto, always or never", cxxopts::value<std::string>()->default_value("auto"))
      ("h,help", "show this help")
      ("j,jobs", "threads that parse YAML files (default: one per CPU mblint may use, at most 8; 1: none)",
       cxxopts::value<std::string>())
      ("paths", "files and directories to check", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

struct ReportOptions {
  std::string format;
  Severity fail_on = Severity::Error;
  bool exit_zero = false;
  bool quiet = false;
  bool statistics = false;
  std::string color;
  std::optional<std::string> output;
  std::optional<std::string> baseline;
  std::optional<std::string> write_baseline;
  RuleSelection selection;
};

std::optional<std::string> optional_string(const cxxopts::ParseResult& parsed, const std::string& name) {
  if (!parsed.count(name)) return std::nullopt;
  return parsed[name].as<std::string>();
}

// GitHub Actions sets GITHUB_ACTIONS=true: annotations unless a format is asked for.
std::string chosen_format(const cxxopts::ParseResult& parsed, const CliEnvironment& env) {
  if (parsed.count("format")) return parsed["format"].as<std::string>();
  std::optional<std::string> actions = env.getenv ? env.getenv("GITHUB_ACTIONS") : std::nullopt;
  return actions && *actions == "true" ? "github" : "text";
}

std::optional<int> read_report_options(const cxxopts::ParseResult& parsed, const CliEnvironment& env,
                                       ReportOptions& report) {
  report.format = chosen_format(parsed, env);
  if (report.format != "text" && report.format != "json" && report.format != "sarif" && report.format != "github") {
    return usage_error(env, fmt::format("unknown --format '{}' (text, json, sarif or github)", report.format));
  }
  auto fail_on = parse_severity(parsed["fail-on"].as<std::string>());
  if (!fail_on) return usage_error(env, "--fail-on takes error, warning or note");
  report.fail_on = *fail_on;
  report.color = parsed["color"].as<std::string>();
  if (report.color != "auto" && report.color != "always" && report.color != "never") {
    return usage_error(env, "--color takes auto, always or never");
  }
  report.exit_zero = parsed.count("exit-zero") > 0;
  report.quiet = parsed.count("quiet") > 0;
  report.statistics = parsed.count("statistics") > 0;
  if (report.statistics && report.format != "text" && report.format != "json") {
    return usage_error(env, "--statistics works with --format text or json");
  }
  report.output = optional_string(parsed, "output");
  report.baseline = optional_string(parsed, "baseline");
  report.write_baseline = optional_string(parsed, "write-baseline");
  return std::nullopt;
}

// --select / --ignore, by rule name or code.
std::optional<int> read_rule_selection(const cxxopts::ParseResult& parsed, const CliEnvironment& env, RuleSet rules,
                                       RuleSelection& selection) {
  auto values = [&](const std::string& name) {
    return parsed.count(name) ? parsed[name].as<std::vector<std::string>>() : std::vector<std::string>{};
  };
  std::string error;
  if (!parse_rule_selection(values("select"), values("ignore"), rule_names(rules), selection, error)) {
    return usage_error(env, error);
  }
  return std::nullopt;
}

// --jobs N, or one thread per CPU mblint may use, at most kDefaultThreads.
std::optional<int> read_threads(const cxxopts::ParseResult& parsed, const CliEnvironment& env, LintOptions& options) {
  // Jobs are built and checked on one thread, about a quarter of the work of
  // a run: past a few parse threads that thread is the bottleneck, and more
  // threads only hold more parsed files in memory.
  constexpr unsigned kDefaultThreads = 8;
  options.threads = std::min(available_cpus(), kDefaultThreads);
  if (!parsed.count("jobs")) return std::nullopt;
  const std::string text = parsed["jobs"].as<std::string>();
  unsigned threads = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads == 0 || threads > 1024) {
    return usage_error(env, fmt::format("--jobs takes a number of threads from 1 to 1024, got '{}'", text));
  }
  options.threads = threads;
  return std::nullopt;
}

std::filesystem::path absolute_in(const CliEnvironment& env, const std::string& path) {
  std::filesystem::path p(path);
  return p.is_absolute() || env.cwd.empty() ? p : env.cwd / p;
}

// Hides the baseline's findings; an exit code when the file is unusable.
std::optional<int> use_baseline(const ReportOptions& report, const CliEnvironment& env, const SourceSet& sources,
                                LintResult& result, size_t& hidden) {
  std::ifstream in(absolute_in(env, *report.baseline), std::ios::binary);
  if (!in) return usage_error(env, fmt::format("cannot read baseline '{}'", *report.baseline));
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  auto baseline = parse_baseline(text.str(), error);
  if (!baseline) return usage_error(env, fmt::format("baseline '{}': {}", *report.baseline, error));
  hidden = apply_baseline(sources, *baseline, env.cwd, result.diagnostics);
  return std::nullopt;
}

void render_report(std::ostream& out, const ReportOptions& report, const SourceSet& sources,
                   const LintResult& result, RuleSet rules, size_t hidden, bool color, const CliEnvironment& env) {
  Summary summary = summarize(result.diagnostics, result.files_checked, result.coverage);
  if (report.format == "json") {
    if (report.statistics) render_statistics_json(out, result.diagnostics, summary);
    else render_json(out, sources, result.diagnostics, summary);
  } else if (report.format == "sarif") {
    render_sarif(out, sources, result.diagnostics, rules, kVersion, env.cwd);
  } else if (report.format == "github") {
    render_github(out, sources, result.diagnostics);
  } else {
    if (report.statistics) render_statistics(out, result.diagnostics);
    else render_text_diagnostics(out, sources, result.diagnostics, color);
    if (!report.quiet) {
      render_text_summary(out, summary);
      if (hidden) out << fmt::format("mblint: {} existing finding{} hidden by the baseline\n", hidden, hidden == 1 ? "" : "s");
    }
  }
}

int write_baseline_file(const ReportOptions& report, const CliEnvironment& env, const SourceSet& sources,
                        const LintResult& result) {
  std::vector<BaselineEntry> entries = make_baseline(sources, result.diagnostics, env.cwd);
  std::string error;
  if (!write_file_atomically(absolute_in(env, *report.write_baseline), baseline_to_json(entries), error)) {
    return usage_error(env, fmt::format("cannot write baseline '{}': {}", *report.write_baseline, error));
  }
  env.err << fmt::format("mblint: wrote {} finding{} to baseline {}\n", result.diagnostics.size(),
                         result.diagnostics.size() == 1 ? "" : "s", *report.write_baseline);
  return kExitClean;
}

}  // namespace

int run_check(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = check_options();
  cxxopts::ParseResult parsed;
  // The words after `--` are the script's own arguments (read_script_args).
  std::vector<std::string> own(args.begin(), std::find(args.begin(), args.end(), "--"));
  if (auto stop = parse_command(parser, own, parsed, env)) return *stop;
  if (!parsed.count("paths")) return usage_error(env, "check needs at least one file (see mblint check --help)");
  ReportOptions report;
  if (auto stop = read_report_options(parsed, env, report)) return *stop;
  if (auto stop = read_rule_selection(parsed, env, rules, report.selection)) return *stop;
  std::optional<int> fix_stop;
  std::optional<FixFlags> fix_flags = read_fix_flags(parsed, env, fix_stop);
  if (fix_stop) return *fix_stop;
  if (fix_flags && report.format != "text" && report.format != "json") {
    return usage_error(env, "--fix and --diff report in text or json only");
  }

  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "check", args);
  LintOptions options;
  options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  if (auto stop = read_threads(parsed, env, options)) return *stop;
  options.thresholds.require_complete = parsed.count("require-complete") > 0;
  if (fix_flags) {
    return run_fixes(*fix_flags, full_args, options, rules, env,
                     {report.format, report.fail_on, use_color(report.color, env)}, report.selection);
  }

  options.keep_jobs = false;  // the report needs the diagnostics and the sources only
  options.selection = report.selection;
  LintResult result = run_lint(sources, options, rules);
  if (report.write_baseline) return write_baseline_file(report, env, sources, result);
  size_t hidden = 0;
  if (report.baseline) {
    if (auto stop = use_baseline(report, env, sources, result, hidden)) return *stop;
  }
  if (report.output) {
    std::ostringstream text;
    render_report(text, report, sources, result, rules, hidden, report.color == "always", env);
    std::string error;
    if (!write_file_atomically(absolute_in(env, *report.output), text.str(), error)) {
      return usage_error(env, fmt::format("cannot write --output '{}': {}", *report.output, error));
    }
  } else {
    render_report(env.out, report, sources, result, rules, hidden, use_color(report.color, env), env);
  }
  bool failing = std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                             [&](const Diagnostic& d) { return d.severity >= report.fail_on; });
  return failing && !report.exit_zero ? kExitFindings : kExitClean;
}

}  // namespace mblint
