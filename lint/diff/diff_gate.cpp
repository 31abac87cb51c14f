#include "lint/diff/diff_gate.h"

#include <fmt/format.h>

namespace mblint {

namespace {

const DerivedDiff* find_derived(const JobDiff& job, std::string_view name) {
  for (const DerivedDiff& d : job.derived) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// A limit on how much a number may rise between the sides (`drop` flips the sign).
struct RiseLimit {
  const char* limit;
  const char* number;
  std::optional<double> threshold;
  bool percent = false;  // the rise as a percentage of the value before
  bool drop = false;
  const char* what;
  const char* unit;
};

void check_rise(const JobDiff& job, const RiseLimit& rule, std::vector<Regression>& out) {
  const DerivedDiff* d = find_derived(job, rule.number);
  if (!rule.threshold || !d || !d->before || !d->after) return;
  double change = rule.drop ? *d->before - *d->after : *d->after - *d->before;
  if (rule.percent) {
    if (*d->before <= 0) return;
    change = 100 * change / *d->before;
  }
  if (change <= *rule.threshold) return;
  std::string message = fmt::format("{} {} by {:.4g}{} ({} -> {}; limit {}{})", rule.what,
                                    rule.drop ? "drops" : "rises", change, rule.unit, *d->before, *d->after,
                                    *rule.threshold, rule.unit);
  out.push_back(Regression{&job, rule.limit, *rule.threshold, d->before, *d->after, std::move(message)});
}

// Only a change that raises the peak (or a new job) can break the fraction.
void check_fraction(const JobDiff& job, std::optional<double> threshold, std::vector<Regression>& out) {
  const DerivedDiff* peak = find_derived(job, "peak_memory_gib");
  const DerivedDiff* capacity = find_derived(job, "memory_capacity_gib");
  if (!threshold || !peak || !peak->after || !capacity || !capacity->after || *capacity->after <= 0) return;
  if (peak->before && *peak->after <= *peak->before) return;
  double fraction = *peak->after / *capacity->after;
  if (fraction <= *threshold) return;
  out.push_back(Regression{&job, "max_memory_fraction", *threshold, peak->before, *peak->after,
                           fmt::format("peak memory per GPU is {} GiB, {:.0f}% of the GPU's {} GiB (limit {:.0f}%)",
                                       *peak->after, 100 * fraction, *capacity->after, 100 * *threshold)});
}

}  // namespace

std::vector<Regression> find_regressions(const DiffReport& report, const DiffLimits& limits) {
  const RiseLimit rises[] = {
      {"max_peak_memory_increase_gib", "peak_memory_gib", limits.max_peak_memory_increase_gib, false, false,
       "peak memory per GPU", " GiB"},
      {"max_step_time_increase_percent", "step_time_s", limits.max_step_time_increase_percent, true, false,
       "the predicted step time", "%"},
      {"max_throughput_drop_percent", "tokens_per_sec_per_gpu", limits.max_throughput_drop_percent, true, true,
       "the predicted tokens/s/GPU", "%"},
      {"max_bubble_increase", "pipeline_bubble", limits.max_bubble_increase, false, false,
       "the pipeline bubble", ""},
  };
  std::vector<Regression> out;
  for (const JobDiff& job : report.jobs) {
    if (job.status == JobStatus::Removed || job.status == JobStatus::Unchanged) continue;
    for (const RiseLimit& rule : rises) check_rise(job, rule, out);
    check_fraction(job, limits.max_memory_fraction, out);
  }
  return out;
}

size_t count_new_errors(const DiffReport& report) {
  size_t errors = 0;
  auto count = [&](const std::vector<const Diagnostic*>& findings) {
    for (const Diagnostic* d : findings) errors += d->severity == Severity::Error ? 1 : 0;
  };
  for (const JobDiff& job : report.jobs) count(job.new_findings);
  count(report.new_elsewhere);
  return errors;
}

}  // namespace mblint
