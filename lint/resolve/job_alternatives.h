// A launch found in every arm of a command the shell walk forked (a command
// that reads a variable the script's undecidable branches set differently,
// walked once per value: lint/load/shell/shell_fork.cpp) is one job: the
// settings all arms agree on keep their value, the others are unknown.
#pragma once

#include <vector>

#include "lint/load/shell/launch.h"
#include "lint/model/job.h"

namespace mblint {

// The launches as the jobs they make: each unit is one job, built from the
// launch of every arm (one launch outside a fork). A fork whose arms do not
// all run the same programs in the same order gives each launch a job of
// its own, uncertain (it runs only on some paths).
struct LaunchUnit {
  std::vector<const Launch*> arms;
  bool certain = true;
};
std::vector<LaunchUnit> launch_units(const std::vector<Launch>& launches,
                                     const std::map<uint32_t, uint32_t>& fork_arms);

// `job` keeps what `other` (another arm's job) agrees with: a setting, an
// allocation count or an environment variable that differs becomes unknown,
// saying which values the arms give; their problems and gaps are joined.
void keep_agreed(Job& job, const Job& other);

}  // namespace mblint
