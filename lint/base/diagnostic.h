// Diagnostics: what a rule or a loader found, where, and how to fix it.
// Modelled on clang's: a primary location, notes at related locations and
// fix-its that are plain text edits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lint/base/source.h"

namespace mblint {

enum class Severity { Note = 0, Warning = 1, Error = 2 };

std::string_view severity_name(Severity severity);  // "error", "warning", "note"

// A related location: "context_parallel_size set to 2 here".
struct Note {
  std::string message;
  Span where;  // may be invalid: a note without a location
};

// Replace the bytes of `where` with `replacement` (an insertion when empty).
struct TextEdit {
  Span where;
  std::string replacement;
};

// Safe: keeps what the run does (removes a no-op). Unsafe: changes the run
// (a parallel size, a batch, a sequence length); never applied silently.
enum class FixSafety { Safe, Unsafe };

std::string_view fix_safety_name(FixSafety safety);  // "safe", "unsafe"

// The configuration change a fix makes, so that the job can be re-checked
// with it applied before the fix is offered (lint/fix/fix_verify.h): a dotted
// config key ("model.tensor_model_parallel_size") or "cluster.nodes" /
// "cluster.gpus_per_node", and the new value as an override would write it.
struct SettingChange {
  std::string path;
  std::string value;
  // A rename: the value at `from` moves to `path` (and `value` is unused).
  std::string from = {};
};

struct Fix {
  std::string description;
  FixSafety safety = FixSafety::Unsafe;
  std::vector<TextEdit> edits;
  // For a value no file holds (a recipe default): the dotted key and the text
  // to set. run_lint turns it into an edit of the job's own YAML or launch
  // command when there is one (lint/fix/fix_insert.h); otherwise the fix is advice.
  std::string set_key = {};
  std::string set_text = {};
  // What the fix changes in the job; empty for a pure text edit (removing a
  // no-op line, renaming a key), which is not re-checked.
  std::vector<SettingChange> changes = {};
  // Re-checked already by the rule that made it (the memory remedies).
  bool rechecked = false;
  // After the re-check: the rules whose findings on this job the fix removes.
  std::vector<std::string> resolves = {};
};

struct Diagnostic {
  std::string rule;  // kebab-case rule name, e.g. "cp-seq-length-divisibility"
  std::string code;  // stable code, e.g. "MB401"
  Severity severity = Severity::Error;
  std::string message;
  Span where;
  std::vector<Note> notes;
  std::string help;        // one line: what to change
  // The help lists the fixes: after they are re-checked it is rewritten from
  // the ones that remain (and kept as written when none does).
  bool help_from_fixes = false;
  std::vector<Fix> fixes;  // alternatives, best first
  // The config key path the finding is about ("model.context_parallel_size"),
  // filled after the checks from the job's provenance (lint/engine/subject.h); empty
  // when the finding is about no single value. Baselines key on it.
  std::string subject;
};

// Ordering used by every renderer: file, position, then rule name.
bool diagnostic_less(const Diagnostic& a, const Diagnostic& b);

// Remove exact duplicates (same rule, location and message), e.g. when two
// launch scripts of one run share a YAML file. Keeps order.
void sort_and_deduplicate(std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
