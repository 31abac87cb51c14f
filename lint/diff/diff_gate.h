// The gate of `mblint diff`: a change fails when it brings an error (fixed
// errors never fail it) or moves a job beyond a limit of `.mblint.yaml`'s
// `diff:` section or of the flag of the same name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/diff/job_diff.h"

namespace mblint {

// Each limit as `.mblint.yaml` `diff:` names it; nullopt: no limit.
struct DiffLimits {
  std::optional<double> max_peak_memory_increase_gib;
  std::optional<double> max_memory_fraction;
  std::optional<double> max_step_time_increase_percent;
  std::optional<double> max_throughput_drop_percent;
  std::optional<double> max_bubble_increase;
};

// A job the change moved past a limit.
struct Regression {
  const JobDiff* job = nullptr;
  std::string limit;  // the limit's name: "max_peak_memory_increase_gib"
  double threshold = 0;
  std::optional<double> before;  // of the number the limit is about
  double after = 0;
  std::string message;  // "peak memory per GPU rises by 12.40 GiB (limit 8 GiB)"
};

std::vector<Regression> find_regressions(const DiffReport& report, const DiffLimits& limits);

// The errors among the findings the change brought.
size_t count_new_errors(const DiffReport& report);

}  // namespace mblint
