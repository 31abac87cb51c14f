// Which unresolvable interpolations of a Megatron Bridge job are errors.
// Bridge merges the YAML and the overrides onto the recipe's config and calls
// OmegaConf.to_container(resolve=True) (training/utils/omegaconf_utils.py,
// process_config_with_overrides; v0.2.0's examples do the same by hand), so
// a reference to a key that does not exist raises InterpolationKeyError and a
// cycle raises "Recursive interpolation detected". A key missing from what
// mblint holds may still be one the recipe provides: every field of a
// ConfigContainer section exists in the recipe's dataclasses, so only a key
// that is no field anywhere in the schema (lint/model/schema.h) is an error.
#pragma once

#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/load/yaml/interpolation.h"
#include "lint/model/job.h"

namespace mblint {

// interpolation-missing-key and interpolation-cycle diagnostics for `job`
// (Megatron Bridge jobs other than full dumps; none for other dialects).
std::vector<Diagnostic> interpolation_diagnostics(const Job& job, const std::vector<InterpolationProblem>& problems,
                                                  const SourceSet& sources);

}  // namespace mblint
