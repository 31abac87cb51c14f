// What the diff renderers share.
#include "lint/diff/diff_render.h"

#include <cmath>

#include <fmt/format.h>

namespace mblint {

std::string number_text(double value, bool integer) {
  if (integer) return std::to_string(static_cast<int64_t>(std::llround(value)));
  std::string text = fmt::format("{:.3f}", value);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string job_location(const JobDiff& job) {
  const SideJob& side = job.after ? *job.after : *job.before;
  return fmt::format("{}:{}", side.file, side.line);
}

std::string setting_origin(const SourceSet& sources, const ResolvedSetting& setting) {
  std::string where = written_at(sources, setting);
  return where.empty() ? setting.layer : fmt::format("{} ({})", where, setting.layer);
}

bool shown(const JobDiff& job, bool all) { return all || job.status != JobStatus::Unchanged; }

}  // namespace mblint
