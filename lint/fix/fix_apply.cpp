#include "lint/fix/fix_apply.h"

#include <algorithm>

namespace mblint {

namespace {

bool utf8_boundary(std::string_view text, uint32_t offset) {
  if (offset >= text.size()) return offset == text.size();
  return (static_cast<unsigned char>(text[offset]) & 0xC0) != 0x80;  // not a continuation byte
}

bool fix_applicable(const Fix& fix, const SourceSet& sources) {
  if (fix.edits.empty()) return false;  // advice only: nothing to apply
  bool changes = false;
  for (const TextEdit& edit : fix.edits) {
    if (!edit_applicable(edit, sources)) return false;
    changes = changes || edit_changes_text(edit, sources);
  }
  // A fix's own edits must fit together too.
  for (size_t i = 0; i < fix.edits.size(); ++i) {
    for (size_t j = i + 1; j < fix.edits.size(); ++j) {
      if (edits_conflict(fix.edits[i], fix.edits[j])) return false;
    }
  }
  return changes;
}

}  // namespace

bool safety_allowed(FixSafety safety, bool unsafe) { return safety == FixSafety::Safe || unsafe; }

bool edit_applicable(const TextEdit& edit, const SourceSet& sources) {
  const Span& span = edit.where;
  if (!span.valid() || span.file < 0 || static_cast<size_t>(span.file) >= sources.files.size()) return false;
  const SourceFile& file = sources.files[span.file];
  if (file.synthetic) return false;
  if (span.begin > span.end || span.end > file.text.size()) return false;
  return utf8_boundary(file.text, span.begin) && utf8_boundary(file.text, span.end);
}

bool edit_changes_text(const TextEdit& edit, const SourceSet& sources) {
  const SourceFile& file = sources.files[edit.where.file];
  std::string_view old_text = std::string_view(file.text).substr(edit.where.begin, edit.where.end - edit.where.begin);
  return old_text != edit.replacement;
}

const Fix* choose_fix(const Diagnostic& d, const SourceSet& sources, bool unsafe) {
  for (const Fix& fix : d.fixes) {
    if (safety_allowed(fix.safety, unsafe) && fix_applicable(fix, sources)) return &fix;
  }
  return nullptr;
}

bool edits_conflict(const TextEdit& a, const TextEdit& b) {
  if (a.where.file != b.where.file) return false;
  if (a.where == b.where && a.replacement == b.replacement) return false;  // the same change
  const Span& x = a.where;
  const Span& y = b.where;
  if (x.begin == x.end && y.begin == y.end) return x.begin == y.begin;  // two insertions at one place
  return x.begin < y.end && y.begin < x.end;
}

FixPlan plan_fixes(const std::vector<Diagnostic>& diagnostics, const SourceSet& sources, bool unsafe) {
  FixPlan plan;
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    const Fix* fix = choose_fix(diagnostics[i], sources, unsafe);
    if (!fix) continue;
    bool fits = std::none_of(fix->edits.begin(), fix->edits.end(), [&](const TextEdit& edit) {
      auto it = plan.edits.find(edit.where.file);
      if (it == plan.edits.end()) return false;
      return std::any_of(it->second.begin(), it->second.end(),
                         [&](const TextEdit& taken) { return edits_conflict(edit, taken); });
    });
    if (!fits) continue;
    for (const TextEdit& edit : fix->edits) {
      std::vector<TextEdit>& taken = plan.edits[edit.where.file];
      bool duplicate = std::any_of(taken.begin(), taken.end(), [&](const TextEdit& t) {
        return t.where == edit.where && t.replacement == edit.replacement;
      });
      if (!duplicate) taken.push_back(edit);
    }
    plan.fixed.push_back(i);
    plan.fixes.push_back(fix);
  }
  return plan;
}

std::string apply_edits(std::string_view text, std::vector<TextEdit> edits) {
  // Insertions before a replacement that starts at the same offset.
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    if (a.where.begin != b.where.begin) return a.where.begin < b.where.begin;
    return a.where.end < b.where.end;
  });
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (const TextEdit& edit : edits) {
    size_t begin = std::min<size_t>(edit.where.begin, text.size());
    size_t end = std::min<size_t>(edit.where.end, text.size());
    if (begin < at) continue;  // conflicts were filtered before; never corrupt the text
    out.append(text.substr(at, begin - at));
    out.append(edit.replacement);
    at = std::max(begin, end);
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace mblint
