#include "lint/cli/fix_session.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/fix/fix_apply.h"
#include "lint/run/lint.h"

namespace mblint {

namespace fs = std::filesystem;

namespace {

fs::path disk_path(const SourceFile& file, const fs::path& base_dir) {
  fs::path path = file.path;
  if (!path.is_absolute()) path = base_dir / path;
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal() : canonical;
}

std::string location(const SourceSet& sources, const Span& where) {
  if (!where.valid()) return "mblint";
  const SourceFile& file = sources.files[where.file];
  LineCol at = line_col(file, where.begin);
  return fmt::format("{}:{}:{}", file.path, at.line, at.column);
}

// The same file named twice (`a.yaml ./a.yaml`) is two sources with one
// text: point every edit at the first, so their conflicts are seen.
void merge_duplicate_files(std::vector<Diagnostic>& diagnostics, const SourceSet& sources,
                           const std::vector<fs::path>& paths) {
  std::map<fs::path, FileId> first;
  std::vector<FileId> representative(sources.files.size());
  for (size_t i = 0; i < sources.files.size(); ++i) {
    FileId id = static_cast<FileId>(i);
    representative[i] = id;
    if (sources.files[i].synthetic) continue;
    auto [it, inserted] = first.emplace(paths[i], id);
    if (!inserted && sources.files[it->second].text == sources.files[i].text) representative[i] = it->second;
  }
  for (Diagnostic& d : diagnostics) {
    for (Fix& fix : d.fixes) {
      for (TextEdit& edit : fix.edits) {
        if (edit.where.valid() && static_cast<size_t>(edit.where.file) < representative.size()) {
          edit.where.file = representative[edit.where.file];
        }
      }
    }
  }
}

}  // namespace

namespace {

using Texts = std::map<fs::path, std::string>;

// The edited files, without those whose text is back to what was read.
Texts normalized(Texts texts, const Texts& original) {
  for (auto it = texts.begin(); it != texts.end();) {
    auto before = original.find(it->first);
    it = before != original.end() && before->second == it->second ? texts.erase(it) : std::next(it);
  }
  return texts;
}

void drop_blocked(std::vector<Diagnostic>& diagnostics, const std::set<std::pair<std::string, std::string>>& blocked) {
  if (blocked.empty()) return;
  for (Diagnostic& d : diagnostics) {
    std::erase_if(d.fixes, [&](const Fix& fix) { return blocked.count({d.rule, fix.description}) > 0; });
  }
}

}  // namespace

FixRun compute_fixes(const std::vector<std::string>& full_args, const LintOptions& options, RuleSet rules,
                     bool unsafe, const RuleSelection& selection) {
  FixRun run;
  Texts original;  // bytes as first read from disk
  std::map<fs::path, std::string> display;
  // states[i]: the edited texts after i passes (fed back as the overlay);
  // pass_fixes[i]: what pass i applied.
  std::vector<Texts> states = {Texts{}};
  std::vector<std::vector<AppliedFix>> pass_fixes;
  std::set<std::pair<std::string, std::string>> blocked;  // (rule, fix description)
  for (int pass = 0; pass < kMaxFixPasses; ++pass) {
    const Texts& current = states.back();
    SourceSet sources;
    add_command_line(sources, full_args);
    LintOptions pass_options = options;
    pass_options.overlay = current;
    pass_options.selection = selection;
    LintResult result = run_lint(sources, pass_options, rules);

    std::vector<fs::path> paths(sources.files.size());
    for (size_t i = 0; i < sources.files.size(); ++i) {
      const SourceFile& file = sources.files[i];
      if (file.synthetic) continue;
      paths[i] = disk_path(file, options.base_dir);
      if (!current.count(paths[i])) original.emplace(paths[i], file.text);
      display.emplace(paths[i], file.path);
    }
    merge_duplicate_files(result.diagnostics, sources, paths);
    drop_blocked(result.diagnostics, blocked);
    FixPlan plan = plan_fixes(result.diagnostics, sources, unsafe);
    if (plan.fixed.empty()) break;

    Texts next = current;
    for (const auto& [file, edits] : plan.edits) next[paths[file]] = apply_edits(sources.files[file].text, edits);
    next = normalized(std::move(next), original);
    std::vector<AppliedFix> applied;
    for (size_t k = 0; k < plan.fixed.size(); ++k) {
      const Diagnostic& d = result.diagnostics[plan.fixed[k]];
      AppliedFix fix{location(sources, d.where), d.rule, plan.fixes[k]->description, {}};
      for (const TextEdit& edit : plan.fixes[k]->edits) fix.files.push_back(paths[edit.where.file]);
      applied.push_back(std::move(fix));
    }
    // A fix offered again at the same place after it was applied did not
    // take effect (it set a key the value does not come from): go back to
    // before it, and do not apply it again.
    std::optional<size_t> ineffective;
    for (const AppliedFix& fix : applied) {
      for (size_t i = 0; i < pass_fixes.size() && !ineffective; ++i) {
        for (const AppliedFix& earlier : pass_fixes[i]) {
          if (earlier.rule == fix.rule && earlier.description == fix.description && earlier.location == fix.location) {
            ineffective = i;
            if (blocked.insert({fix.rule, fix.description}).second) run.undone.push_back(fix);
            break;
          }
        }
      }
    }
    if (ineffective) {
      states.resize(*ineffective + 1);
      pass_fixes.resize(*ineffective);
      continue;
    }
    auto seen = std::find(states.begin(), states.end(), next);
    if (seen == states.end()) {
      states.push_back(std::move(next));
      pass_fixes.push_back(std::move(applied));
      continue;
    }
    // Back to an earlier state: the fixes since then undo each other. Apply
    // none of them, and look for other fixes from that state.
    size_t back = static_cast<size_t>(seen - states.begin());
    for (size_t i = back; i < pass_fixes.size(); ++i) applied.insert(applied.end(), pass_fixes[i].begin(), pass_fixes[i].end());
    for (AppliedFix& fix : applied) {
      if (blocked.insert({fix.rule, fix.description}).second) run.undone.push_back(std::move(fix));
    }
    states.resize(back + 1);
    pass_fixes.resize(back);
  }
  run.passes = static_cast<int>(pass_fixes.size());
  for (auto& fixes : pass_fixes) {
    for (AppliedFix& fix : fixes) run.applied.push_back(std::move(fix));
  }
  for (const auto& [path, text] : states.back()) {
    run.changes.push_back(FileChange{display[path], path, original[path], text});
  }
  std::sort(run.changes.begin(), run.changes.end(),
            [](const FileChange& a, const FileChange& b) { return a.display < b.display; });
  return run;
}

}  // namespace mblint
