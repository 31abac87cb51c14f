// One lint run: files -> jobs -> derived quantities -> rules -> sorted,
// de-duplicated diagnostics. No output happens here.
#pragma once

#include <string>
#include <vector>

#include "lint/derived.h"
#include "lint/diagnostic.h"
#include "lint/job.h"
#include "lint/rule.h"
#include "lint/source.h"

namespace mblint {

struct LintResult {
  std::vector<Job> jobs;
  std::vector<Derived> derived;  // one per job
  std::vector<Diagnostic> diagnostics;
  size_t files_checked = 0;
  std::vector<JobCoverage> coverage;  // every checked job, in order, kept even without keep_jobs
};

// `sources` must already hold the "<command-line>" file options refer to.
// Findings at the same value are folded into its first error, as notes.
LintResult run_lint(SourceSet& sources, const LintOptions& options, RuleSet rules);

// The same, each finding on its own: an editor lists every finding at a place
// and offers a fix and a "Disable RULE" action for each.
LintResult run_lint_unfolded(SourceSet& sources, const LintOptions& options, RuleSet rules);

// Which rules check_job runs where. A fix's re-check confines Section rules
// (lint/rule.h RuleScope) to the top-level sections the fix changed.
struct CheckScope {
  const std::vector<std::string>* sections = nullptr;  // for Section rules; null: every section
  bool section_rules_only = false;
};

// Run every rule with a check over one job (within `scope`).
void check_job(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
               std::vector<Diagnostic>& out, CheckScope scope = {});

// Fill each diagnostic's code from the registry (loaders only know names).
void fill_rule_codes(std::vector<Diagnostic>& diagnostics, RuleSet rules);

}  // namespace mblint
