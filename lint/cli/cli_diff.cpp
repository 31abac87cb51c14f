// `mblint diff [BASE [HEAD]] [PATH...]`: what a change does to each training
// job: settings, derived sizes, memory and speed before and after, and the
// findings it brings and fixes; a CI gate (lint/diff). BASE defaults to HEAD,
// HEAD to the working tree; a revision side is read from git through the
// overlay, never checked out.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/diff/diff_render.h"
#include "lint/diff/git_repo.h"
#include "lint/report/render.h"
#include "lint/resolve/project_config.h"

namespace mblint {

namespace {

namespace fs = std::filesystem;

constexpr const char* kWorktree = "WORKTREE";

const char* const kLimitNames[] = {"max-peak-memory-increase-gib", "max-memory-fraction",
                                   "max-step-time-increase-percent", "max-throughput-drop-percent",
                                   "max-bubble-increase"};

cxxopts::Options diff_options() {
  cxxopts::Options options("mblint diff",
                           "What a change does to each training job: the settings that moved and where, the derived "
                           "sizes, memory and step time before and after, the findings it brings and fixes. Exits 1 "
                           "on a new error or a regression beyond the diff: limits of .mblint.yaml or the flags.");
  options.custom_help("[options]");
  options.positional_help("[BASE [HEAD]] [PATH...]");
  add_job_options(options);
  options.add_options("output")
      ("format", "output format: text, json, markdown, github or sarif (the last two: the new findings)",
       cxxopts::value<std::string>()->default_value("text"))
      ("all", "list the unchanged jobs too")
      ("color", "colour: auto, always or never", cxxopts::value<std::string>()->default_value("auto"))
      ("h,help", "show this help")
      ("args", "revisions, then files and directories", cxxopts::value<std::vector<std::string>>());
  options.add_options("gate")
      ("max-peak-memory-increase-gib", "fail when a job's peak memory per GPU rises by more GiB",
       cxxopts::value<double>())
      ("max-memory-fraction", "fail when a change raises a job's peak above this share of the GPU's memory",
       cxxopts::value<double>())
      ("max-step-time-increase-percent", "fail when the predicted step time rises by more percent",
       cxxopts::value<double>())
      ("max-throughput-drop-percent", "fail when the predicted tokens/s/GPU drop by more percent",
       cxxopts::value<double>())
      ("max-bubble-increase", "fail when the pipeline bubble's share of the step rises by more (0.05: 5 points)",
       cxxopts::value<double>());
  options.parse_positional({"args"});
  return options;
}

// Which arguments are revisions (at most two, first) and which are paths.
struct Targets {
  std::string base = "HEAD";
  std::optional<std::string> head;  // nullopt: the working tree
  std::string base_commit;
  std::optional<std::string> head_commit;
  std::vector<std::string> paths;
};

std::optional<int> read_targets(const std::vector<std::string>& args, const fs::path& root, const CliEnvironment& env,
                                Targets& targets) {
  size_t revisions = 0;
  for (const std::string& arg : args) {
    std::error_code error;
    bool is_path = fs::exists(fs::absolute(env.cwd / arg), error);
    if (revisions < 2 && targets.paths.empty() && !is_path) {
      if (!resolve_commit(root, arg)) {
        return usage_error(env, fmt::format("diff: '{}' is neither a revision of the repository at {} nor a path",
                                            arg, root.string()));
      }
      (revisions == 0 ? targets.base : targets.head.emplace()) = arg;
      ++revisions;
      continue;
    }
    targets.paths.push_back(arg);  // as named: the run resolves it from the working directory and shows it so
  }
  auto base = resolve_commit(root, targets.base);
  if (!base) return usage_error(env, fmt::format("diff: unknown revision '{}' (the repository has no commit yet?)", targets.base));
  targets.base_commit = *base;
  if (targets.head) targets.head_commit = resolve_commit(root, *targets.head);
  if (targets.paths.empty()) targets.paths.push_back(root.string());
  return std::nullopt;
}

// The limits: a flag wins over the nearest .mblint.yaml's diff: section, and
// is checked as that section checks its values.
std::optional<int> read_limits(const cxxopts::ParseResult& parsed, const ProjectConfig* config,
                               const CliEnvironment& env, DiffLimits& limits) {
  std::optional<double>* slots[] = {&limits.max_peak_memory_increase_gib, &limits.max_memory_fraction,
                                    &limits.max_step_time_increase_percent, &limits.max_throughput_drop_percent,
                                    &limits.max_bubble_increase};
  if (config) {
    const DiffThresholds& d = config->diff;
    const std::optional<LocatedNumber>* written[] = {&d.max_peak_memory_increase_gib, &d.max_memory_fraction,
                                                     &d.max_step_time_increase_percent,
                                                     &d.max_throughput_drop_percent, &d.max_bubble_increase};
    for (size_t i = 0; i < 5; ++i) {
      if (*written[i]) *slots[i] = (*written[i])->value;
    }
  }
  for (size_t i = 0; i < 5; ++i) {
    if (!parsed.count(kLimitNames[i])) continue;
    double value = parsed[kLimitNames[i]].as<double>();
    bool fraction = slots[i] == &limits.max_memory_fraction;
    if (!std::isfinite(value) || value < 0 || (fraction && (value <= 0 || value > 1))) {
      return usage_error(env, fmt::format("--{} takes {}, not {}", kLimitNames[i],
                                          fraction ? "a fraction above 0 and at most 1" : "a number of at least 0",
                                          value));
    }
    *slots[i] = value;
  }
  return std::nullopt;
}

// The project config whose diff: limits apply: --config, else the nearest
// .mblint.yaml above the working directory. A diff: section with a problem
// stops the command (exit 2): a gate must not pass on the limits that
// happened to read.
std::optional<int> read_gate_config(const LintOptions& options, const CliEnvironment& env, RuleSet rules,
                                    std::unique_ptr<ProjectConfig>& config) {
  if (options.no_project_config) return std::nullopt;
  std::optional<fs::path> path = options.project_config
                                     ? std::optional(fs::absolute(env.cwd / options.project_config->text))
                                     : find_project_config(env.cwd);
  if (!path) return std::nullopt;
  SourceSet sources;
  std::vector<Diagnostic> problems;
  std::string display = path->lexically_relative(env.cwd).string();
  config = std::make_unique<ProjectConfig>(
      load_project_config(sources, *path, display, Span{}, rule_names(rules), problems));
  if (config->diff.valid) return std::nullopt;
  render_text_diagnostics(env.err, sources, problems, false);
  return usage_error(env, fmt::format("diff: the diff: section of {} has a problem (above)", display));
}

// One side's lint run: the working tree from disk, or a commit's files.
std::optional<int> lint_side(const std::vector<std::string>& full_args, const Targets& targets,
                             const std::optional<std::string>& commit, const fs::path& root, RuleSet rules,
                             const CliEnvironment& env, DiffSide& side, LintOptions& options) {
  side.label = commit ? *commit : kWorktree;
  CommandLine line = add_command_line(side.sources, full_args);
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  options.paths = targets.paths;
  options.keep_jobs = true;
  auto overlay = commit ? revision_overlay(root, *commit) : worktree_overlay(root);
  if (!overlay) {
    return usage_error(env, fmt::format("diff: git could not list the files of {}", commit ? *commit : "the working tree"));
  }
  options.overlay = std::move(*overlay);
  side.result = run_lint(side.sources, options, rules);
  return std::nullopt;
}

std::optional<int> check_output_options(const cxxopts::ParseResult& parsed, const CliEnvironment& env) {
  std::string format = parsed["format"].as<std::string>();
  const std::vector<std::string> formats = {"text", "json", "markdown", "github", "sarif"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    return usage_error(env, "diff --format takes text, json, markdown, github or sarif");
  }
  std::string color = parsed["color"].as<std::string>();
  if (color != "auto" && color != "always" && color != "never") return usage_error(env, "--color takes auto, always or never");
  return std::nullopt;
}

int render(const std::string& format, const DiffView& view, RuleSet rules, const fs::path& root, const std::string& color,
           const CliEnvironment& env) {
  if (format == "json") render_diff_json(env.out, view);
  else if (format == "markdown") render_diff_markdown(env.out, view);
  else if (format == "github") render_github(env.out, view.head.sources, new_findings(view.report));
  else if (format == "sarif") render_sarif(env.out, view.head.sources, new_findings(view.report), rules, kVersion, root);
  else render_diff_text(env.out, view, use_color(color, env));
  return view.new_errors > 0 || !view.regressions.empty() ? kExitFindings : kExitClean;
}

}  // namespace

int run_diff(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = diff_options();
  cxxopts::ParseResult parsed;
  std::vector<std::string> own(args.begin(), std::find(args.begin(), args.end(), "--"));
  if (auto stop = parse_command(parser, own, parsed, env)) return *stop;
  if (auto stop = check_output_options(parsed, env)) return *stop;
  std::optional<fs::path> root = repository_root(env.cwd);
  if (!root) {
    return usage_error(env, fmt::format("diff: '{}' is not in a git repository (or git is not installed): mblint diff "
                                        "compares the jobs of two revisions",
                                        env.cwd.string()));
  }
  Targets targets;
  auto positional = parsed.count("args") ? parsed["args"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (auto stop = read_targets(positional, *root, env, targets)) return *stop;

  std::vector<std::string> full_args = {"diff"};
  full_args.insert(full_args.end(), args.begin(), args.end());
  DiffSide base, head;
  LintOptions base_options, head_options;
  if (auto stop = lint_side(full_args, targets, targets.base_commit, *root, rules, env, base, base_options)) return *stop;
  if (auto stop = lint_side(full_args, targets, targets.head_commit, *root, rules, env, head, head_options)) return *stop;

  std::unique_ptr<ProjectConfig> config;
  if (auto stop = read_gate_config(head_options, env, rules, config)) return *stop;
  SideJobs before = side_jobs(base), after = side_jobs(head);
  DiffReport report = diff_jobs(base, before, head, after);
  DiffLimits limits;
  if (auto stop = read_limits(parsed, config.get(), env, limits)) return *stop;
  std::vector<Regression> regressions = find_regressions(report, limits);
  DiffView view{base, head, report, regressions, count_new_errors(report), parsed.count("all") > 0};
  return render(parsed["format"].as<std::string>(), view, rules, *root, parsed["color"].as<std::string>(), env);
}

}  // namespace mblint
