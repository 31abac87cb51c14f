// The planner's one door to the memory estimate (lint/estimate.h).
#include "lint/plan.h"

namespace mblint {

bool memory_estimate_available() { return false; }

MemoryFit fit_memory(const Job&, const Derived&, double) {
  MemoryFit fit;
  fit.why_unknown = "this build has no memory estimate yet (lint/estimate.cpp)";
  return fit;
}

}  // namespace mblint
