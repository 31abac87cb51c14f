// GitHub Actions workflow commands: one `::error file=...::message` line per
// diagnostic, shown as annotations on the pull request.
#include <string>

#include "lint/report/render.h"

namespace mblint {

namespace {

// Escaping defined by the Actions toolkit for command data and properties.
std::string escape_data(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_property(std::string_view text) {
  std::string out;
  for (char c : escape_data(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

std::string_view command(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "notice";
  }
  return "warning";
}

}  // namespace

void render_github(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics) {
  for (const Diagnostic& d : diagnostics) {
    out << "::" << command(d.severity);
    std::string properties;
    if (d.where.valid() && d.where.file < static_cast<FileId>(sources.files.size()) &&
        !sources.files[d.where.file].synthetic) {
      const SourceFile& file = sources.files[d.where.file];
      LineCol begin = line_col(file, d.where.begin);
      LineCol end = line_col(file, d.where.end);
      properties = "file=" + escape_property(file.path) + ",line=" + std::to_string(begin.line) +
                   ",col=" + std::to_string(begin.column) + ",endLine=" + std::to_string(end.line) +
                   ",endColumn=" + std::to_string(end.column) + ",";
    }
    properties += "title=" + escape_property("mblint " + d.rule + " (" + d.code + ")");
    std::string message = d.message;
    for (const Note& note : d.notes) message += "\nnote: " + note.message;
    if (!d.help.empty()) message += "\nhelp: " + d.help;
    out << ' ' << properties << "::" << escape_data(message) << '\n';
  }
}

}  // namespace mblint
