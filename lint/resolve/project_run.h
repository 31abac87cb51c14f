// From the paths given to `mblint check` to jobs, under each file's
// `.mblint.yaml`: directories are walked, excluded files dropped, and files
// grouped by the config that governs them. Launch scripts are built first so
// that every YAML they reference is linted with them and never again alone;
// the YAML files left are built alone, with their config's context (a
// recipe, a cluster, or the launch script that runs them).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/model/job.h"
#include "lint/model/rule_selection.h"
#include "lint/model/thresholds.h"
#include "lint/resolve/project_config.h"

namespace mblint {

struct ProjectBuild {
  std::vector<Job> jobs;
  // Per job: the config that governs it (null: none) and its thresholds.
  std::vector<const ProjectConfig*> job_configs;
  std::vector<Thresholds> job_thresholds;
  std::vector<Diagnostic> problems;  // unreadable paths, problems in .mblint.yaml files
  size_t files_checked = 0;
  std::vector<std::unique_ptr<ProjectConfig>> configs;  // owns what job_configs point to
};

// Each job goes to `each` with its config and thresholds as soon as it is
// built when given (then `jobs`, `job_configs` and `job_thresholds` stay empty).
using ProjectJobSink = std::function<void(Job&, const ProjectConfig*, const Thresholds&)>;
ProjectBuild build_project(SourceSet& sources, const LintOptions& options, const RuleNames& rules,
                           const ProjectJobSink& each = {});

}  // namespace mblint
