#include "lint/diff/job_diff.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "lint/engine/baseline.h"

namespace mblint {

namespace {

using JobKey = std::pair<std::string, size_t>;  // file, launch position

bool same_value(const ResolvedSetting& a, const ResolvedSetting& b) {
  return a.value.kind == b.value.kind && to_display(a.value) == to_display(b.value);
}

std::vector<SettingDiff> setting_changes(const ResolvedJob& before, const ResolvedJob& after) {
  std::map<std::string, SettingDiff> by_key;
  for (const ResolvedSetting& s : before.settings) by_key[s.key].before = &s;
  for (const ResolvedSetting& s : after.settings) by_key[s.key].after = &s;
  std::vector<SettingDiff> out;
  for (auto& [key, change] : by_key) {
    if (change.before && change.after && same_value(*change.before, *change.after)) continue;
    change.key = key;
    out.push_back(change);
  }
  return out;
}

std::vector<DerivedDiff> derived_changes(const SideJob* before, const SideJob* after) {
  std::vector<DerivedDiff> out;
  auto slot = [&](const DerivedValue& v) -> DerivedDiff& {
    for (DerivedDiff& d : out) {
      if (d.name == v.name) return d;
    }
    out.push_back(DerivedDiff{v.name, std::nullopt, std::nullopt, v.integer});
    return out.back();
  };
  // The head side's order first: a number only the base side knows follows.
  if (after) {
    for (const DerivedValue& v : after->derived) slot(v).after = v.value;
  }
  if (before) {
    for (const DerivedValue& v : before->derived) slot(v).before = v.value;
  }
  return out;
}

// The findings of `ours` that `theirs` does not have, as many times as they
// are missing there (two equal findings with one fixed leave one new).
std::vector<const Diagnostic*> unmatched(const std::vector<const Diagnostic*>& ours,
                                         const std::vector<const Diagnostic*>& theirs,
                                         const std::vector<std::string>& our_keys,
                                         const std::vector<std::string>& their_keys) {
  std::map<std::string, int> available;
  for (size_t i = 0; i < theirs.size(); ++i) ++available[their_keys[i]];
  std::vector<const Diagnostic*> out;
  for (size_t i = 0; i < ours.size(); ++i) {
    int& left = available[our_keys[i]];
    if (left > 0) --left;
    else out.push_back(ours[i]);
  }
  return out;
}

std::vector<const Diagnostic*> findings_of(const DiffSide& side, const std::vector<size_t>& indices) {
  std::vector<const Diagnostic*> out;
  for (size_t i : indices) out.push_back(&side.result.diagnostics[i]);
  return out;
}

// One finding on both sides is the same baseline identity (rule, and the
// setting it is about or else its message; lint/engine/baseline.h) at the
// same severity, so a message that only restates the numbers the change moved
// is not new and fixed at once. Within a job pair the file is the job's and
// is left out of the key (`with_file` false).
std::vector<std::string> keys_of(const std::vector<const Diagnostic*>& findings, const DiffSide& side, bool with_file) {
  std::vector<std::string> out;
  for (const Diagnostic* d : findings) {
    BaselineKey key = baseline_key(side.sources, *d, {});
    if (!with_file) key.file.clear();
    out.push_back(fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", key.file, key.rule, key.subject, key.message_hash,
                              static_cast<int>(d->severity)));
  }
  return out;
}

JobDiff pair_jobs(const DiffSide& base, const SideJob* before, const DiffSide& head, const SideJob* after) {
  JobDiff diff;
  diff.before = before;
  diff.after = after;
  // An added or removed job is new or gone as a whole: its settings are not listed one by one.
  if (before && after) diff.settings = setting_changes(before->resolved, after->resolved);
  diff.derived = derived_changes(before, after);
  auto base_findings = before ? findings_of(base, before->diagnostics) : std::vector<const Diagnostic*>{};
  auto head_findings = after ? findings_of(head, after->diagnostics) : std::vector<const Diagnostic*>{};
  auto base_keys = keys_of(base_findings, base, false), head_keys = keys_of(head_findings, head, false);
  diff.new_findings = unmatched(head_findings, base_findings, head_keys, base_keys);
  diff.fixed_findings = unmatched(base_findings, head_findings, base_keys, head_keys);
  if (!before) diff.status = JobStatus::Added;
  else if (!after) diff.status = JobStatus::Removed;
  else if (!diff.settings.empty() || !diff.new_findings.empty() || !diff.fixed_findings.empty()) diff.status = JobStatus::Changed;
  else {
    bool moved = false;
    for (const DerivedDiff& d : diff.derived) moved = moved || d.changed();
    diff.status = moved ? JobStatus::Changed : JobStatus::Unchanged;
  }
  return diff;
}

}  // namespace

std::string_view job_status_name(JobStatus status) {
  switch (status) {
    case JobStatus::Changed: return "changed";
    case JobStatus::Added: return "added";
    case JobStatus::Removed: return "removed";
    case JobStatus::Unchanged: return "unchanged";
  }
  return "unchanged";
}

DiffReport diff_jobs(const DiffSide& base, const SideJobs& before, const DiffSide& head, const SideJobs& after) {
  DiffReport report;
  std::map<JobKey, const SideJob*> old_jobs;
  for (const SideJob& job : before.jobs) old_jobs[{job.file, job.position}] = &job;
  for (const SideJob& job : after.jobs) {
    auto it = old_jobs.find({job.file, job.position});
    const SideJob* old_job = it == old_jobs.end() ? nullptr : it->second;
    if (it != old_jobs.end()) old_jobs.erase(it);
    report.jobs.push_back(pair_jobs(base, old_job, head, &job));
  }
  for (const SideJob& job : before.jobs) {  // the removed, in the base side's order
    if (old_jobs.count({job.file, job.position})) report.jobs.push_back(pair_jobs(base, &job, head, nullptr));
  }
  auto old_other = findings_of(base, before.unclaimed), new_other = findings_of(head, after.unclaimed);
  auto old_keys = keys_of(old_other, base, true), new_keys = keys_of(new_other, head, true);
  report.new_elsewhere = unmatched(new_other, old_other, new_keys, old_keys);
  report.fixed_elsewhere = unmatched(old_other, new_other, old_keys, new_keys);
  return report;
}

DiffCounts count_jobs(const DiffReport& report) {
  DiffCounts counts;
  for (const JobDiff& job : report.jobs) {
    if (job.status == JobStatus::Changed) ++counts.changed;
    if (job.status == JobStatus::Added) ++counts.added;
    if (job.status == JobStatus::Removed) ++counts.removed;
    if (job.status == JobStatus::Unchanged) ++counts.unchanged;
  }
  return counts;
}

std::vector<Diagnostic> new_findings(const DiffReport& report) {
  std::vector<Diagnostic> out;
  for (const JobDiff& job : report.jobs) {
    for (const Diagnostic* d : job.new_findings) out.push_back(*d);
  }
  for (const Diagnostic* d : report.new_elsewhere) out.push_back(*d);
  sort_and_deduplicate(out);
  return out;
}

}  // namespace mblint
