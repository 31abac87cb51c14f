// `check --select` / `--ignore`: which rules' findings a run reports, by rule
// name or code (comma-separated, repeatable), as ruff spells them. The job is
// still checked by every rule, so suppressions and fixes see the whole run;
// only the report is narrowed. A file that could not be read (kInputRules) is
// reported whatever --select says, as ruff reports syntax errors: the
// selected rules did not check it either, so silence would not be earned.
// --ignore can still name them.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"

namespace mblint {

// Rules that say a file or a job could not be read as given.
// So do the notes that a job was checked only partly or not at all.
inline constexpr std::string_view kInputRules[] = {"yaml-syntax",     "override-syntax", "script-syntax",
                                                   "unreadable-file", "unknown-recipe",  "project-config",
                                                   "unchecked-job",   "no-training-job"};

// The names and codes of the rules a run has: what `.mblint.yaml`, --select
// and --ignore may name (lint/rule/rule.h rule_names makes it from a RuleSet;
// the job model does not know the rules themselves).
struct RuleName {
  std::string_view name;
  std::string_view code;
};
using RuleNames = std::vector<RuleName>;

// The rule named by its name or code, or null.
const RuleName* find_rule_name(const RuleNames& rules, std::string_view name_or_code);

struct RuleSelection {
  std::set<std::string> selected;  // rule names; empty: every rule
  std::set<std::string> ignored;   // rule names
  bool empty() const { return selected.empty() && ignored.empty(); }
  bool keeps(const std::string& rule) const;
};

// Reads the values of --select and --ignore (each "a,b,c"). An unknown rule
// sets `error` (with did-you-mean) and returns false.
bool parse_rule_selection(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
                          const RuleNames& rules, RuleSelection& selection, std::string& error);

// Drops the findings of rules the selection leaves out.
void apply_rule_selection(const RuleSelection& selection, std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
