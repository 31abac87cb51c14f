// Choosing and applying fixes: which fix of each diagnostic `check --fix`
// takes, which edits of one pass fit together, and the text they produce.
// Pure functions over diagnostics and text; nothing here touches the disk.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

// --fix applies safe fixes; --fix --unsafe-fixes also unsafe ones.
bool safety_allowed(FixSafety safety, bool unsafe);

// Whether `edit` can be applied to `file`: the span lies in the text, starts
// and ends on UTF-8 character boundaries, and the file is one mblint read
// from disk (never the synthetic "<command-line>").
bool edit_applicable(const TextEdit& edit, const SourceSet& sources);

// Whether applying `edit` changes the text at all.
bool edit_changes_text(const TextEdit& edit, const SourceSet& sources);

// The fix to apply for `d`: the first one (fixes are listed best first) of an
// allowed safety whose edits are all applicable and change something. A
// diagnostic whose fixes are all unsafe alternatives gets none without
// `unsafe`. nullptr when there is none.
const Fix* choose_fix(const Diagnostic& d, const SourceSet& sources, bool unsafe);

// Two edits conflict when their spans overlap, or when both insert at the
// same place different text (the order would be a guess). Identical edits
// do not conflict: two rules may propose the same change.
bool edits_conflict(const TextEdit& a, const TextEdit& b);

// One pass of fixes: the chosen fix of each diagnostic, in diagnostic order,
// taken whole when none of its edits conflicts with an edit already taken.
// A skipped fix is retried by the next pass, after re-linting.
struct FixPlan {
  std::vector<size_t> fixed;  // indices into the diagnostics
  std::vector<const Fix*> fixes;  // the fix taken for each of `fixed`
  std::map<FileId, std::vector<TextEdit>> edits;  // per file, no conflicts, duplicates merged
};

FixPlan plan_fixes(const std::vector<Diagnostic>& diagnostics, const SourceSet& sources, bool unsafe);

// Apply edits that do not conflict (any order) to `text`. Offsets refer to
// `text` as given; bytes outside the spans are copied unchanged.
std::string apply_edits(std::string_view text, std::vector<TextEdit> edits);

}  // namespace mblint
