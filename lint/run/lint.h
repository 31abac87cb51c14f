// One lint run: files -> jobs -> derived quantities -> rules -> sorted,
// de-duplicated diagnostics. No output happens here.
#pragma once

#include <string>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/engine/check_job.h"
#include "lint/facts/derived.h"
#include "lint/model/job.h"
#include "lint/rule/rule.h"

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

// Whether fixes are re-checked before they are returned (lint/fix/fix_verify.h).
// The language server's first publish after an edit leaves them unchecked:
// the findings reach the editor in a few milliseconds, and it re-lints with
// the check when the input is quiet or before it offers a fix.
enum class FixCheck { Checked, Unchecked };

// The same, each finding on its own: an editor lists every finding at a place
// and offers a fix and a "Disable RULE" action for each.
LintResult run_lint_unfolded(SourceSet& sources, const LintOptions& options, RuleSet rules,
                             FixCheck fixes = FixCheck::Checked);

}  // namespace mblint
