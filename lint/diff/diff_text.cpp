// `mblint diff` as text: per job its status and location, then a compact
// before -> after table of the settings and numbers that moved, then the
// findings it brought and fixed; coloured on a terminal.
#include <algorithm>

#include <fmt/format.h>

#include "lint/diff/diff_render.h"

namespace mblint {

namespace {

struct Style {
  bool color = false;
  std::string paint(std::string_view code, std::string_view text) const {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};

constexpr std::string_view kRed = "31", kGreen = "32", kYellow = "33", kBold = "1";

std::string_view status_color(JobStatus status) {
  switch (status) {
    case JobStatus::Added: return kGreen;
    case JobStatus::Removed: return kRed;
    case JobStatus::Changed: return kYellow;
    case JobStatus::Unchanged: return "";
  }
  return "";
}

struct Row {
  std::string name, before, after, origin;
};

std::string value_cell(const ResolvedSetting* s) {
  if (!s) return "-";
  std::string text = to_display(s->value);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

std::vector<Row> rows_of(const DiffView& view, const JobDiff& job) {
  std::vector<Row> rows;
  for (const SettingDiff& s : job.settings) {
    std::string origin = s.after ? setting_origin(view.head.sources, *s.after)
                                 : fmt::format("removed from {}", setting_origin(view.base.sources, *s.before));
    rows.push_back(Row{s.key, value_cell(s.before), value_cell(s.after), origin});
  }
  for (const DerivedDiff& d : job.derived) {
    if (job.status == JobStatus::Changed && !d.changed()) continue;  // a changed job: what moved
    auto cell = [&](const std::optional<double>& v) { return v ? number_text(*v, d.integer) : std::string("-"); };
    rows.push_back(Row{d.name, cell(d.before), cell(d.after), ""});
  }
  return rows;
}

void print_rows(std::ostream& out, const std::vector<Row>& rows) {
  size_t name_width = 0, before_width = 0, after_width = 0;
  for (const Row& row : rows) {
    name_width = std::max(name_width, row.name.size());
    before_width = std::max(before_width, row.before.size());
    after_width = std::max(after_width, row.after.size());
  }
  for (const Row& row : rows) {
    std::string line = fmt::format("  {:<{}}  {:>{}} -> {:<{}}", row.name, name_width, row.before, before_width,
                                   row.after, after_width);
    if (!row.origin.empty()) line += fmt::format("  {}", row.origin);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

void print_findings(std::ostream& out, const Style& style, const SourceSet& sources, std::string_view label,
                    std::string_view color, const std::vector<const Diagnostic*>& findings) {
  for (const Diagnostic* d : findings) {
    std::string where = line_location(sources, d->where);
    out << fmt::format("  {} {}{}: {} [{}]\n", style.paint(color, label), severity_name(d->severity),
                       where.empty() ? "" : fmt::format(" {}", where), d->message, d->rule);
  }
}

void print_job(std::ostream& out, const Style& style, const DiffView& view, const JobDiff& job) {
  out << fmt::format("{} {}\n", style.paint(status_color(job.status), job_status_name(job.status)),
                     style.paint(kBold, job_location(job)));
  print_rows(out, rows_of(view, job));
  print_findings(out, style, view.head.sources, "new", kRed, job.new_findings);
  print_findings(out, style, view.base.sources, "fixed", kGreen, job.fixed_findings);
}

std::string side_name(const std::string& label) { return label == "WORKTREE" ? label : label.substr(0, 12); }

}  // namespace

void render_diff_text(std::ostream& out, const DiffView& view, bool color) {
  Style style{color};
  out << fmt::format("mblint diff {}..{}\n", side_name(view.base.label), side_name(view.head.label));
  for (const JobDiff& job : view.report.jobs) {
    if (shown(job, view.all)) print_job(out, style, view, job);
  }
  if (!view.report.new_elsewhere.empty() || !view.report.fixed_elsewhere.empty()) {
    out << "outside the jobs\n";
    print_findings(out, style, view.head.sources, "new", kRed, view.report.new_elsewhere);
    print_findings(out, style, view.base.sources, "fixed", kGreen, view.report.fixed_elsewhere);
  }
  for (const Regression& r : view.regressions) {
    out << fmt::format("{} {}: {}\n", style.paint(kRed, "regression"), job_location(*r.job), r.message);
  }
  DiffCounts counts = count_jobs(view.report);
  out << fmt::format("{} changed, {} added, {} removed, {} unchanged; {} new error{}; {}\n", counts.changed,
                     counts.added, counts.removed, counts.unchanged, view.new_errors, view.new_errors == 1 ? "" : "s",
                     view.regressions.empty() ? std::string("no regressions")
                                              : fmt::format("{} regression{}", view.regressions.size(),
                                                            view.regressions.size() == 1 ? "" : "s"));
}

}  // namespace mblint
