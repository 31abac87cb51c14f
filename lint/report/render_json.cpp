#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <string>

#include "lint/base/build_info.h"
#include "lint/report/diagnostic_json.h"
#include "lint/report/render.h"

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

// Where a note or an unresolved value stands: put_range's start only.
void put_start(json& object, const SourceSet& sources, Span where) {
  json range = json::object();
  put_range(range, sources, where);
  for (const char* key : {"file", "line", "column"}) object[key] = std::move(range[key]);
}

}  // namespace

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
    put_start(n, sources, note.where);
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

namespace {

// `text` (a dump with indent 2) as it stands `depth` spaces in: JSON strings
// hold no raw newlines, so every newline starts a line of the dump.
void put_indented(std::ostream& out, const std::string& text, size_t depth) {
  size_t start = 0;
  for (size_t newline = text.find('\n'); newline != std::string::npos; newline = text.find('\n', start)) {
    out.write(text.data() + start, static_cast<std::streamsize>(newline + 1 - start));
    out << std::string(depth, ' ');
    start = newline + 1;
  }
  out.write(text.data() + start, static_cast<std::streamsize>(text.size() - start));
}

json job_json(const SourceSet& sources, const JobCoverage& job) {
  json object = json::object();
  put_start(object, sources, job.where);
  object["entry"] = job.entry;
  object["dialect"] = job.dialect;
  object["recipe"] = job.recipe.empty() ? json(nullptr) : json(job.recipe);
  object["checked"] = job.coverage.complete() ? "fully" : "partly";
  json unresolved = json::array();
  for (const CoverageGap& gap : job.coverage.gaps) {
    json g = json::object();
    g["what"] = gap.what;
    g["why"] = gap.why;
    g["supply"] = gap.supply;
    g["unknown"] = gap.unknown;
    put_start(g, sources, gap.where);
    unresolved.push_back(std::move(g));
  }
  object["unresolved"] = std::move(unresolved);
  return object;
}

}  // namespace

// Written one diagnostic at a time, the same bytes as one dump of the whole
// document: a tree with thousands of findings never builds one JSON DOM.
void render_json(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary) {
  out << "{\n  \"version\": 1,\n  \"tool\": {\n    \"name\": \"mblint\",\n    \"version\": \"" << kVersion
      << "\"\n  },\n  \"diagnostics\": [";
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ");
    put_indented(out, diagnostic_json(sources, diagnostics[i]).dump(2, ' ', false, json::error_handler_t::replace),
                 4);
  }
  out << (diagnostics.empty() ? "]" : "\n  ]");
  if (summary.jobs_counted) {
    out << ",\n  \"jobs\": [";
    for (size_t i = 0; i < summary.jobs.size(); ++i) {
      out << (i == 0 ? "\n    " : ",\n    ");
      put_indented(out, job_json(sources, summary.jobs[i]).dump(2, ' ', false, json::error_handler_t::replace), 4);
    }
    out << (summary.jobs.empty() ? "]" : "\n  ]");
  }
  out << ",\n  \"summary\": ";
  json totals = {{"files", summary.files},
                 {"errors", summary.errors},
                 {"warnings", summary.warnings},
                 {"notes", summary.notes}};
  if (summary.jobs_counted) {
    size_t partly = std::count_if(summary.jobs.begin(), summary.jobs.end(),
                                  [](const JobCoverage& job) { return !job.coverage.complete(); });
    totals["jobs"] = summary.jobs.size();
    totals["jobs_partly_checked"] = partly;
  }
  put_indented(out, totals.dump(2), 2);
  out << "\n}\n";
}

}  // namespace mblint
