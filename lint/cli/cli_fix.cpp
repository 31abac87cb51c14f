#include "lint/cli/cli_fix.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lint/base/atomic_write.h"
#include "lint/base/unified_diff.h"
#include "lint/cli/cli.h"
#include "lint/cli/fix_session.h"
#include "lint/command_line/command_line.h"
#include "lint/report/render.h"
#include "lint/run/lint.h"

namespace mblint {

namespace fs = std::filesystem;

namespace {

std::string problems(size_t count) { return fmt::format("{} problem{}", count, count == 1 ? "" : "s"); }

// `a/conf/x.yaml`, as git prints it; an absolute path stays as it is.
std::string diff_label(char side, const std::string& display) {
  if (!display.empty() && display.front() == '/') return display;
  return fmt::format("{}/{}", side, display);
}

bool failing(const std::vector<Diagnostic>& diagnostics, Severity fail_on) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [&](const Diagnostic& d) { return d.severity >= fail_on; });
}

// Fixes that undo each other are reported, not applied.
void report_undone(std::ostream& out, const FixRun& run) {
  for (const AppliedFix& fix : run.undone) {
    out << fmt::format("{}: not fixed: {} [{}] (it does not hold: another fix undoes it, or the finding "
                       "stays; choose by hand)\n",
                       fix.location, fix.description, fix.rule);
  }
}

struct Remaining {
  SourceSet sources;
  LintResult result;
};

// What is left: linted from disk after writing, or from the fixed text for --diff.
Remaining lint_remaining(const std::vector<std::string>& full_args, LintOptions options, RuleSet rules,
                         const RuleSelection& selection, const std::vector<FileChange>& overlay) {
  Remaining remaining;
  add_command_line(remaining.sources, full_args);
  options.overlay.clear();
  for (const FileChange& change : overlay) options.overlay[change.path] = change.after;
  options.selection = selection;
  remaining.result = run_lint(remaining.sources, options, rules);
  return remaining;
}

void render(const Remaining& remaining, const CliEnvironment& env, const CheckOutput& output) {
  Summary summary = summarize(remaining.result.diagnostics, remaining.result.files_checked, remaining.result.coverage);
  if (output.format == "json") {
    render_json(env.out, remaining.sources, remaining.result.diagnostics, summary);
  } else {
    render_text(env.out, remaining.sources, remaining.result.diagnostics, summary, output.color);
  }
}

int show_diff(const FixRun& run, const std::vector<std::string>& full_args, const LintOptions& options,
              RuleSet rules, const CliEnvironment& env, const CheckOutput& output, const RuleSelection& selection) {
  for (const FileChange& change : run.changes) {
    env.out << unified_diff(change.before, change.after, diff_label('a', change.display),
                            diff_label('b', change.display));
  }
  Remaining remaining = lint_remaining(full_args, options, rules, selection, run.changes);
  report_undone(env.err, run);
  env.err << fmt::format("mblint: would fix {} ({} remaining)\n", problems(run.applied.size()),
                         remaining.result.diagnostics.size());
  bool pending = !run.changes.empty() || failing(remaining.result.diagnostics, output.fail_on);
  return pending ? kExitFindings : kExitClean;
}

int write_fixes(const FixRun& run, const std::vector<std::string>& full_args, const LintOptions& options,
                RuleSet rules, const CliEnvironment& env, const CheckOutput& output,
                const RuleSelection& selection) {
  std::set<fs::path> written;
  bool refused = false;
  for (const FileChange& change : run.changes) {
    WriteResult result = replace_file_if_unchanged(change.path, change.before, change.after);
    if (result.status == WriteStatus::Written) {
      written.insert(change.path);
      continue;
    }
    refused = true;
    env.err << "mblint: error: " << result.message << '\n';
  }
  std::vector<const AppliedFix*> fixed;
  for (const AppliedFix& fix : run.applied) {
    bool all_written = std::all_of(fix.files.begin(), fix.files.end(), [&](const fs::path& p) { return written.count(p); });
    if (all_written) fixed.push_back(&fix);
  }
  Remaining remaining = lint_remaining(full_args, options, rules, selection, {});
  std::string tally = fmt::format("mblint: fixed {} ({} remaining)\n", problems(fixed.size()),
                                  remaining.result.diagnostics.size());
  // With JSON on stdout, what was fixed goes to stderr.
  std::ostream& log = output.format == "json" ? env.err : env.out;
  for (const AppliedFix* fix : fixed) {
    log << fmt::format("{}: fixed: {} [{}]\n", fix->location, fix->description, fix->rule);
  }
  report_undone(log, run);
  render(remaining, env, output);
  log << tally;
  return refused || failing(remaining.result.diagnostics, output.fail_on) ? kExitFindings : kExitClean;
}

}  // namespace

void add_fix_options(cxxopts::Options& options) {
  options.add_options("fix")
      ("fix", "apply the safe fixes: only the bytes they change are edited, files are replaced atomically")
      ("unsafe-fixes", "with --fix or --diff: also apply the unsafe fixes (they change what the run does)")
      ("diff", "print the unified diff of what --fix would write, and write nothing");
}

std::optional<FixFlags> read_fix_flags(const cxxopts::ParseResult& parsed, const CliEnvironment& env,
                                       std::optional<int>& stop) {
  FixFlags flags{parsed.count("fix") > 0, parsed.count("unsafe-fixes") > 0, parsed.count("diff") > 0};
  if (!flags.fix && !flags.diff) {
    if (flags.unsafe) stop = usage_error(env, "--unsafe-fixes applies with --fix or --diff");
    return std::nullopt;
  }
  return flags;
}

int run_fixes(const FixFlags& flags, const std::vector<std::string>& full_args, const LintOptions& options,
              RuleSet rules, const CliEnvironment& env, const CheckOutput& output,
              const RuleSelection& selection) {
  FixRun run = compute_fixes(full_args, options, rules, flags.unsafe, selection);
  if (flags.diff) return show_diff(run, full_args, options, rules, env, output, selection);
  return write_fixes(run, full_args, options, rules, env, output, selection);
}

}  // namespace mblint
