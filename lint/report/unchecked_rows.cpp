#include "lint/report/unchecked_rows.h"

namespace mblint {

namespace {

// Filled as the rule set grows; every row of the reference tables is either
// covered by a rule (RuleInfo::checks) or listed here.
constexpr UncheckedRow kRows[] = {
    {"MC A15", "GTP > 1 needs TransformerEngine >= 2.19", "the installed TransformerEngine version is not in the files"},
#include "lint/report/unchecked_rows_config.inc"
#include "lint/report/unchecked_rows_moe.inc"
#include "lint/report/unchecked_rows_parallel.inc"
#include "lint/report/unchecked_rows_pipeline.inc"
#include "lint/report/unchecked_rows_runtime.inc"
};

}  // namespace

std::span<const UncheckedRow> unchecked_rows() { return kRows; }

}  // namespace mblint
