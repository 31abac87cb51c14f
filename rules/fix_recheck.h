// Re-checking a fix before it is offered: the job with the fix applied is
// run through every other rule, and an error or warning the job did not
// have before is reported back (a fix never leaves a new finding; a note is
// advice and does not count).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/diagnostic.h"
#include "lint/job.h"
#include "lint/rule.h"

namespace mblint {

// The re-checks of one rule over one job: the job's own findings are
// worked out once, on the first re-check.
struct FixRecheck {
  const RuleContext& context;
  std::string_view own_rule;  // the rule offering the fixes: not run (it re-checks its findings itself)
  std::optional<std::vector<std::string>> before = {};
};

// The first error or warning of `changed` (the job with a fix applied) that
// the job itself does not have, by rule and message; every rule with a check
// runs but the own rule. nullopt: the fix leaves nothing new.
std::optional<Diagnostic> new_finding_after_fix(FixRecheck& recheck, const Job& changed);

// True while new_finding_after_fix runs its rules (or a NoFixRechecks is
// alive): a rule asked to check a job only to compare its findings offers
// its fixes without re-checking them, so re-checks never nest.
bool rechecking_fix();

// Held while rules run only for their findings (the memory remedies'
// re-checks): fixes are not re-checked meanwhile.
struct NoFixRechecks {
  NoFixRechecks();
  ~NoFixRechecks();
  NoFixRechecks(const NoFixRechecks&) = delete;
  NoFixRechecks& operator=(const NoFixRechecks&) = delete;
};

}  // namespace mblint
