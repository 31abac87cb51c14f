// One side of `mblint diff`: a lint run over the files of a revision or of
// the working tree, and its jobs as the diff compares them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/source.h"
#include "lint/report/resolved_settings.h"
#include "lint/run/lint.h"

namespace mblint {

struct DiffSide {
  std::string label;  // the commit, or "WORKTREE"
  SourceSet sources;
  LintResult result;  // with its jobs kept
};

// A number the diff reports before and after: "data_parallel_size",
// "peak_memory_gib", "step_time_s", ...
struct DerivedValue {
  std::string name;
  double value = 0;
  bool integer = false;
};

// A training job of one side. Jobs pair across the sides by file and by
// position among that file's jobs (the second launch of a script pairs with
// the second), so a job stays paired when a line above it moves.
struct SideJob {
  size_t job = 0;       // index into the side's result.jobs
  std::string file;     // as displayed
  size_t position = 0;  // among the jobs of `file`, from 0
  uint32_t line = 1;    // of the launch
  ResolvedJob resolved;
  std::vector<DerivedValue> derived;  // the known ones, in report order
  std::vector<size_t> diagnostics;    // indices into result.diagnostics
};

struct SideJobs {
  std::vector<SideJob> jobs;
  std::vector<size_t> unclaimed;  // diagnostics in no job's files (a .mblint.yaml, an unreadable path)
};

// The training jobs of a side (those `resolve` shows), their derived numbers
// (sizes, the memory estimate, the speed model where it applies) and the
// diagnostics each owns: one in a file the job read, the nearest launch above
// it when its file holds several.
SideJobs side_jobs(const DiffSide& side);

// "file:line" of a span; "" when it was written nowhere.
std::string line_location(const SourceSet& sources, Span where);

// Where a setting's value was written: for `$TP` the `TP=4` behind it (in a
// sourced file, say), else the value itself; "" when written nowhere.
std::string written_at(const SourceSet& sources, const ResolvedSetting& setting);

}  // namespace mblint
