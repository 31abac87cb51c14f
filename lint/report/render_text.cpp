#include <string>

#include <fmt/format.h>

#include "lint/report/render.h"

namespace mblint {

namespace {

struct Palette {
  bool on;
  std::string bold() const { return on ? "\x1b[1m" : ""; }
  std::string reset() const { return on ? "\x1b[0m" : ""; }
  std::string severity(Severity s) const {
    if (!on) return "";
    switch (s) {
      case Severity::Error: return "\x1b[1;31m";
      case Severity::Warning: return "\x1b[1;35m";
      case Severity::Note: return "\x1b[1;36m";
    }
    return "";
  }
  std::string caret() const { return on ? "\x1b[1;32m" : ""; }
  std::string help() const { return on ? "\x1b[1;34m" : ""; }
};

std::string location(const SourceSet& sources, Span where) {
  if (!where.valid() || where.file >= static_cast<FileId>(sources.files.size())) return "";
  const SourceFile& file = sources.files[where.file];
  LineCol at = line_col(file, where.begin);
  return fmt::format("{}:{}:{}", file.path, at.line, at.column);
}

// The source line and a caret line under the span (first line of the span).
void render_snippet(std::ostream& out, const SourceSet& sources, Span where, const Palette& p) {
  if (!where.valid() || where.file >= static_cast<FileId>(sources.files.size())) return;
  const SourceFile& file = sources.files[where.file];
  if (file.text.empty()) return;
  LineCol at = line_col(file, where.begin);
  std::string_view line = line_text(file, at.line);
  if (line.size() > 400) return;  // minified or generated: the location says enough
  std::string number = std::to_string(at.line);
  size_t width = std::max<size_t>(5, number.size() + 1);
  std::string gutter(width, ' ');
  out << fmt::format("{:>{}} | {}\n", number, width, line);
  std::string pad;
  size_t column = at.column - 1;
  for (size_t i = 0; i < column && i < line.size(); ++i) pad += line[i] == '\t' ? '\t' : ' ';
  size_t line_end = file.line_starts[at.line - 1] + line.size();
  size_t end = std::min<size_t>(where.end, line_end);
  size_t length = end > where.begin ? end - where.begin : 1;
  out << gutter << " | " << pad << p.caret() << '^' << std::string(length - 1, '~') << p.reset() << '\n';
}

std::string plural(size_t count, std::string_view word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

}  // namespace

Summary summarize(const std::vector<Diagnostic>& diagnostics, size_t files) {
  Summary summary;
  summary.files = files;
  for (const Diagnostic& d : diagnostics) {
    if (d.severity == Severity::Error) ++summary.errors;
    else if (d.severity == Severity::Warning) ++summary.warnings;
    else ++summary.notes;
  }
  return summary;
}

Summary summarize(const std::vector<Diagnostic>& diagnostics, size_t files, std::vector<JobCoverage> jobs) {
  Summary summary = summarize(diagnostics, files);
  summary.jobs_counted = true;
  summary.jobs = std::move(jobs);
  return summary;
}

std::string jobs_summary(const Summary& summary) {
  if (!summary.jobs_counted) return "";
  if (summary.jobs.empty()) return "; no training job found";
  Coverage partly;  // the gaps of the partly checked jobs, for their labels
  size_t partial = 0;
  for (const JobCoverage& job : summary.jobs) {
    if (job.coverage.complete()) continue;
    ++partial;
    partly.gaps.insert(partly.gaps.end(), job.coverage.gaps.begin(), job.coverage.gaps.end());
  }
  std::string checked = plural(summary.jobs.size(), "job") + " checked";
  if (partial == 0) return "; " + checked;
  std::string labels = coverage_labels(partly);
  if (summary.jobs.size() == 1) return fmt::format("; {} partly: {}", checked, labels);
  if (partial == summary.jobs.size()) return fmt::format("; {}, all partly: {}", checked, labels);
  return fmt::format("; {}, {} partly: {}", checked, partial, labels);
}

void render_text(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                 const Summary& summary, bool color) {
  render_text_diagnostics(out, sources, diagnostics, color);
  render_text_summary(out, summary);
}

void render_text_diagnostics(std::ostream& out, const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                             bool color) {
  Palette p{color};
  for (const Diagnostic& d : diagnostics) {
    std::string where = location(sources, d.where);
    out << p.bold() << (where.empty() ? "mblint" : where) << ": " << p.reset() << p.severity(d.severity)
        << severity_name(d.severity) << ": " << p.reset() << p.bold() << d.message << p.reset() << " [" << d.rule
        << "]\n";
    render_snippet(out, sources, d.where, p);
    for (const Note& note : d.notes) {
      std::string at = location(sources, note.where);
      if (!at.empty()) out << p.bold() << at << ": " << p.reset();
      out << p.severity(Severity::Note) << "note: " << p.reset() << note.message << '\n';
    }
    if (!d.help.empty()) out << p.help() << "help: " << p.reset() << d.help << '\n';
  }
}

void render_text_summary(std::ostream& out, const Summary& summary) {
  if (summary.errors + summary.warnings + summary.notes == 0) {
    out << fmt::format("mblint: no problems found in {}{}\n", plural(summary.files, "file"), jobs_summary(summary));
    return;
  }
  out << fmt::format("mblint: {}, {}, {} in {}{}\n", plural(summary.errors, "error"),
                     plural(summary.warnings, "warning"), plural(summary.notes, "note"),
                     plural(summary.files, "file"), jobs_summary(summary));
}

}  // namespace mblint
