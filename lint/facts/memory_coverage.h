// Whether a job's memory could be judged: a job whose every core setting is
// known but whose model the estimate does not cover (LoRA on a gated delta
// net, DeepSeek V4's compressed attention, ...) is checked only partly, and
// says so, instead of passing silently past estimated-oom.
#pragma once

#include "lint/facts/derived.h"
#include "lint/model/job.h"

namespace mblint {

// Adds a "memory not estimated" gap to `derived.coverage` when the job
// trains, nothing else is unknown, and the memory estimate declines.
void add_memory_gap(const Job& job, Derived& derived);

}  // namespace mblint
