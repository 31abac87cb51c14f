// Baselines: adopt mblint on a repository with existing findings. A baseline
// file lists today's findings; with it, only new findings are reported.
//
// A finding's identity is (file, rule, subject): the file's path relative to
// the working directory, the rule name and the config key path the finding
// is about (Diagnostic::subject) -- never a line number, so edits elsewhere in
// the file keep it hidden. A finding without a subject is identified by a
// hash of its message instead (FNV-1a 64, hex). Matching counts: a key listed
// once hides one finding; a second finding with the same key is new.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

struct BaselineKey {
  std::string file;     // relative to the working directory, '/' separated; "" without a location
  std::string rule;
  std::string subject;  // config key path, or "" when the finding has none
  std::string message_hash;  // only when subject is empty
  friend auto operator<=>(const BaselineKey&, const BaselineKey&) = default;
};

struct BaselineEntry {
  BaselineKey key;
  size_t count = 0;
  std::string message;  // for readers of the file (subject-less entries only); not matched
};

// The path as the baseline and SARIF name it: relative to `base_dir` when
// the file is under it, else as given; '/' separated.
std::string relative_path(const std::string& path, const std::filesystem::path& base_dir);

std::string fnv1a_hex(std::string_view text);

BaselineKey baseline_key(const SourceSet& sources, const Diagnostic& d, const std::filesystem::path& base_dir);

// The baseline of `diagnostics`, sorted by key.
std::vector<BaselineEntry> make_baseline(const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                                         const std::filesystem::path& base_dir);

// {"version": 1, "tool": "mblint", "findings": [...]}, one finding per line
// block, sorted: stable under re-generation, readable in review.
std::string baseline_to_json(const std::vector<BaselineEntry>& entries);

// nullopt with `error` set when the text is no baseline mblint wrote.
std::optional<std::vector<BaselineEntry>> parse_baseline(std::string_view text, std::string& error);

// Removes the findings the baseline lists (count-based); returns how many.
size_t apply_baseline(const SourceSet& sources, const std::vector<BaselineEntry>& baseline,
                      const std::filesystem::path& base_dir, std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
