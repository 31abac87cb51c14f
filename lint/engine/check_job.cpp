#include "lint/engine/check_job.h"

namespace mblint {

namespace {

void check_whole_job(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
                     std::vector<Diagnostic>& out) {
  check_job(job, derived, thresholds, rules, out);
}

}  // namespace

void check_job(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
               std::vector<Diagnostic>& out, CheckScope scope) {
  if (!is_checked_job(job)) return;
  RuleContext context{job, derived, thresholds};
  context.rules = rules;
  context.check_rules = check_whole_job;
  for (const RuleInfo* rule : rules) {
    if (!rule->check) continue;
    bool per_section = rule->scope == RuleScope::Section;
    if (scope.section_rules_only && !per_section) continue;
    context.sections = per_section ? scope.sections : nullptr;
    rule->check(context, out);
  }
}

void fill_rule_codes(std::vector<Diagnostic>& diagnostics, RuleSet rules) {
  for (Diagnostic& d : diagnostics) {
    if (!d.code.empty()) continue;
    if (const RuleInfo* rule = find_rule(rules, d.rule)) d.code = std::string(rule->code);
  }
}

}  // namespace mblint
