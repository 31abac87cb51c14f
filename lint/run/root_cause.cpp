#include "lint/run/root_cause.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/fix/fix_verify.h"

namespace mblint {

namespace {

// Findings about the job as a whole, never folded into a value's error; nor
// those placed at the recipe's name: it stands for every value the recipe
// sets, so two findings there are about two values, not one.
bool not_about_one_value(const Diagnostic& d) {
  return d.rule == "unchecked-job" || d.rule == "no-training-job" || d.subject == "recipe";
}

bool resolves_all(const Fix& fix, const std::vector<std::string>& rules) {
  return std::all_of(rules.begin(), rules.end(), [&](const std::string& rule) {
    return std::find(fix.resolves.begin(), fix.resolves.end(), rule) != fix.resolves.end();
  });
}

// The fixes of the group that were re-checked and remove every error and
// warning of it; the root's own fixes that could not be re-checked stay.
std::vector<Fix> group_fixes(const std::vector<Diagnostic*>& group) {
  std::vector<std::string> rules;
  for (const Diagnostic* d : group) {
    if (d->severity != Severity::Note) rules.push_back(d->rule);
  }
  std::vector<Fix> out;
  for (const Diagnostic* d : group) {
    for (const Fix& fix : d->fixes) {
      bool checked = !fix.changes.empty() && !fix.rechecked;
      bool keep = checked ? resolves_all(fix, rules) : d == group.front();
      bool seen = std::any_of(out.begin(), out.end(), [&](const Fix& f) { return f.description == fix.description; });
      if (keep && !seen) out.push_back(fix);
    }
  }
  return out;
}

void fold(std::vector<Diagnostic*>& group) {
  Diagnostic& root = *group.front();
  std::vector<Fix> fixes = group_fixes(group);
  bool rechecked = std::any_of(fixes.begin(), fixes.end(), [](const Fix& f) { return !f.changes.empty(); });
  for (size_t i = 1; i < group.size(); ++i) {
    root.notes.push_back(Note{fmt::format("the same value also fails: {} [{}]", group[i]->message, group[i]->rule), {}});
  }
  if (rechecked) {
    root.help = fmt::format("{} (re-checked: this fixes all {} findings at this value)", help_from(fixes), group.size());
  }
  root.fixes = std::move(fixes);
}

}  // namespace

void fold_root_causes(std::vector<Diagnostic>& diagnostics) {
  std::vector<bool> folded(diagnostics.size(), false);
  size_t i = 0;
  while (i < diagnostics.size()) {
    size_t j = i + 1;
    while (j < diagnostics.size() && diagnostics[j].where == diagnostics[i].where) ++j;
    std::vector<Diagnostic*> group;
    std::vector<size_t> members;
    for (size_t k = i; k < j; ++k) {
      if (!diagnostics[k].where.valid() || not_about_one_value(diagnostics[k])) continue;
      members.push_back(k);
    }
    auto root = std::find_if(members.begin(), members.end(),
                             [&](size_t k) { return diagnostics[k].severity == Severity::Error; });
    if (members.size() >= 2 && root != members.end()) {
      group.push_back(&diagnostics[*root]);
      for (size_t k : members) {
        if (k != *root) {
          group.push_back(&diagnostics[k]);
          folded[k] = true;
        }
      }
      fold(group);
    }
    i = j;
  }
  std::vector<Diagnostic> kept;
  kept.reserve(diagnostics.size());
  for (size_t k = 0; k < diagnostics.size(); ++k) {
    if (!folded[k]) kept.push_back(std::move(diagnostics[k]));
  }
  diagnostics = std::move(kept);
}

}  // namespace mblint
