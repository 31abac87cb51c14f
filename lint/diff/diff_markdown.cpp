// `mblint diff --format markdown`: a pull-request comment, one table per job
// and the findings the change brought.
#include <fmt/format.h>

#include "lint/diff/diff_render.h"

namespace mblint {

namespace {

// A table cell: no raw '|' or newline.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// fmt, not "`" + text: GCC 12 -O3 takes that insert for an overlapping memcpy (-Wrestrict).
std::string code(const std::string& text) { return text.empty() ? "" : fmt::format("`{}`", cell(text)); }

std::string value_cell(const ResolvedSetting* s) { return s ? code(to_display(s->value)) : "—"; }

void print_table(std::ostream& out, const DiffView& view, const JobDiff& job) {
  std::string rows;
  for (const SettingDiff& s : job.settings) {
    const ResolvedSetting& origin = s.after ? *s.after : *s.before;
    rows += fmt::format("| {} | {} | {} | {} |\n", code(s.key), value_cell(s.before), value_cell(s.after),
                        cell(setting_origin(s.after ? view.head.sources : view.base.sources, origin)));
  }
  for (const DerivedDiff& d : job.derived) {
    if (job.status == JobStatus::Changed && !d.changed()) continue;
    auto number = [&](const std::optional<double>& v) { return v ? number_text(*v, d.integer) : std::string("—"); };
    rows += fmt::format("| {} | {} | {} | |\n", d.name, number(d.before), number(d.after));
  }
  if (rows.empty()) return;
  out << "| | before | after | where |\n|---|---|---|---|\n" << rows << '\n';
}

void print_findings(std::ostream& out, const SourceSet& sources, std::string_view title,
                    const std::vector<const Diagnostic*>& findings) {
  if (findings.empty()) return;
  out << title << ":\n\n";
  for (const Diagnostic* d : findings) {
    out << fmt::format("- **{}** {} {} ({})\n", severity_name(d->severity), code(line_location(sources, d->where)),
                       cell(d->message), code(d->rule));
  }
  out << '\n';
}

std::string side_name(const std::string& label) {
  return label == "WORKTREE" ? "the working tree" : code(label.substr(0, 12));
}

}  // namespace

void render_diff_markdown(std::ostream& out, const DiffView& view) {
  DiffCounts counts = count_jobs(view.report);
  out << fmt::format("### mblint diff: {} → {}\n\n", side_name(view.base.label), side_name(view.head.label));
  out << fmt::format("**{} changed**, {} added, {} removed · **{} new error{}** · {}\n\n", counts.changed,
                     counts.added, counts.removed, view.new_errors, view.new_errors == 1 ? "" : "s",
                     view.regressions.empty() ? std::string("no regressions")
                                              : fmt::format("**{} regression{}**", view.regressions.size(),
                                                            view.regressions.size() == 1 ? "" : "s"));
  for (const Regression& r : view.regressions) out << fmt::format("- {}: {}\n", code(job_location(*r.job)), r.message);
  if (!view.regressions.empty()) out << '\n';
  for (const JobDiff& job : view.report.jobs) {
    if (!shown(job, view.all)) continue;
    out << fmt::format("#### {} — {}\n\n", code(job_location(job)), job_status_name(job.status));
    print_table(out, view, job);
    print_findings(out, view.head.sources, "New findings", job.new_findings);
    print_findings(out, view.base.sources, "Fixed", job.fixed_findings);
  }
  print_findings(out, view.head.sources, "New findings outside the jobs", view.report.new_elsewhere);
  print_findings(out, view.base.sources, "Fixed outside the jobs", view.report.fixed_elsewhere);
}

}  // namespace mblint
