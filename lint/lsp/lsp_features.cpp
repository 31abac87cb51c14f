// What the editor shows: diagnostics, quick fixes and hover, computed from a
// document's last lint (positions in UTF-16 units, per the protocol).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lint/engine/suppression.h"
#include "lint/facts/derived.h"
#include "lint/fix/fix_verify.h"
#include "lint/lsp/lsp_server.h"

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

// --- "disable RULE for this line" --------------------------------------------------------
//
// The edit is checked before it is offered: the edited text is scanned for
// suppressions exactly as the lint will scan it (lint/engine/suppression.h), and an
// edit is offered only when it covers the finding's line with a suppression
// the lint honours (a reason is given for an error). So applying it silences
// the finding and adds no `unused-suppression` or
// `suppression-without-reason`.

struct DisableEdit {
  std::string title;
  TextEdit edit;
};

bool names_rule(const Suppression& s, const Diagnostic& d) {
  return std::any_of(s.rules.begin(), s.rules.end(), [&](const SuppressedRule& entry) {
    return entry.name == d.rule || (!d.code.empty() && entry.name == d.code);
  });
}

bool covers(const Suppression& s, uint32_t line) {
  return !s.file_wide && !s.malformed && s.target_line && s.target_line <= line && line <= s.target_end_line;
}

// Whether `edit` applied to `file` makes a suppression that the lint honours
// for `d` (which moves to `line` in the edited text; 0: anywhere, file-wide).
bool silences(const SourceFile& file, const TextEdit& edit, const Diagnostic& d, uint32_t line) {
  std::string text = file.text;
  text.replace(edit.where.begin, edit.where.end - edit.where.begin, edit.replacement);
  SourceSet scratch;
  FileId id = add_source(scratch, file.path, std::move(text));
  for (const Suppression& s : find_suppressions(scratch.files[id], id, {})) {
    bool applies = line == 0 ? s.file_wide && !s.malformed : covers(s, line);
    if (applies && names_rule(s, d) && (d.severity != Severity::Error || !s.reason.empty())) return true;
  }
  return false;
}

std::string suppression_comment(std::string_view directive, const Diagnostic& d) {
  return fmt::format("# mblint: {}={} -- {}", directive, d.rule, kSuppressionReasonPlaceholder);
}

std::string_view without_trailing_blanks(std::string_view text) {
  size_t end = text.find_last_not_of(" \t\r");
  return end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
}

std::string line_break(const SourceFile& file) {
  return file.text.find("\r\n") != std::string::npos ? "\r\n" : "\n";
}

// The rule added to the suppression that already covers the line (with the
// placeholder reason when it has none and the finding is an error).
std::optional<DisableEdit> extend_existing(const SourceFile& file, FileId id, const Diagnostic& d, uint32_t line) {
  for (const Suppression& s : find_suppressions(file, id, {})) {
    if (!covers(s, line) || s.rules.empty()) continue;
    uint32_t after_names = s.rules.back().where.end;
    std::string_view tail(file.text.data() + after_names, s.comment.end - after_names);
    std::string_view trimmed = without_trailing_blanks(tail.substr(std::min(tail.find_first_not_of(" \t"), tail.size())));
    // Named already but refused for want of a reason: only the reason is missing.
    std::string added = names_rule(s, d) ? "" : "," + d.rule;
    TextEdit edit{make_span(id, after_names, after_names), added};
    if (d.severity == Severity::Error && s.reason.empty() && (trimmed.empty() || trimmed == "--")) {
      edit = TextEdit{make_span(id, after_names, s.comment.end),
                      fmt::format("{} -- {}", added, kSuppressionReasonPlaceholder)};
    }
    return DisableEdit{fmt::format("Disable {} for this {} ({} the suppression there)", d.rule,
                                   s.target_end_line > s.target_line ? "command" : "line",
                                   added.empty() ? "give a reason to" : "add it to"),
                       edit};
  }
  return std::nullopt;
}

// The suppression written at the end of the line.
DisableEdit end_of_line(const SourceFile& file, FileId id, const Diagnostic& d, uint32_t line) {
  std::string_view text = line_text(file, line);
  uint32_t at = file.line_starts[line - 1] + static_cast<uint32_t>(without_trailing_blanks(text).size());
  return DisableEdit{fmt::format("Disable {} for this line", d.rule),
                     TextEdit{make_span(id, at, at), fmt::format("{}{}", at == file.line_starts[line - 1] ? "" : " ",
                                                                  suppression_comment("disable", d))}};
}

