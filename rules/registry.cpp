#include "rules/registry.h"

#include <algorithm>
#include <vector>

namespace mblint {

#define MBLINT_RULE(folder, constant) extern const RuleInfo constant;
#include "rule_list.inc"
#undef MBLINT_RULE

namespace {

constexpr RuleLocation kLocations[] = {
#define MBLINT_RULE(folder, constant) {&constant, #folder},
#include "rule_list.inc"
#undef MBLINT_RULE
};

std::vector<const RuleInfo*> sorted_rules() {
  std::vector<const RuleInfo*> rules;
  for (const RuleLocation& location : kLocations) rules.push_back(location.rule);
  std::sort(rules.begin(), rules.end(), [](const RuleInfo* a, const RuleInfo* b) {
    if (a->group != b->group) return a->group < b->group;
    return a->code < b->code;
  });
  return rules;
}

}  // namespace

RuleSet all_rules() {
  static const std::vector<const RuleInfo*> rules = sorted_rules();
  return RuleSet(rules.data(), rules.size());
}

std::span<const RuleLocation> rule_locations() { return kLocations; }

}  // namespace mblint
