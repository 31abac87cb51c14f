#include "rules/fix_recheck.h"

#include <algorithm>
#include <string>
#include <vector>

#include "lint/derived.h"
#include "lint/lint.h"
#include "rules/registry.h"

namespace mblint {

namespace {

thread_local int recheck_depth = 0;

// The errors and warnings of `job` (notes are advice: a fix may bring one).
std::vector<Diagnostic> findings(const Job& job, const Thresholds& thresholds, std::string_view own_rule) {
  std::vector<const RuleInfo*> selected;
  for (const RuleInfo* rule : all_rules()) {
    if (rule->check && rule->name != own_rule) selected.push_back(rule);
  }
  std::vector<Diagnostic> found;
  // Both sides are derived the same way (the project config's NVLink domain
  // is not applied to either), so only the fix makes them differ.
  Derived derived = derive(job);
  check_job(job, derived, thresholds, RuleSet(selected.data(), selected.size()), found);
  std::erase_if(found, [](const Diagnostic& d) { return d.severity == Severity::Note; });
  return found;
}

std::string key_of(const Diagnostic& d) { return d.rule + ": " + d.message; }

}  // namespace

bool rechecking_fix() { return recheck_depth > 0; }

NoFixRechecks::NoFixRechecks() { ++recheck_depth; }
NoFixRechecks::~NoFixRechecks() { --recheck_depth; }

std::optional<Diagnostic> new_finding_after_fix(FixRecheck& recheck, const Job& changed) {
  NoFixRechecks scope;
  const Thresholds& thresholds = recheck.context.thresholds;
  if (!recheck.before) {
    std::vector<std::string> keys;
    for (const Diagnostic& d : findings(recheck.context.job, thresholds, recheck.own_rule)) keys.push_back(key_of(d));
    std::sort(keys.begin(), keys.end());
    recheck.before = std::move(keys);
  }
  for (Diagnostic& d : findings(changed, thresholds, recheck.own_rule)) {
    if (!std::binary_search(recheck.before->begin(), recheck.before->end(), key_of(d))) return std::move(d);
  }
  return std::nullopt;
}

}  // namespace mblint
