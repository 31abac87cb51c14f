// Unified diffs, as `diff -u` and git print them, for `check --diff`.
#pragma once

#include <string>
#include <string_view>

namespace mblint {

// The unified diff from `before` to `after` with `context` lines around each
// change: `--- old_label` / `+++ new_label`, then `@@ -l,n +l,n @@` hunks.
// Lines keep their terminators; a last line without one is followed by
// `\ No newline at end of file`. Empty when the texts are equal.
std::string unified_diff(std::string_view before, std::string_view after, std::string_view old_label,
                         std::string_view new_label, int context = 3);

}  // namespace mblint