// The suppression alone on a new line above: above the line in YAML, above
// the whole command in a launch script (a comment cannot go between `\`
// continuation lines, nor after one).
DisableEdit line_above(const SourceFile& file, FileId id, const Diagnostic& d, uint32_t line) {
  uint32_t first = line;
  if (comment_syntax_for(file.path) == CommentSyntax::Shell) {
    while (first > 1 && without_trailing_blanks(line_text(file, first - 1)).ends_with('\\')) --first;
  }
  std::string_view text = line_text(file, first);
  std::string indent(text.substr(0, std::min(text.find_first_not_of(" \t"), text.size())));
  uint32_t at = file.line_starts[first - 1];
  bool command = first != line || without_trailing_blanks(text).ends_with('\\');
  return DisableEdit{fmt::format("Disable {} for this {}", d.rule, command ? "command" : "line"),
                     TextEdit{make_span(id, at, at), indent + suppression_comment("disable", d) + line_break(file)}};
}

// For a line no comment can cover (a `#SBATCH` line is itself a comment):
// the whole file, below a `#!` line.
DisableEdit whole_file(const SourceFile& file, FileId id, const Diagnostic& d) {
  uint32_t at = 0;
  if (file.text.starts_with("#!") && file.line_starts.size() > 1) at = file.line_starts[1];
  return DisableEdit{fmt::format("Disable {} in this file", d.rule),
                     TextEdit{make_span(id, at, at), suppression_comment("disable-file", d) + line_break(file)}};
}

std::optional<DisableEdit> disable_edit(const SourceFile& file, FileId id, const Diagnostic& d) {
  uint32_t line = line_col(file, d.where.begin).line;
  if (auto extended = extend_existing(file, id, d, line)) {
    return silences(file, extended->edit, d, line) ? extended : std::nullopt;
  }
  std::vector<Comment> comments = scan_comments(file.text, comment_syntax_for(file.path));
  bool has_comment = std::any_of(comments.begin(), comments.end(), [&](const Comment& c) { return c.line == line; });
  // After a `\` the comment would end the shell command (and the escaped
  // blank before it would be an argument).
  bool continued = without_trailing_blanks(line_text(file, line)).ends_with('\\');
  if (!has_comment && !continued) {
    DisableEdit edit = end_of_line(file, id, d, line);
    if (silences(file, edit.edit, d, line)) return edit;
  }
  DisableEdit above = line_above(file, id, d, line);
  if (silences(file, above.edit, d, line + 1)) return above;
  DisableEdit everywhere = whole_file(file, id, d);
  if (silences(file, everywhere.edit, d, 0)) return everywhere;
  return std::nullopt;
}

Json disable_action(const LintSnapshot& snapshot, const Diagnostic& d, const Json& lsp_diag) {
  std::optional<DisableEdit> disable = disable_edit(snapshot.sources.files[d.where.file], d.where.file, d);
  if (!disable) return nullptr;
  return Json{{"title", disable->title},
              {"kind", "quickfix"},
              {"diagnostics", Json::array({lsp_diag})},
              {"edit", workspace_edit(snapshot, {disable->edit})}};
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

namespace {

// Whether the request's context asks for other kinds of action only.
bool quick_fixes_unwanted(const Json& params) {
  if (!params.contains("context")) return false;
  const Json& context = params["context"];
  if (!context.contains("only") || !context["only"].is_array()) return false;
  const Json& only = context["only"];
  return std::none_of(only.begin(), only.end(), [](const Json& kind) {
    return kind.is_string() && (kind == "quickfix" || kind.get<std::string>().rfind("quickfix", 0) == 0);
  });
}

// The findings of the document that a code action request's range touches.
std::vector<const Diagnostic*> findings_in_range(const Document& document, const Json& params) {
  const LintSnapshot& snapshot = *document.snapshot;
  std::vector<const Diagnostic*> found;
  FileId file = file_of(snapshot, document.uri);
  if (file == kNoFile || quick_fixes_unwanted(params)) return found;
  Range range = request_range(snapshot.sources.files[file], params.at("range"));
  for (const Diagnostic& d : snapshot.result.diagnostics) {
    if (!located_in(snapshot, d.where, document.uri)) continue;
    if (d.where.begin > range.end || std::max(d.where.begin, d.where.end) < range.begin) continue;
    found.push_back(&d);
  }
  return found;
}

}  // namespace

Json code_actions(const Document& document, const Json& params) {
  const LintSnapshot& snapshot = *document.snapshot;
  Json actions = Json::array();
  std::set<std::pair<std::string, uint32_t>> disabled;  // one "disable" per rule and line
  for (const Diagnostic* found : findings_in_range(document, params)) {
    const Diagnostic& d = *found;
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
    uint32_t line = line_col(snapshot.sources.files[d.where.file], d.where.begin).line;
    if (disabled.insert({d.rule, line}).second) {
      Json disable = disable_action(snapshot, d, lsp_diag);
      if (!disable.is_null()) actions.push_back(std::move(disable));
    }
  }
  return actions;
}

bool offers_unchecked_fixes(const Document& document, const Json& params) {
  if (!document.fixes_unchecked || !document.snapshot) return false;
  for (const Diagnostic* d : findings_in_range(document, params)) {
    if (std::any_of(d->fixes.begin(), d->fixes.end(), awaits_recheck)) {
      return true;
    }
  }
  return false;
}

}  // namespace mblint::lsp
