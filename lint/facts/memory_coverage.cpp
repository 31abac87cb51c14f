#include "lint/facts/memory_coverage.h"

#include "lint/facts/coverage.h"
#include "lint/facts/estimate.h"

namespace mblint {

void add_memory_gap(const Job& job, Derived& derived) {
  // With another gap the estimate declines for that gap's reason, already said.
  if (!job.trains || !derived.coverage.complete() || !is_checked_job(job)) return;
  std::string why;
  if (estimate_memory(job, derived, &why)) return;
  Span where = job.recipe ? primary_span(job.recipe_where) : Span{};
  derived.coverage.gaps.push_back(CoverageGap{
      "memory not estimated", why.empty() ? "the memory estimate does not cover this model" : why,
      "judge its memory another way: estimated-oom and memory-headroom did not run (docs/memory.md says what the "
      "estimate covers)",
      where, {}});
}

}  // namespace mblint
