#include "rules/support/speed_support.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace mblint {

std::optional<SpeedEstimate> job_speed(const RuleContext& context) {
  return estimate_speed(context.job, context.derived);
}

std::optional<SpeedEstimate> speed_with(const RuleContext& context, const std::vector<MemoryChange>& changes) {
  Job job = changed_job(context.job, changes);
  Derived derived = derive(job);
  std::optional<SpeedEstimate> e = estimate_speed(job, derived);
  if (!e) return std::nullopt;
  // A change that breaks the job has no throughput to speak of.
  std::vector<std::string> before = other_errors(context, context.job, context.derived);
  for (const std::string& error : other_errors(context, job, derived)) {
    if (!std::binary_search(before.begin(), before.end(), error)) return std::nullopt;
  }
  return e;
}

std::optional<SpeedEstimate> speed_with_domain(const RuleContext& context, int64_t domain) {
  std::optional<SpeedInputs> inputs = read_speed_inputs(context.job, context.derived);
  if (!inputs) return std::nullopt;
  inputs->settings.nvlink_domain = domain;
  return estimate_step(inputs->model, inputs->settings, *inputs->gpu, default_speed_constants());
}

double step_share(const SpeedEstimate& e, double seconds) {
  return e.step_time_s > 0 ? seconds / e.step_time_s : 0;
}

std::string cost_text(const SpeedEstimate& e, double seconds) {
  return fmt::format("about {:.0f}% of the predicted {:.3g} s step", step_share(e, seconds) * 100, e.step_time_s);
}

std::string config_path_or(const Quantity& quantity, const char* bridge_path) {
  return quantity.path.empty() ? bridge_path : quantity.path;
}

std::optional<double> speed_gain(const RuleContext& context, const SpeedEstimate& now,
                                 const std::vector<MemoryChange>& changes) {
  if (now.tokens_per_sec_per_gpu <= 0) return std::nullopt;
  std::optional<SpeedEstimate> changed = speed_with(context, changes);
  if (!changed) return std::nullopt;
  return changed->tokens_per_sec_per_gpu / now.tokens_per_sec_per_gpu - 1;
}

std::optional<std::string> gain_text(const RuleContext& context, const SpeedEstimate& now,
                                     const std::vector<MemoryChange>& changes) {
  std::optional<double> gain = speed_gain(context, now, changes);
  if (!gain) return std::nullopt;
  if (std::abs(*gain) < 0.005) return "about the same tokens/s/GPU";
  return fmt::format("about {:.0f}% {} tokens/s/GPU", std::abs(*gain) * 100, *gain > 0 ? "more" : "fewer");
}

}  // namespace mblint
