// --statistics: how often each rule fired, for a first look at a repository.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/report/render.h"

namespace mblint {

namespace {

struct RuleCount {
  std::string rule;
  std::string code;
  size_t count = 0;
};

std::vector<RuleCount> count_by_rule(const std::vector<Diagnostic>& diagnostics) {
  std::map<std::string, RuleCount> by_rule;
  for (const Diagnostic& d : diagnostics) {
    RuleCount& entry = by_rule[d.rule];
    entry.rule = d.rule;
    entry.code = d.code;
    ++entry.count;
  }
  std::vector<RuleCount> counts;
  for (auto& [rule, entry] : by_rule) counts.push_back(std::move(entry));
  std::stable_sort(counts.begin(), counts.end(),
                   [](const RuleCount& a, const RuleCount& b) { return a.count > b.count; });
  return counts;
}

}  // namespace

void render_statistics(std::ostream& out, const std::vector<Diagnostic>& diagnostics) {
  std::vector<RuleCount> counts = count_by_rule(diagnostics);
  size_t width = 1;
  for (const RuleCount& c : counts) width = std::max(width, std::to_string(c.count).size());
  for (const RuleCount& c : counts) out << fmt::format("{:>{}}  {:<5}  {}\n", c.count, width, c.code, c.rule);
}

void render_statistics_json(std::ostream& out, const std::vector<Diagnostic>& diagnostics, const Summary& summary) {
  using json = nlohmann::ordered_json;
  json list = json::array();
  for (const RuleCount& c : count_by_rule(diagnostics)) {
    list.push_back({{"code", c.code}, {"rule", c.rule}, {"count", c.count}});
  }
  json document = {{"version", 1},
                   {"statistics", std::move(list)},
                   {"summary",
                    {{"files", summary.files},
                     {"errors", summary.errors},
                     {"warnings", summary.warnings},
                     {"notes", summary.notes}}}};
  out << document.dump(2) << '\n';
}

}  // namespace mblint
