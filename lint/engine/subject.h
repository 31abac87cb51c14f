// The subject of a finding: the config key path it is about
// ("model.context_parallel_size"), found from the job's provenance. Baselines
// and SARIF fingerprints key on it instead of line numbers, so edits elsewhere
// in a file do not change a finding's identity.
#pragma once

#include <span>
#include <string>

#include "lint/base/diagnostic.h"
#include "lint/model/job.h"

namespace mblint {

// The key path whose value, key or override statement is `where` (exactly,
// else the smallest such span containing it); launcher values are
// "cluster.nodes", "cluster.gpus_per_node", "cluster.world_size",
// "cluster.gpu", the recipe "recipe", environment variables "env.NAME".
// Empty when `where` is none of the job's values. Of several keys set by the
// same text (a value Bridge copies), the one the text names.
std::string subject_at(const Job& job, const SourceSet& sources, Span where);

// Fills the subject of each diagnostic that has none.
void fill_subjects(const Job& job, const SourceSet& sources, std::span<Diagnostic> diagnostics);

}  // namespace mblint
