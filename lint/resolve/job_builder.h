// From the files named on the command line to resolved jobs: a launch script
// becomes one job per training launch it contains (following its
// --config-file), a YAML file not referenced by any of them becomes a job of
// its own. Layers: recipe defaults <- YAML <- flags <- overrides <- mblint's
// --set, then Megatron Bridge's rewrites.
#pragma once

#include <functional>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/model/job.h"

namespace mblint {

struct BuildResult {
  std::vector<Job> jobs;
  std::vector<Diagnostic> problems;  // not tied to a job (a path that cannot be read)
  size_t files_checked = 0;
};

// Each job goes to `each` as soon as it is built when given (then `jobs` stays
// empty), so that a caller can check it and let it go.
using JobSink = std::function<void(Job&)>;
BuildResult build_jobs(SourceSet& sources, const LintOptions& options, const JobSink& each = {});

// A job described by mblint's command line alone (--recipe, --set, --nodes,
// --gpu ...), as if an empty override file were linted with those options:
// for commands that draw or plan a job without a file (layout, plan).
Job job_from_command_line(SourceSet& sources, const LintOptions& options);

}  // namespace mblint
