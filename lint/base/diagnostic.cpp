#include "lint/base/diagnostic.h"

#include <algorithm>
#include <tuple>

namespace mblint {

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

std::string_view fix_safety_name(FixSafety safety) {
  return safety == FixSafety::Safe ? "safe" : "unsafe";
}

bool diagnostic_less(const Diagnostic& a, const Diagnostic& b) {
  return std::tie(a.where.file, a.where.begin, a.where.end, a.rule, a.message) <
         std::tie(b.where.file, b.where.begin, b.where.end, b.rule, b.message);
}

void sort_and_deduplicate(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(), diagnostic_less);
  auto same = [](const Diagnostic& a, const Diagnostic& b) {
    return a.rule == b.rule && a.where == b.where && a.message == b.message;
  };
  diagnostics.erase(std::unique(diagnostics.begin(), diagnostics.end(), same), diagnostics.end());
}

}  // namespace mblint
