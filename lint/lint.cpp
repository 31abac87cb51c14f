#include "lint/lint.h"

#include <algorithm>

#include "lint/fix_insert.h"
#include "lint/fix_syntax.h"
#include "lint/job_builder.h"
#include "lint/subject.h"
#include "lint/suppression.h"
#include "lint/project_run.h"

namespace mblint {

void check_job(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
               std::vector<Diagnostic>& out) {
  bool has_config = job.kind == InputKind::BridgeOverrideYaml || job.kind == InputKind::BridgeDump ||
                    job.kind == InputKind::MegatronLmTestConfig || job.kind == InputKind::NemoYaml ||
                    (job.kind == InputKind::LaunchScript && job.entry != EntryPoint::None &&
                     job.entry != EntryPoint::Unknown);
  if (!has_config) return;
  RuleContext context{job, derived, thresholds};
  for (const RuleInfo* rule : rules) {
    if (rule->check) rule->check(context, out);
  }
}

void fill_rule_codes(std::vector<Diagnostic>& diagnostics, RuleSet rules) {
  for (Diagnostic& d : diagnostics) {
    if (!d.code.empty()) continue;
    if (const RuleInfo* rule = find_rule(rules, d.rule)) d.code = std::string(rule->code);
  }
}

LintResult run_lint(SourceSet& sources, const LintOptions& options, RuleSet rules) {
  LintResult result;
  // Directories walked, each file under its .mblint.yaml (lint/project_run.h).
  ProjectBuild built = build_project(sources, options, rules);
  result.files_checked = built.files_checked;
  result.diagnostics = std::move(built.problems);
  result.jobs = std::move(built.jobs);
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    const Job& job = result.jobs[i];
    const ProjectConfig* config = built.job_configs[i];
    result.derived.push_back(derive(job));
    if (config) apply_config_nvlink_domain(*config, options, result.derived.back());
    size_t first = result.diagnostics.size();
    result.diagnostics.insert(result.diagnostics.end(), job.problems.begin(), job.problems.end());
    check_job(job, result.derived.back(), built.job_thresholds[i], rules, result.diagnostics);
    place_setting_fixes(result.diagnostics, first, job, sources);
    if (config) apply_rule_settings(*config, result.diagnostics, first);  // rules.disable / rules.severity
    fill_subjects(job, sources, std::span(result.diagnostics).subspan(first));
  }
  apply_suppressions(sources, rules, result.diagnostics);
  fill_rule_codes(result.diagnostics, rules);
  fit_fix_edits(result.diagnostics, sources);
  sort_and_deduplicate(result.diagnostics);
  // Findings in files first, then those located on mblint's own command line.
  std::stable_partition(result.diagnostics.begin(), result.diagnostics.end(), [&](const Diagnostic& d) {
    return !d.where.valid() || !sources.files[d.where.file].synthetic;
  });
  return result;
}

}  // namespace mblint
