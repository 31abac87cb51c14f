// A fix must never leave a new finding. Before a fix is offered, the job is
// re-checked with the fix's change applied (Fix::changes): a fix that leaves
// an error or warning the job did not have, or that does not remove the
// finding it was made for, is dropped. Each fix kept records the findings it
// removes (Fix::resolves), for grouping findings by their root cause
// (lint/run/root_cause.h).
#pragma once

#include <span>

#include "lint/base/diagnostic.h"
#include "lint/facts/derived.h"
#include "lint/model/job.h"
#include "lint/rule/rule.h"

namespace mblint {

struct ProjectConfig;

// Re-checks the fixes of `found` (this job's findings) and drops the bad
// ones. `config` (may be null) applies the same rule settings as the run.
// A diagnostic with help_from_fixes gets its help rewritten from the fixes
// that remain. Section rules (lint/rule/rule.h RuleScope) re-judge only the
// sections a fix changes, unless `everywhere`: the outcome is the same, which
// a test checks over the fixtures and the corpus.
void verify_fixes(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
                  const ProjectConfig* config, std::vector<Diagnostic>& found, size_t first,
                  bool everywhere = false);

// Whether verify_fixes re-checks `fix`: it changes settings and its rule did
// not re-check it already (Fix::rechecked).
bool awaits_recheck(const Fix& fix);

// "set tensor_model_parallel_size to 4, or set nodes to 2"
std::string help_from(const std::vector<Fix>& fixes);

}  // namespace mblint
