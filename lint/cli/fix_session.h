// `check --fix` / `--diff`: lint, apply the fixes that fit together, re-lint
// the edited text (later fixes see earlier ones), until nothing changes or a
// few passes are done. Everything happens in memory; writing is the caller's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lint/model/job.h"
#include "lint/model/rule_selection.h"
#include "lint/rule/rule.h"

namespace mblint {

inline constexpr int kMaxFixPasses = 8;

struct AppliedFix {
  std::string location;  // "override.yaml:3:17", where the diagnostic pointed
  std::string rule;
  std::string description;
  std::vector<std::filesystem::path> files;  // canonical paths the fix edits
};

// A file whose text the fixes change.
struct FileChange {
  std::string display;          // the path as mblint shows it
  std::filesystem::path path;   // canonical path on disk
  std::string before;           // the bytes first read
  std::string after;
};

struct FixRun {
  std::vector<AppliedFix> applied;
  // Fixes that undid each other across passes (rule A sets a value back to
  // what rule B changed): none of them is applied.
  std::vector<AppliedFix> undone;
  std::vector<FileChange> changes;  // in display order
  int passes = 0;                   // lint runs that applied something
};

// `full_args` is mblint's command line as add_command_line saw it; `options`
// came from read_job_options over it (so its spans name file 0). Only the
// findings of the rules `selection` keeps are fixed.
FixRun compute_fixes(const std::vector<std::string>& full_args, const LintOptions& options, RuleSet rules,
                     bool unsafe, const RuleSelection& selection = {});

}  // namespace mblint
