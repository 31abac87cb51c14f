#include <nlohmann/json.hpp>

#include "lint/render.h"

namespace mblint {

namespace {

using json = nlohmann::ordered_json;

// Columns are 1-based bytes; end_column is one past the last character.
void put_range(json& object, const SourceSet& sources, Span where) {
  if (!where.valid() || where.file >= static_cast<FileId>(sources.files.size())) {
    object["file"] = nullptr;
    object["line"] = nullptr;
    object["column"] = nullptr;
    object["end_line"] = nullptr;
    object["end_column"] = nullptr;
    return;
  }
  const SourceFile& file = sources.files[where.file];
  LineCol begin = line_col(file, where.begin);
  LineCol end = line_col(file, where.end);
  object["file"] = file.path;
  object["line"] = begin.line;
  object["column"] = begin.column;
  object["end_line"] = end.line;
  object["end_column"] = end.column;
}

json diagnostic_json(const SourceSet& sources, const Diagnostic& d) {
  json object = json::object();
  object["rule"] = d.rule;
  object["code"] = d.code;
  object["severity"] = std::string(severity_name(d.severity));
  object["message"] = d.message;
  put_range(object, sources, d.where);
  object["subject"] = d.subject.empty() ? json(nullptr) : json(d.subject);
  json notes = json::array();
  for (const Note& note : d.notes) {
    json n = json::object();
    n["message"] = note.message;
    json range = json::object();
    put_range(range, sources, note.where);
    n["file"] = range["file"];
    n["line"] = range["line"];
    n["column"] = range["column"];
    notes.push_back(std::move(n));
  }
  object["notes"] = std::move(notes);
  object["help"] = d.help;
  json fixes = json::array();
  for (const Fix& fix : d.fixes) {
    json f = json::object();
    f["description"] = fix.description;
    f["safety"] = std::string(fix_safety_name(fix.safety));
    json edits = json::array();
    for (const TextEdit& edit : fix.edits) {
      json e = json::object();
      put_range(e, sources, edit.where);
      e["replacement"] = edit.replacement;
      edits.push_back(std::move(e));
    }
    f["edits"] = std::move(edits);
    fixes.push_back(std::move(f));
  }
  object["fixes"] = std::move(fixes);
  return object;
}

}  // namespace

void render_json(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary) {
  json document = json::object();
  document["version"] = 1;
  json list = json::array();
  for (const Diagnostic& d : diagnostics) list.push_back(diagnostic_json(sources, d));
  document["diagnostics"] = std::move(list);
  document["summary"] = {{"files", summary.files},
                         {"errors", summary.errors},
                         {"warnings", summary.warnings},
                         {"notes", summary.notes}};
  out << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace mblint
