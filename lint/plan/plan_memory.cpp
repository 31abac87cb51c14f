// The planner's one door to the memory estimate (lint/facts/estimate.h).
#include "lint/facts/estimate.h"
#include "lint/plan/plan.h"

namespace mblint {

MemoryFit fit_memory(const Job& job, const Derived& derived, double headroom) {
  MemoryFit fit;
  std::string why;
  std::optional<MemoryEstimate> estimate = estimate_memory(job, derived, &why);
  if (!estimate) {
    fit.why_unknown = why.empty() ? "the memory estimate needs more of the model" : why;
    return fit;
  }
  if (estimate->capacity <= 0) {
    fit.why_unknown = "the GPU's memory is not known";
    return fit;
  }
  fit.total_gib = estimate->total;
  fit.capacity_gib = estimate->capacity;
  MemoryRange range = total_range(*estimate);
  fit.low_gib = range.low;
  fit.high_gib = range.high;
  // The thresholds of estimated-oom (an error beyond the band, a warning
  // within it) and memory-headroom.
  fit.status = range.low > fit.capacity_gib     ? MemoryFit::Status::TooBig
               : range.high > fit.capacity_gib  ? MemoryFit::Status::MayNotFit
               : fit.ratio() > headroom         ? MemoryFit::Status::Tight
                                                : MemoryFit::Status::Fits;
  return fit;
}

}  // namespace mblint
