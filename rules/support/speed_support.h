// Shared by the performance rules: what a part of the step costs and what a
// fix gains, both from the speed model (lint/facts/speed_model.h), the fix
// re-predicted on a changed copy of the job. Every function gives nullopt
// when the model cannot predict the job, and the rule then says what it
// said without the model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/facts/speed_model.h"
#include "rules/support/memory_support.h"

namespace mblint {

// The job's predicted step.
std::optional<SpeedEstimate> job_speed(const RuleContext& context);

// The job with `changes` applied (re-derived), predicted again; nullopt also
// when the change brings an error another rule reports (other_errors).
std::optional<SpeedEstimate> speed_with(const RuleContext& context, const std::vector<MemoryChange>& changes);

// The job predicted as if its NVLink domain held `domain` GPUs: what its
// communication would cost inside one domain.
std::optional<SpeedEstimate> speed_with_domain(const RuleContext& context, int64_t domain);

// The job's path of a derived quantity, else the Bridge path it stands for
// (a size the job leaves to its default has no path of its own).
std::string config_path_or(const Quantity& quantity, const char* bridge_path);

// The change in predicted tokens/s/GPU that `changes` bring (0.12: 12% more);
// nullopt when the model cannot predict the job or the changed one.
std::optional<double> speed_gain(const RuleContext& context, const SpeedEstimate& now,
                                 const std::vector<MemoryChange>& changes);

// The step's share of `seconds`.
double step_share(const SpeedEstimate& e, double seconds);

// "about 31% of the predicted 12.4 s step"
std::string cost_text(const SpeedEstimate& e, double seconds);

// What `changes` do to the job's (predicted `now`) tokens/s/GPU: "about 18% more tokens/s/GPU",
// "about 3% fewer tokens/s/GPU", "about the same tokens/s/GPU"; nullopt when
// the model cannot predict either job.
std::optional<std::string> gain_text(const RuleContext& context, const SpeedEstimate& now,
                                     const std::vector<MemoryChange>& changes);

}  // namespace mblint
