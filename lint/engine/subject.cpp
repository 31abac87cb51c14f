#include "lint/engine/subject.h"

#include <optional>
#include <vector>

namespace mblint {

namespace {

struct Candidate {
  Span span;
  std::string path;
  // 0 when the key as written names this path ("dataset.seq_length" for
  // dataset.seq_length); 1 for a copy elsewhere (Bridge copying it into
  // model.seq_length keeps the provenance). Lower wins among equal spans.
  int rank = 0;
};

struct Collector {
  const SourceSet& sources;
  std::vector<Candidate> out;

  int rank(const Provenance& where, const std::string& path) const {
    if (!where.key.valid() || where.key.file >= static_cast<FileId>(sources.files.size())) return 1;
    std::string_view key = std::string_view(sources.files[where.key.file].text).substr(where.key.begin, where.key.end - where.key.begin);
    while (!key.empty() && (key.front() == '+' || key.front() == '~')) key.remove_prefix(1);
    bool names_it = !key.empty() && path.ends_with(key) &&
                    (path.size() == key.size() || path[path.size() - key.size() - 1] == '.');
    return names_it ? 0 : 1;
  }

  void add(const Provenance& where, const std::string& path) { add_ranked(where, path, rank(where, path)); }

  void add_ranked(const Provenance& where, const std::string& path, int r) {
    for (Span span : {where.statement, where.value, where.key, where.interpolated_at}) {
      if (span.valid()) out.push_back({span, path, r});
    }
    for (Span span : where.via) {
      if (span.valid()) out.push_back({span, path, r});
    }
  }
};

// Current values before the ones they replaced, parents before children.
void collect(const ConfigValue& node, const std::string& path, Collector& out) {
  if (!path.empty()) {
    out.add(node.where, path);
    for (const Provenance& earlier : node.earlier) out.add(earlier, path);
  }
  if (node.is_map()) {
    for (const MapEntry& entry : node.entries) collect(entry.value, path.empty() ? entry.key : path + "." + entry.key, out);
  } else if (node.is_list()) {
    for (size_t i = 0; i < node.items.size(); ++i) collect(node.items[i], path + "." + std::to_string(i), out);
  }
}

std::vector<Candidate> candidates(const Job& job, const SourceSet& sources) {
  Collector out{sources, {}};
  collect(job.config, "", out);
  const Cluster& c = job.cluster;
  out.add(c.nodes.where, "cluster.nodes");
  out.add(c.gpus_per_node.where, "cluster.gpus_per_node");
  out.add(c.world_size.where, "cluster.world_size");
  out.add(c.gpu_where, "cluster.gpu");
  const LauncherRequests& r = c.requests;
  out.add(r.torchrun_nnodes.where, "cluster.nodes");
  out.add(r.torchrun_nproc_per_node.where, "cluster.gpus_per_node");
  out.add(r.slurm_nodes.where, "cluster.nodes");
  out.add(r.slurm_ntasks.where, "cluster.world_size");
  out.add(r.slurm_ntasks_per_node.where, "cluster.gpus_per_node");
  out.add(r.slurm_gpus_per_node.where, "cluster.gpus_per_node");
  // Every value the recipe sets carries its name's span: a finding placed
  // there is about the recipe, not the first of those values.
  out.add_ranked(job.recipe_where, "recipe", -1);
  for (const EnvSetting& env : job.env) out.add(env.where, "env." + env.name);
  return std::move(out.out);
}

bool contains(Span outer, Span inner) {
  return outer.file == inner.file && outer.begin <= inner.begin && inner.end <= outer.end;
}

// Exact spans first, then the smallest containing span; the lower rank, then
// the first found, among equals.
std::string best_match(const std::vector<Candidate>& all, Span where) {
  const Candidate* best = nullptr;
  auto better = [&](const Candidate& c) {
    if (!best) return true;
    bool exact = c.span == where, best_exact = best->span == where;
    if (exact != best_exact) return exact;
    uint32_t size = c.span.end - c.span.begin, best_size = best->span.end - best->span.begin;
    if (size != best_size) return size < best_size;
    return c.rank < best->rank;
  };
  for (const Candidate& c : all) {
    if (contains(c.span, where) && better(c)) best = &c;
  }
  return best ? best->path : std::string();
}

}  // namespace

std::string subject_at(const Job& job, const SourceSet& sources, Span where) {
  if (!where.valid()) return {};
  return best_match(candidates(job, sources), where);
}

void fill_subjects(const Job& job, const SourceSet& sources, std::span<Diagnostic> diagnostics) {
  std::optional<std::vector<Candidate>> all;
  for (Diagnostic& d : diagnostics) {
    if (!d.subject.empty() || !d.where.valid()) continue;
    if (!all) all = candidates(job, sources);
    d.subject = best_match(*all, d.where);
  }
}

}  // namespace mblint
