// What the editor shows: diagnostics, quick fixes and hover, computed from a
// document's last lint (positions in UTF-16 units, per the protocol).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lint/derived.h"
#include "lint/lsp_server.h"

namespace mblint::lsp {

namespace {

Json position_json(Position position) { return Json{{"line", position.line}, {"character", position.character}}; }

Position position_of(const SourceFile& file, uint32_t offset) { return to_position(file.text, file.line_starts, offset); }

int severity_of(Severity severity) {
  switch (severity) {
    case Severity::Error: return 1;
    case Severity::Warning: return 2;
    case Severity::Note: return 3;  // Information
  }
  return 1;
}

bool located_in(const LintSnapshot& snapshot, Span span, const std::string& uri) {
  return span.valid() && static_cast<size_t>(span.file) < snapshot.uris.size() && snapshot.uris[span.file] == uri;
}

// The document's text and offsets of a request's range.
struct Range {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Whole lines: a cursor anywhere on a line offers the fixes of that line's
// findings (clients send the cursor position or the selection).
Range request_range(const SourceFile& file, const Json& range) {
  auto line = [&](const Json& p) { return p.at("line").get<uint32_t>(); };
  uint32_t first = std::min(line(range.at("start")), line(range.at("end")));
  uint32_t last = std::max(line(range.at("start")), line(range.at("end")));
  return Range{to_offset(file.text, file.line_starts, Position{first, 0}),
               to_offset(file.text, file.line_starts, Position{last, UINT32_MAX})};
}

// The FileId of the document in its own lint.
FileId file_of(const LintSnapshot& snapshot, const std::string& uri) {
  for (size_t i = 0; i < snapshot.uris.size(); ++i) {
    if (snapshot.uris[i] == uri) return static_cast<FileId>(i);
  }
  return kNoFile;
}

Json workspace_edit(const LintSnapshot& snapshot, const std::vector<TextEdit>& edits) {
  Json changes = Json::object();
  for (const TextEdit& edit : edits) {
    if (!edit.where.valid() || snapshot.uris[edit.where.file].empty()) return nullptr;  // not in a file
    changes[snapshot.uris[edit.where.file]].push_back(
        Json{{"range", range_of(snapshot, edit.where)}, {"newText", edit.replacement}});
  }
  return Json{{"changes", changes}};
}

// "disable RULE for this line": the end-of-line suppression comment, or the
// rule added to one already there. Nothing for a line continued with a
// backslash (a comment there would end the shell command).
Json disable_action(const LintSnapshot& snapshot, const Diagnostic& d, const Json& lsp_diag) {
  const SourceFile& file = snapshot.sources.files[d.where.file];
  uint32_t line = line_col(file, d.where.begin).line;
  std::string_view text = line_text(file, line);
  uint32_t line_begin = file.line_starts[line - 1];
  TextEdit edit;
  size_t marker = text.find(kSuppressionMarker);
  if (marker != std::string_view::npos) {
    uint32_t at = line_begin + static_cast<uint32_t>(marker + kSuppressionMarker.size());
    edit = TextEdit{make_span(d.where.file, at, at), d.rule + ","};
  } else {
    std::string_view trimmed = text.substr(0, text.find_last_not_of(" \t") + 1);
    if (!trimmed.empty() && trimmed.back() == '\\') return nullptr;
    uint32_t at = line_begin + static_cast<uint32_t>(text.size());
    edit = TextEdit{make_span(d.where.file, at, at),
                    fmt::format("{}{}{} -- {}", text.empty() ? "" : " ", kSuppressionMarker, d.rule,
                                kSuppressionReasonPlaceholder)};
  }
  return Json{{"title", fmt::format("Disable {} for this line", d.rule)},
              {"kind", "quickfix"},
              {"diagnostics", Json::array({lsp_diag})},
              {"edit", workspace_edit(snapshot, {edit})}};
}

}  // namespace

Json range_of(const LintSnapshot& snapshot, Span span) {
  const SourceFile& file = snapshot.sources.files[span.file];
  return Json{{"start", position_json(position_of(file, span.begin))},
              {"end", position_json(position_of(file, std::max(span.begin, span.end)))}};
}

Json lsp_diagnostic(const LintSnapshot& snapshot, const Diagnostic& d) {
  std::string message = d.message;
  Json related = Json::array();
  for (const Note& note : d.notes) {
    if (note.where.valid() && !snapshot.uris[note.where.file].empty()) {
      related.push_back(Json{{"location", {{"uri", snapshot.uris[note.where.file]}, {"range", range_of(snapshot, note.where)}}},
                             {"message", note.message}});
    } else {
      message += "\nnote: " + note.message;
    }
  }
  if (!d.help.empty()) message += "\nhelp: " + d.help;
  bool in_file = d.where.valid() && !snapshot.uris[d.where.file].empty();
  Json diagnostic{{"range", in_file ? range_of(snapshot, d.where)
                                    : Json{{"start", position_json({})}, {"end", position_json({})}}},
                  {"severity", severity_of(d.severity)},
                  {"code", d.rule},
                  {"codeDescription", {{"href", std::string(kRulesDocsUrl) + "#" + d.rule}}},
                  {"source", "mblint"},
                  {"message", message}};
  if (!related.empty()) diagnostic["relatedInformation"] = std::move(related);
  return diagnostic;
}

Json diagnostics_for(const LintSnapshot& snapshot, const std::string& uri) {
  Json out = Json::array();
  for (const Diagnostic& d : snapshot.result.diagnostics) {
    // Findings without a location in a file (none, or mblint's own command
    // line) belong to the document that was linted, at its start.
    bool in_no_file = !d.where.valid() || snapshot.uris[d.where.file].empty();  // e.g. the document is too large
    bool here = located_in(snapshot, d.where, uri) || in_no_file;
    if (here) out.push_back(lsp_diagnostic(snapshot, d));
  }
  return out;
}

Json code_actions(const Document& document, const Json& params) {
  const LintSnapshot& snapshot = *document.snapshot;
  Json actions = Json::array();
  FileId file = file_of(snapshot, document.uri);
  if (file == kNoFile) return actions;
  if (const Json* context = params.contains("context") ? &params["context"] : nullptr;
      context && context->contains("only") && (*context)["only"].is_array()) {
    const Json& only = (*context)["only"];
    bool wanted = std::any_of(only.begin(), only.end(), [](const Json& kind) {
      return kind.is_string() && (kind == "quickfix" || kind.get<std::string>().rfind("quickfix", 0) == 0);
    });
    if (!wanted) return actions;
  }
  Range range = request_range(snapshot.sources.files[file], params.at("range"));
  std::set<std::pair<std::string, uint32_t>> disabled;  // one "disable" per rule and line
  for (const Diagnostic& d : snapshot.result.diagnostics) {
    if (!located_in(snapshot, d.where, document.uri)) continue;
    if (d.where.begin > range.end || std::max(d.where.begin, d.where.end) < range.begin) continue;
    Json lsp_diag = lsp_diagnostic(snapshot, d);
    bool preferred_given = false;
    for (const Fix& fix : d.fixes) {
      Json edit = workspace_edit(snapshot, fix.edits);
      if (edit.is_null() || fix.edits.empty()) continue;
      bool safe = fix.safety == FixSafety::Safe;
      Json action{{"title", safe ? fix.description : fix.description + " (unsafe: changes the run)"},
                  {"kind", "quickfix"},
                  {"diagnostics", Json::array({lsp_diag})},
                  {"edit", std::move(edit)}};
      if (safe && !preferred_given) action["isPreferred"] = preferred_given = true;
      actions.push_back(std::move(action));
    }
    uint32_t line = line_col(snapshot.sources.files[file], d.where.begin).line;
    if (disabled.insert({d.rule, line}).second) {
      Json disable = disable_action(snapshot, d, lsp_diag);
      if (!disable.is_null()) actions.push_back(std::move(disable));
    }
  }
  return actions;
}

}  // namespace mblint::lsp
