// Renderers turn diagnostics into text for people and JSON for tools. They
// never decide anything: what to report was settled before.
#pragma once

#include <ostream>
#include <vector>

#include "lint/diagnostic.h"
#include "lint/rule.h"
#include "lint/source.h"

namespace mblint {

struct Summary {
  size_t files = 0;
  size_t errors = 0;
  size_t warnings = 0;
  size_t notes = 0;
};

Summary summarize(const std::vector<Diagnostic>& diagnostics, size_t files);

// Compiler style: `file:line:col: error: message [rule]`, the source line
// with a caret under the span, notes, `help:` and a summary line.
void render_text(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary, bool color);

// One JSON object: {"version":1,"diagnostics":[...],"summary":{...}}.
void render_json(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary);

// SARIF 2.1.0 with the rules' metadata (help text and URI) for code scanning.
void render_sarif(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                  RuleSet rules, std::string_view tool_version);

// GitHub Actions workflow commands (::error / ::warning / ::notice).
void render_github(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
