#include "lint/model/rule_selection.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "lint/model/schema.h"

namespace mblint {

namespace {

// The rule name or code nearest to `text`, when one is close.
std::string closest_rule_name(const RuleNames& rules, std::string_view text) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, text.size() / 3) + 1;
  for (const RuleName& rule : rules) {
    for (std::string_view candidate : {rule.name, rule.code}) {
      size_t distance = edit_distance(text, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = std::string(rule.name);
      }
    }
  }
  return best;
}

bool read_list(const std::vector<std::string>& values, std::string_view option, const RuleNames& rules,
               std::set<std::string>& names, std::string& error) {
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t end = std::min(value.find(',', start), value.size());
      std::string item = value.substr(start, end - start);
      start = end + 1;
      if (item.empty()) continue;  // "a,,b" and a trailing comma
      if (const RuleName* rule = find_rule_name(rules, item)) {
        names.insert(std::string(rule->name));
        continue;
      }
      std::string similar = closest_rule_name(rules, item);
      error = fmt::format("{}: unknown rule '{}' ({})", option, item,
                          similar.empty() ? "`mblint rules` lists every rule name and code"
                                          : fmt::format("did you mean {}?", similar));
      return false;
    }
  }
  return true;
}

}  // namespace

const RuleName* find_rule_name(const RuleNames& rules, std::string_view name_or_code) {
  for (const RuleName& rule : rules) {
    if (rule.name == name_or_code || rule.code == name_or_code) return &rule;
  }
  return nullptr;
}

bool RuleSelection::keeps(const std::string& rule) const {
  if (ignored.count(rule)) return false;
  if (selected.empty() || selected.count(rule) > 0) return true;
  return std::find(std::begin(kInputRules), std::end(kInputRules), rule) != std::end(kInputRules);
}

bool parse_rule_selection(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
                          const RuleNames& rules, RuleSelection& selection, std::string& error) {
  if (!read_list(select, "--select", rules, selection.selected, error)) return false;
  if (!read_list(ignore, "--ignore", rules, selection.ignored, error)) return false;
  if (!select.empty() && selection.selected.empty()) {
    error = "--select names no rule";
    return false;
  }
  return true;
}

void apply_rule_selection(const RuleSelection& selection, std::vector<Diagnostic>& diagnostics) {
  if (selection.empty()) return;
  std::erase_if(diagnostics, [&](const Diagnostic& d) { return !selection.keeps(d.rule); });
}

}  // namespace mblint
