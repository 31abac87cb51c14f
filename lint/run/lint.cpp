#include "lint/run/lint.h"

#include <algorithm>
#include <iterator>

#include "lint/engine/subject.h"
#include "lint/engine/suppression.h"
#include "lint/facts/memory_coverage.h"
#include "lint/fix/fix_insert.h"
#include "lint/fix/fix_syntax.h"
#include "lint/fix/fix_verify.h"
#include "lint/resolve/job_builder.h"
#include "lint/resolve/project_run.h"
#include "lint/run/root_cause.h"

namespace mblint {

namespace {

LintResult lint_all(SourceSet& sources, const LintOptions& options, RuleSet rules, bool fold, FixCheck fixes) {
  LintResult result;
  // Each job is checked as soon as it is built; only with keep_jobs does it
  // stay (with its value trees) once its diagnostics are made.
  std::vector<Diagnostic> found;
  auto check = [&](Job& job, const ProjectConfig* config, const Thresholds& thresholds) {
    Derived derived = derive(job);
    if (config) apply_config_nvlink_domain(*config, options, derived);
    add_memory_gap(job, derived);
    size_t first = found.size();
    found.insert(found.end(), job.problems.begin(), job.problems.end());
    check_job(job, derived, thresholds, rules, found);
    place_setting_fixes(found, first, job, sources);
    if (config) apply_rule_settings(*config, found, first);  // rules.disable / rules.severity
    if (fixes == FixCheck::Checked) {
      verify_fixes(job, derived, thresholds, rules, config, found, first, options.recheck_everywhere);
    }
    fill_subjects(job, sources, std::span(found).subspan(first));
    if (is_checked_job(job)) result.coverage.push_back(coverage_entry(job, derived));
    if (!options.keep_jobs) return;
    result.jobs.push_back(std::move(job));
    result.derived.push_back(std::move(derived));
  };
  // Directories walked, each file under its .mblint.yaml (lint/resolve/project_run.h).
  ProjectBuild built = build_project(sources, options, rule_names(rules), check);
  result.files_checked = built.files_checked;
  result.diagnostics = std::move(built.problems);
  result.diagnostics.insert(result.diagnostics.end(), std::make_move_iterator(found.begin()),
                            std::make_move_iterator(found.end()));
  apply_suppressions(sources, rules, result.diagnostics);
  fill_rule_codes(result.diagnostics, rules);
  fit_fix_edits(result.diagnostics, sources);
  sort_and_deduplicate(result.diagnostics);
  apply_rule_selection(options.selection, result.diagnostics);
  if (fold) fold_root_causes(result.diagnostics);
  // Findings in files first, then those located on mblint's own command line.
  std::stable_partition(result.diagnostics.begin(), result.diagnostics.end(), [&](const Diagnostic& d) {
    return !d.where.valid() || !sources.files[d.where.file].synthetic;
  });
  return result;
}

}  // namespace

LintResult run_lint(SourceSet& sources, const LintOptions& options, RuleSet rules) {
  return lint_all(sources, options, rules, true, FixCheck::Checked);
}

LintResult run_lint_unfolded(SourceSet& sources, const LintOptions& options, RuleSet rules, FixCheck fixes) {
  return lint_all(sources, options, rules, false, fixes);
}

}  // namespace mblint
