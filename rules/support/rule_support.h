// Small helpers shared by rule files: numbers for messages, suggested values,
// fixes that replace a value where it was written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <cmath>

#include <fmt/format.h>

#include "lint/base/diagnostic.h"
#include "lint/facts/derived.h"
#include "lint/model/job.h"
#include "lint/rule/rule.h"

namespace mblint {

// All positive divisors of n, ascending (n <= 2^31).
std::vector<int64_t> divisors(int64_t n);

// The multiple of `step` closest to `value` (ties go up); at least `step`.
int64_t nearest_multiple(int64_t value, int64_t step);

// "8, 16 or 32"
std::string join_or(const std::vector<int64_t>& values);

// The edit that rewrites a value where it was written, when that place is a
// literal the user owns (not a recipe default, not a shell variable).
std::optional<TextEdit> replace_value(const Provenance& where, std::string replacement);

// Add to `fix` the edit that writes `text` where the value was written, or,
// for a recipe's value, the key to set (see Fix::set_key).
void edit_or_set(Fix& fix, const Provenance& where, const std::string& path, std::string text);

// A fix that sets `quantity` to `value` (unsafe: it changes the run), with
// an edit when the value is written somewhere editable.
Fix set_value_fix(const Quantity& quantity, int64_t value, FixSafety safety = FixSafety::Unsafe);

// The same for a boolean setting.
Fix set_setting_fix(const Setting& setting, bool value, FixSafety safety);

// One fix made of several (TP up and PP down together: either alone breaks
// the world size): their changes, re-checked together, and their edits when
// every part edits a value the user wrote; otherwise it is advice (a recipe
// value is set through Fix::set_key, which holds one key).
Fix combined_fix(std::string description, const std::vector<Fix>& parts, FixSafety safety = FixSafety::Unsafe);

// Append notes for each quantity that is not the primary one.
void add_notes(Diagnostic& d, std::initializer_list<const Quantity*> quantities, const Quantity* primary);

// --- one way to report ------------------------------------------------------
// A rule states a finding about the values involved, then reports it with the
// fix in words and the fixes; anything more (a note about how a size was
// derived, a severity that depends on the version) it adds in between.

// A finding of `rule` at the most specific of `quantities` (the value the
// user most likely just wrote), with a note at each of the others and at
// where each value came from (`$TP`, an interpolation).
Diagnostic finding(const RuleInfo& rule, std::string message, std::initializer_list<const Quantity*> quantities);

// The same at `primary`, when the rule knows which value is at fault.
Diagnostic finding_at(const RuleInfo& rule, std::string message, const Quantity& primary,
                      std::initializer_list<const Quantity*> quantities);

// Adds `diag` to `out` with `help` (the concrete fix, in words) and `fixes`.
void report(std::vector<Diagnostic>& out, Diagnostic diag, std::string help, std::vector<Fix> fixes = {});

// "tensor_model_parallel_size 4"
std::string named(const Quantity& q);

// Tensor-parallel sizes the model's shape accepts, ascending, from 2 up to
// `limit`: they divide the attention heads and fit the query groups (a
// multiple, or from Megatron-Core 0.16 also a divisor). Unknown shape
// parts do not restrict.
std::vector<int64_t> valid_tensor_parallel_sizes(const RuleContext& context, int64_t limit);

// The last `count` entries of `values` below `below` (the closest smaller
// choices), ascending.
std::vector<int64_t> closest_below(const std::vector<int64_t>& values, int64_t below, size_t count);

// Of `candidates` (ascending), the closest below `current` and the closest
// above it: the two sizes to offer instead of `current`.
std::vector<int64_t> closest_around(const std::vector<int64_t>& candidates, int64_t current);

// The positive divisors of n above 1, ascending (sizes that split n).
std::vector<int64_t> divisors_above_one(int64_t n);

// A parallel size in effect (TP, CP, EP, PP, virtual stages, ...): known and
// above 1. A size of 1 splits nothing; an unknown one is not judged.
bool splits(const Quantity& size);

// --- the divisibility family --------------------------------------------------
// Rules of the form "`part` ranks split `whole` evenly" (heads % TP, experts
// % EP, seq % 2·CP, FFN width % TP): true when both sizes are known, `part`
// splits (> 1), `whole` is positive and is not a multiple of `factor` x
// `part`. An unknown or unset size is false: the rule stays silent.
bool splits_unevenly(const Quantity& whole, const Quantity& part, int64_t factor = 1);

// One fix per choice, each setting `quantity` to it, in the order given.
std::vector<Fix> set_value_fixes(const Quantity& quantity, const std::vector<int64_t>& choices);

// "1 GPU", "8 GPUs"
std::string count_of(int64_t count, std::string_view noun);

}  // namespace mblint
