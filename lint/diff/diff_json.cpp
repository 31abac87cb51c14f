// `mblint diff --format json`: {"version": 1, "base", "head", "jobs": [...], "summary": {...}}.
#include <nlohmann/json.hpp>

#include "lint/diff/diff_render.h"
#include "lint/report/diagnostic_json.h"
#include "lint/report/value_json.h"

namespace mblint {

namespace {

using Json = nlohmann::ordered_json;

Json number_json(const std::optional<double>& value, bool integer) {
  if (!value) return nullptr;
  return integer ? Json(static_cast<int64_t>(*value)) : Json(*value);
}

Json setting_json(const DiffView& view, const SettingDiff& s) {
  Json j = Json::object();
  j["key"] = s.key;
  j["before"] = s.before ? value_json(s.before->value) : Json(nullptr);
  j["after"] = s.after ? value_json(s.after->value) : Json(nullptr);
  auto at = [](const SourceSet& sources, const ResolvedSetting* setting) {
    std::string where = setting ? written_at(sources, *setting) : "";
    return where.empty() ? Json(nullptr) : Json(where);
  };
  j["before_at"] = at(view.base.sources, s.before);
  j["after_at"] = at(view.head.sources, s.after);
  // The layer says whose value it is where no line wrote it: "recipe", "default".
  j["before_layer"] = s.before ? Json(s.before->layer) : Json(nullptr);
  j["after_layer"] = s.after ? Json(s.after->layer) : Json(nullptr);
  return j;
}

Json findings_json(const SourceSet& sources, const std::vector<const Diagnostic*>& findings) {
  Json list = Json::array();
  for (const Diagnostic* d : findings) list.push_back(diagnostic_json(sources, *d));
  return list;
}

Json diagnostics_json(const DiffView& view, const std::vector<const Diagnostic*>& added,
                      const std::vector<const Diagnostic*>& fixed) {
  Json j = Json::object();
  j["new"] = findings_json(view.head.sources, added);
  j["fixed"] = findings_json(view.base.sources, fixed);
  return j;
}

Json job_json(const DiffView& view, const JobDiff& job) {
  const SideJob& side = job.after ? *job.after : *job.before;
  Json j = Json::object();
  j["file"] = side.file;
  j["line"] = side.line;
  j["status"] = std::string(job_status_name(job.status));
  Json settings = Json::array();
  for (const SettingDiff& s : job.settings) settings.push_back(setting_json(view, s));
  j["settings"] = std::move(settings);
  Json derived = Json::object();
  for (const DerivedDiff& d : job.derived) {
    derived[d.name] = {{"before", number_json(d.before, d.integer)}, {"after", number_json(d.after, d.integer)}};
  }
  j["derived"] = std::move(derived);
  j["diagnostics"] = diagnostics_json(view, job.new_findings, job.fixed_findings);
  return j;
}

Json regression_json(const Regression& r) {
  const SideJob& side = r.job->after ? *r.job->after : *r.job->before;
  Json j = Json::object();
  j["file"] = side.file;
  j["line"] = side.line;
  j["limit"] = r.limit;
  j["threshold"] = r.threshold;
  j["before"] = r.before ? Json(*r.before) : Json(nullptr);
  j["after"] = r.after;
  j["message"] = r.message;
  return j;
}

}  // namespace

void render_diff_json(std::ostream& out, const DiffView& view) {
  Json document = Json::object();
  document["version"] = 1;
  document["base"] = view.base.label;
  document["head"] = view.head.label;
  Json jobs = Json::array();
  for (const JobDiff& job : view.report.jobs) {
    if (shown(job, view.all)) jobs.push_back(job_json(view, job));
  }
  document["jobs"] = std::move(jobs);
  // Findings no job owns (a .mblint.yaml, a path that cannot be read).
  document["diagnostics"] = diagnostics_json(view, view.report.new_elsewhere, view.report.fixed_elsewhere);
  DiffCounts counts = count_jobs(view.report);
  Json summary = Json::object();
  summary["changed"] = counts.changed;
  summary["added"] = counts.added;
  summary["removed"] = counts.removed;
  summary["unchanged"] = counts.unchanged;
  summary["new_errors"] = view.new_errors;
  Json regressions = Json::array();
  for (const Regression& r : view.regressions) regressions.push_back(regression_json(r));
  summary["regressions"] = std::move(regressions);
  document["summary"] = std::move(summary);
  out << document.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace mblint
