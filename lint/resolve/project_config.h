// `.mblint.yaml`: a team's project settings (cluster, versions, rule
// selection, thresholds, context for override files linted alone, excludes).
// Read with mblint's own YAML loader so every value keeps its file:line:col;
// problems in it are `project-config` diagnostics located there. Paths and
// globs in it are relative to the directory that holds it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/model/job.h"
#include "lint/model/rule_selection.h"
#include "lint/model/thresholds.h"

namespace mblint {

inline constexpr const char* kProjectConfigName = ".mblint.yaml";

// A number with where it was written.
struct LocatedNumber {
  double value = 0;
  Span where;
};

struct LocatedText {
  std::string text;
  Span where;
};

// `context:` entry: what gives an override YAML that matches `files` its job.
struct ContextEntry {
  LocatedText files;                       // glob, relative to the config's directory
  std::optional<LocatedText> launch;       // launch script that runs the matched YAML
  std::filesystem::path launch_path;       // `launch` resolved against the config's directory
  std::optional<CommandLineValue> recipe;  // like --recipe
  std::optional<CommandLineValue> nodes;   // like --nodes
  std::optional<CommandLineValue> gpus_per_node;
  std::optional<CommandLineValue> gpu;
  std::vector<CommandLineValue> sets;  // like --set, applied before the command line's
};

struct RuleSeverity {
  Severity severity = Severity::Error;
  Span where;
};

// diff: how far `mblint diff` lets a change move a job before its gate fails
// (lint/diff/diff_gate.h); a flag of the same name wins.
struct DiffThresholds {
  std::optional<LocatedNumber> max_peak_memory_increase_gib;    // GiB per GPU
  std::optional<LocatedNumber> max_memory_fraction;             // of the GPU's capacity, in (0, 1]
  std::optional<LocatedNumber> max_step_time_increase_percent;  // of the step time before
  std::optional<LocatedNumber> max_throughput_drop_percent;     // of tokens/s/GPU before
  std::optional<LocatedNumber> max_bubble_increase;             // the bubble's share of the step, 0.05 = 5 points
  bool valid = true;  // false when the section had a problem: a gate must not run on half its limits
};

struct ProjectConfig {
  std::filesystem::path path;  // absolute
  std::filesystem::path dir;   // what relative paths in it resolve against
  FileId file = kNoFile;

  // cluster:
  std::optional<CommandLineValue> gpu;
  std::optional<CommandLineValue> gpus_per_node;
  std::optional<CommandLineValue> nvlink_domain;
  // versions:
  std::optional<CommandLineValue> megatron_core_version;
  std::optional<CommandLineValue> bridge_version;
  // rules: (rule names, resolved from names or codes)
  std::map<std::string, Span> disabled;
  std::map<std::string, RuleSeverity> severity;
  // thresholds:
  std::optional<LocatedNumber> pipeline_bubble;
  std::optional<LocatedNumber> memory_headroom;
  DiffThresholds diff;
  std::vector<ContextEntry> context;
  std::vector<LocatedText> exclude;
  // require_complete: a partly checked job is an error (like --require-complete).
  bool require_complete = false;
};

// The text that stands in for files (lint/base/file_reader.h): `mblint diff`
// reads each side's `.mblint.yaml` from it.
using FileOverlay = std::map<std::filesystem::path, std::string>;

// The `.mblint.yaml` directly in `dir`, if there is one.
std::optional<std::filesystem::path> project_config_in(const std::filesystem::path& dir,
                                                       const FileOverlay* overlay = nullptr);

// The nearest `.mblint.yaml` in `dir` or one of its parents, up to the
// file system root.
std::optional<std::filesystem::path> find_project_config(const std::filesystem::path& dir);

// Read and validate `path`. Problems (including an unreadable file, located
// at `requested_at`) go to `problems`; keys with a problem are ignored.
ProjectConfig load_project_config(SourceSet& sources, const std::filesystem::path& path, std::string display,
                                  Span requested_at, const RuleNames& rules, std::vector<Diagnostic>& problems,
                                  const FileOverlay* overlay = nullptr);

// True when `path` (absolute) is excluded by the config's `exclude` globs.
bool is_excluded(const ProjectConfig& config, const std::filesystem::path& path);

// The first context entry whose `files` glob matches `path` (absolute).
const ContextEntry* find_context(const ProjectConfig& config, const std::filesystem::path& path);

// Options for the files a config governs: the command line's options with
// the config's versions and thresholds filled in where the command line
// gives none (flags win).
LintOptions options_with_config(const LintOptions& command_line, const ProjectConfig& config);

// Options for an override YAML linted alone under a context entry: its
// recipe, cluster and overrides, unless the command line gives them.
LintOptions options_with_context(const LintOptions& options, const ContextEntry& entry);

// The config's cluster for a built job, where neither the command line nor
// the job's own launcher says otherwise: the GPU type (over a recipe's
// assumed one) and GPUs per node.
void apply_config_cluster(const ProjectConfig& config, const LintOptions& command_line, Job& job);

// rules.disable and rules.severity over diagnostics[first...]: disabled
// rules' findings are dropped, severities replaced.
void apply_rule_settings(const ProjectConfig& config, std::vector<Diagnostic>& diagnostics, size_t first);

}  // namespace mblint
