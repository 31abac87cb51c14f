// Every rule mblint has. The list is generated at build time from the rule
// files themselves (cmake/rule_list.cmake), so a new rule is its file and
// its fixtures, nothing else.
#pragma once

#include <span>
#include <string_view>

#include "lint/rule/rule.h"

namespace mblint {

// By group (the order of RuleGroup), then by code: the order `mblint rules` lists them.
RuleSet all_rules();

// Each rule with the folder its file is in, rules/<folder>/ (a test checks
// that it is the folder of the rule's group).
struct RuleLocation {
  const RuleInfo* rule;
  std::string_view folder;
};
std::span<const RuleLocation> rule_locations();

}  // namespace mblint
