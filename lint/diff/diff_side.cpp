#include "lint/diff/diff_side.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/speed_model.h"

namespace mblint {

namespace {

double rounded(double value, double scale) { return std::round(value * scale) / scale; }

void add_integer(std::vector<DerivedValue>& out, const char* name, const std::optional<int64_t>& value) {
  if (value) out.push_back(DerivedValue{name, static_cast<double>(*value), true});
}

// Rounded as `estimate` prints them, so that noise below that is no change.
void add_memory(std::vector<DerivedValue>& out, const MemoryEstimate& e) {
  out.push_back(DerivedValue{"peak_memory_gib", rounded(e.total, 100), false});
  if (e.capacity > 0) out.push_back(DerivedValue{"memory_capacity_gib", rounded(e.capacity, 100), false});
  if (e.stages.size() < 2) return;
  for (const StageMemory& stage : e.stages) {
    out.push_back(DerivedValue{fmt::format("stage_{}_memory_gib", stage.stage), rounded(stage.total, 100), false});
  }
}

std::vector<DerivedValue> derived_values(const Job& job, const Derived& derived, const ResolvedJob& resolved) {
  std::vector<DerivedValue> out;
  add_integer(out, "world_size", resolved.world_size);
  for (const char* name : {"data_parallel_size", "expert_data_parallel_size", "microbatches"}) {
    for (const ResolvedSize& size : resolved.derived) {
      if (size.name == name) add_integer(out, name, size.integer);
    }
  }
  // Without a pipeline there is no bubble: 0, so that adding one is a rise the gate can see.
  std::optional<double> bubble = derived.bubble;
  if (!bubble && derived.pipeline_parallel.known() && *derived.pipeline_parallel == 1) bubble = 0.0;
  if (bubble) out.push_back(DerivedValue{"pipeline_bubble", rounded(*bubble, 1000), false});
  if (auto memory = estimate_memory(job, derived)) add_memory(out, *memory);
  if (auto speed = estimate_speed(job, derived)) {
    out.push_back(DerivedValue{"step_time_s", rounded(speed->step_time_s, 1000), false});
    out.push_back(DerivedValue{"tokens_per_sec_per_gpu", std::round(speed->tokens_per_sec_per_gpu), false});
  }
  return out;
}

// The job that owns a finding: in its primary file, the nearest launch at or
// above it; else the first job that read its file.
std::optional<size_t> owner(const std::vector<SideJob>& jobs, const std::vector<Job>& all, Span where) {
  std::optional<size_t> best;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = all[jobs[i].job];
    if (job.primary != where.file) continue;
    if (!best || job.launch_span.begin <= where.begin) best = i;
  }
  if (best) return best;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::vector<FileId>& files = all[jobs[i].job].files;
    if (std::find(files.begin(), files.end(), where.file) != files.end()) return i;
  }
  return std::nullopt;
}

}  // namespace

std::string line_location(const SourceSet& sources, Span where) {
  if (!where.valid() || where.file == kNoFile || where.file >= static_cast<FileId>(sources.files.size())) return "";
  const SourceFile& file = sources.files[where.file];
  return fmt::format("{}:{}", file.path, line_col(file, where.begin).line);
}

std::string written_at(const SourceSet& sources, const ResolvedSetting& setting) {
  for (auto via = setting.via.rbegin(); via != setting.via.rend(); ++via) {
    std::string at = line_location(sources, *via);
    if (!at.empty()) return at;
  }
  return line_location(sources, setting.where);
}

SideJobs side_jobs(const DiffSide& side) {
  SideJobs out;
  std::map<std::string, size_t> per_file;
  const LintResult& result = side.result;
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    const Job& job = result.jobs[i];
    if (job.primary == kNoFile || !is_resolved_job(job)) continue;
    SideJob one;
    one.job = i;
    one.file = side.sources.files[job.primary].path;
    one.position = per_file[one.file]++;
    one.resolved = resolve_job(job, result.derived[i], side.sources);
    one.line = line_col(side.sources.files[job.primary], one.resolved.where.begin).line;
    one.derived = derived_values(job, result.derived[i], one.resolved);
    out.jobs.push_back(std::move(one));
  }
  for (size_t d = 0; d < result.diagnostics.size(); ++d) {
    Span where = result.diagnostics[d].where;
    std::optional<size_t> job = where.valid() ? owner(out.jobs, result.jobs, where) : std::nullopt;
    if (job) out.jobs[*job].diagnostics.push_back(d);
    else out.unclaimed.push_back(d);
  }
  return out;
}

}  // namespace mblint
