// What a change does to each training job: the two sides' jobs paired by
// file and launch position, the settings whose effective value moved (with
// where each side wrote it), the derived numbers before and after, and the
// findings the change brought and the ones it fixed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/diff/diff_side.h"

namespace mblint {

enum class JobStatus { Changed, Added, Removed, Unchanged };
std::string_view job_status_name(JobStatus status);  // "changed", ...

// A setting set on either side whose effective value differs (null where a
// side does not have it).
struct SettingDiff {
  std::string key;
  const ResolvedSetting* before = nullptr;
  const ResolvedSetting* after = nullptr;
};

struct DerivedDiff {
  std::string name;
  std::optional<double> before, after;
  bool integer = false;
  bool changed() const { return before != after; }
};

struct JobDiff {
  JobStatus status = JobStatus::Unchanged;
  const SideJob* before = nullptr;  // null for an added job
  const SideJob* after = nullptr;   // null for a removed job
  std::vector<SettingDiff> settings;  // of a changed job only
  std::vector<DerivedDiff> derived;  // every number known on either side
  // Compared by rule and message within the pair, never by line: lines move.
  std::vector<const Diagnostic*> new_findings;    // the head side's
  std::vector<const Diagnostic*> fixed_findings;  // the base side's
};

struct DiffReport {
  std::vector<JobDiff> jobs;  // the head side's order, then the removed jobs
  // Findings no job owns, compared by file, rule and message.
  std::vector<const Diagnostic*> new_elsewhere, fixed_elsewhere;
};

// `before` and `after` (and the sides they were read from) must outlive the report.
DiffReport diff_jobs(const DiffSide& base, const SideJobs& before, const DiffSide& head, const SideJobs& after);

struct DiffCounts {
  size_t changed = 0, added = 0, removed = 0, unchanged = 0;
};
DiffCounts count_jobs(const DiffReport& report);

// Every finding the change brought, the jobs' and the others (for --format github and sarif).
std::vector<Diagnostic> new_findings(const DiffReport& report);

}  // namespace mblint
