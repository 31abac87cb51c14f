// Renderers turn diagnostics into text for people and JSON for tools. They
// never decide anything: what to report was settled before.
#pragma once

#include <filesystem>
#include <ostream>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/facts/coverage.h"
#include "lint/rule/rule.h"

namespace mblint {

struct Summary {
  size_t files = 0;
  size_t errors = 0;
  size_t warnings = 0;
  size_t notes = 0;
  // The jobs of the run and how completely each was checked; only a lint
  // run counts them (jobs_counted), not a report of input problems alone.
  bool jobs_counted = false;
  std::vector<JobCoverage> jobs;
};

Summary summarize(const std::vector<Diagnostic>& diagnostics, size_t files);
Summary summarize(const std::vector<Diagnostic>& diagnostics, size_t files, std::vector<JobCoverage> jobs);

// "; 2 jobs checked, 1 partly: recipe unknown" (empty unless jobs were counted).
std::string jobs_summary(const Summary& summary);

// Compiler style: `file:line:col: error: message [rule]`, the source line
// with a caret under the span, notes, `help:` and a summary line.
void render_text(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary, bool color);
// The two halves of render_text: the diagnostics, and the summary line.
void render_text_diagnostics(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                             bool color);
void render_text_summary(std::ostream& out, const Summary& summary);

// Counts per rule, most frequent first (then by rule name), like ruff's
// --statistics: `  3  MB401  cp-seq-length-divisibility`.
void render_statistics(std::ostream& out, const std::vector<Diagnostic>& diagnostics);
// The same as JSON: {"version":1,"statistics":[{"code","rule","count"}...],"summary":{...}}.
void render_statistics_json(std::ostream& out, const std::vector<Diagnostic>& diagnostics, const Summary& summary);

// One JSON object: {"version":1,"diagnostics":[...],"summary":{...}}.
void render_json(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary);

// Where each rule's documentation is: the rules reference in the repository,
// whose `## rule-name` headings are the anchors (`#cp-seq-length-divisibility`).
// SARIF's helpUri, the LSP codeDescription and the README point here.
inline constexpr std::string_view kRulesDocsUrl = "https://github.com/mblint/mblint/blob/main/rules/README.md";
inline constexpr std::string_view kProjectUrl = "https://github.com/mblint/mblint";

// SARIF 2.1.0 with the rules' metadata (help text and URI) for code scanning.
// Artifact URIs are relative to `base_dir` (uriBaseId SRCROOT) when the file
// is under it, absolute file: URIs otherwise.
void render_sarif(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                  RuleSet rules, std::string_view tool_version, const std::filesystem::path& base_dir);

// GitHub Actions workflow commands (::error / ::warning / ::notice).
void render_github(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
