#include "lint/rule.h"

#include <algorithm>

namespace mblint {

const RuleInfo* find_rule(RuleSet rules, std::string_view name_or_code) {
  for (const RuleInfo* rule : rules) {
    if (rule->name == name_or_code || rule->code == name_or_code) return rule;
  }
  return nullptr;
}

bool in_scope(const RuleContext& context, std::string_view section) {
  if (!context.sections) return true;
  return std::find(context.sections->begin(), context.sections->end(), section) != context.sections->end();
}

Diagnostic make_diagnostic(const RuleInfo& rule, std::string message, Span where) {
  Diagnostic d;
  d.rule = std::string(rule.name);
  d.code = std::string(rule.code);
  d.severity = rule.severity;
  d.message = std::move(message);
  d.where = where;
  return d;
}

}  // namespace mblint
