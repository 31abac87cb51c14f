// Running the rules over one resolved job. The rules see the job and its
// derived facts through a RuleContext; they never reach up to this stage.
#pragma once

#include <string>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/facts/derived.h"
#include "lint/model/job.h"
#include "lint/rule/rule.h"

namespace mblint {

// Which rules check_job runs where. A fix's re-check confines Section rules
// (lint/rule/rule.h RuleScope) to the top-level sections the fix changed.
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
