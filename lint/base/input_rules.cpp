#include "lint/base/input_rules.h"

#include <algorithm>

namespace mblint {

Diagnostic input_finding(const InputRule& rule, std::string message, Span where, std::string help) {
  Diagnostic d;
  d.rule = std::string(rule.name);
  d.severity = rule.severity;
  d.message = std::move(message);
  d.where = where;
  d.help = std::move(help);
  return d;
}

Diagnostic demoted(Diagnostic finding, Severity level) {
  finding.severity = std::min(finding.severity, level);
  return finding;
}

}  // namespace mblint
