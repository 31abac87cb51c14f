#include "lint/report/resolved_settings.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lint/facts/coverage.h"
#include "lint/facts/derived.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

// The layer a value came from, as `resolve` names it. A Megatron-LM command
// line is read as overrides; it is named for what the user wrote.
std::string layer_of(const Job& job, const Provenance& where) {
  if (job.dialect == Dialect::MegatronLM && where.layer == Layer::Override) return "Megatron-LM flag";
  return std::string(layer_name(where.layer));
}

// Where a value was written: the value itself, else the whole statement.
Span value_span(const Provenance& where) { return where.value.valid() ? where.value : primary_span(where); }

bool holds_unknown(const ConfigValue& value) {
  if (value.is_unknown()) return true;
  return std::any_of(value.items.begin(), value.items.end(), holds_unknown);
}

// The program that trains: Megatron-LM's entry script as written in the
// launch (`pretrain_gpt.py`), else the entry point mblint recognised.
std::string entry_of(const Job& job, const SourceSet& sources) {
  if (job.entry == EntryPoint::MegatronLM && job.launch_span.valid()) {
    const std::string& text = sources.files[job.launch_span.file].text;
    std::string_view launch = std::string_view(text).substr(job.launch_span.begin,
                                                            job.launch_span.end - job.launch_span.begin);
    size_t py = launch.find(".py");
    while (py != std::string_view::npos) {
      size_t end = py + 3;
      bool word_end = end == launch.size() || std::string_view(" \t\n\\\"';").find(launch[end]) != std::string_view::npos;
      if (word_end) {
        size_t begin = launch.find_last_of(" \t\n/\"'=", py);
        begin = begin == std::string_view::npos ? 0 : begin + 1;
        if (begin < py) return std::string(launch.substr(begin, end - begin));
      }
      py = launch.find(".py", end);
    }
  }
  return std::string(entry_point_name(job.entry));
}

std::string launcher_of(const Job& job) {
  if (job.cluster.requests.torchrun) return "torchrun";
  if (job.cluster.requests.srun) return "srun";
  if (job.entry == EntryPoint::TrainSh) return "train.sh";
  return "";
}

// The parallel sizes, shape and batch as Megatron will use them: with its
// defaults and Bridge's rewrites applied, which the config tree may not hold.
struct CoreValue {
  const Quantity* quantity;
  bool zero_is_none;  // VPP 0 is no interleaving; 0 experts is a dense model (both null)
};

std::vector<CoreValue> core_values(const Derived& d) {
  // num_query_groups is left to the config: Derived reads it as written and
  // does not model Megatron's default (the number of heads).
  return {{&d.tensor_parallel, false},     {&d.pipeline_parallel, false},  {&d.virtual_pipeline, true},
          {&d.context_parallel, false},    {&d.expert_parallel, false},    {&d.expert_tensor_parallel, false},
          {&d.num_layers, false},          {&d.hidden_size, false},        {&d.num_attention_heads, false},
          {&d.num_moe_experts, true},      {&d.seq_length, false},         {&d.global_batch_size, false},
          {&d.micro_batch_size, false}};
}

bool same_value(const ConfigValue& leaf, const CoreValue& core) {
  const Quantity& q = *core.quantity;
  if (core.zero_is_none && *q == 0) return leaf.is_null();
  std::optional<int64_t> written = as_int(&leaf);
  return written && *written == *q;
}

// The layer of a value the derived quantities computed: a default, a value
// Megatron or Bridge resolves at start-up (`how` says which), a product of
// other values, or the value as written.
std::string quantity_layer(const Job& job, const Quantity& q) {
  if (q.defaulted) return "default";
  if (!q.how.empty()) return "rewrite";
  if (!primary_span(q.where).valid()) return "derived";
  return layer_of(job, q.where);
}

// A core value the config tree does not hold as it will run.
ResolvedSetting setting_of(const Job& job, const CoreValue& core) {
  const Quantity& q = *core.quantity;
  ResolvedSetting s;
  s.key = q.path;
  s.value = core.zero_is_none && *q == 0 ? make_null() : make_int(*q);
  s.layer = quantity_layer(job, q);
  s.where = value_span(q.where);
  s.origin = !q.how.empty() ? q.how : q.where.origin;
  s.via = q.where.via;
  return s;
}

// Every known leaf of the config, then the core values in their effective
// form; unknown ones are left out (they are named in `unresolved`).
std::map<std::string, ResolvedSetting> settings_of(const Job& job, const Derived& d) {
  std::map<std::string, ResolvedSetting> settings;
  std::string path;
  for_each_leaf(job.config, path, [&](const std::string& key, const ConfigValue& value) {
    if (holds_unknown(value)) return;
    settings[key] = ResolvedSetting{key, value, layer_of(job, value.where), value_span(value.where),
                                    value.where.origin, value.where.via};
  });
  for (const CoreValue& core : core_values(d)) {
    const Quantity& q = *core.quantity;
    if (q.path.empty()) continue;
    if (!q.known()) {
      settings.erase(q.path);
      continue;
    }
    auto found = settings.find(q.path);
    if (found != settings.end() && same_value(found->second.value, core)) continue;
    settings[q.path] = setting_of(job, core);
  }
  return settings;
}

void add_allocation(ResolvedJob& out, const Job& job, const Derived& d) {
  auto add = [&](const char* key, const Quantity& q) {
    if (!q.known()) return;
    std::string layer = q.defaulted                          ? "default"
                        : primary_span(q.where).valid() ? layer_of(job, q.where)
                                                        : "derived";
    out.settings.push_back(ResolvedSetting{key, make_int(*q), layer, value_span(q.where), q.how, q.where.via});
  };
  add("nodes", d.nodes);
  add("gpus_per_node", d.gpus_per_node);
  add("world_size", d.world_size);
  out.nodes = d.nodes.value;
  out.gpus_per_node = d.gpus_per_node.value;
  out.world_size = d.world_size.value;
}

std::vector<ResolvedSize> derived_sizes(const Derived& d) {
  auto size = [](const char* name, const Quantity& q) {
    return ResolvedSize{name, q.value, std::nullopt, q.how};
  };
  std::vector<ResolvedSize> out = {size("data_parallel_size", d.data_parallel),
                                   size("expert_data_parallel_size", d.expert_data_parallel),
                                   size("microbatches", d.microbatches),
                                   size("min_gpus", d.min_gpus),
                                   size("nvlink_domain", d.nvlink_domain)};
  out.push_back(ResolvedSize{"pipeline_bubble", std::nullopt, d.bubble, ""});
  return out;
}

bool names(const std::vector<ResolvedUnknown>& unresolved, const Quantity& q) {
  return std::any_of(unresolved.begin(), unresolved.end(), [&](const ResolvedUnknown& u) {
    return u.what == q.path || std::find(u.unknown.begin(), u.unknown.end(), q.name) != u.unknown.end();
  });
}

// The coverage gaps, every other value written as something mblint cannot
// evaluate (`$LR`, `${oc.env:X}`), and any core value left out of the
// settings that neither names: nothing is left out unsaid.
std::vector<ResolvedUnknown> unresolved_of(const Job& job, const Derived& d) {
  std::vector<ResolvedUnknown> out;
  for (const CoverageGap& gap : d.coverage.gaps) out.push_back({gap.what, gap.why, gap.supply, gap.where, gap.unknown});
  std::string path;
  for_each_leaf(job.config, path, [&](const std::string& key, const ConfigValue& value) {
    if (!holds_unknown(value)) return;
    Span where = value_span(value.where);
    bool named = std::any_of(out.begin(), out.end(), [&](const ResolvedUnknown& u) {
      return where.valid() && u.where == where;
    });
    if (named) return;
    std::string written = value.is_unknown() ? value.text : to_display(value);
    out.push_back({key, fmt::format("written as `{}`, which is not known here", written),
                   fmt::format("give it a literal value, or pass --set {}=VALUE", key), where, {key}});
  });
  for (const CoreValue& core : core_values(d)) {
    const Quantity& q = *core.quantity;
    if (q.known() || q.path.empty() || names(out, q)) continue;
    out.push_back({q.path, q.how.empty() ? "mblint cannot determine the value the job runs with" : q.how,
                   fmt::format("pass --set {}=VALUE", q.path), span_for(q), {q.name}});
  }
  return out;
}

}  // namespace

bool is_resolved_job(const Job& job) { return is_checked_job(job) && job.trains; }

std::string resolved_layer(const Job& job, const Provenance& where) { return layer_of(job, where); }

const ResolvedSetting* find_setting(const ResolvedJob& job, std::string_view key) {
  for (const ResolvedSetting& s : job.settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

ResolvedJob resolve_job(const Job& job, const Derived& derived, const SourceSet& sources) {
  ResolvedJob out;
  out.where = job.launch_span.valid() ? job.launch_span : make_span(job.primary, 0, 0);
  out.launcher = launcher_of(job);
  out.entry = entry_of(job, sources);
  out.dialect = std::string(dialect_name(job.dialect));
  out.recipe = job.recipe ? std::string(job.recipe->name) : job.recipe_name;
  add_allocation(out, job, derived);
  for (auto& [key, setting] : settings_of(job, derived)) out.settings.push_back(std::move(setting));
  out.derived = derived_sizes(derived);
  out.unresolved = unresolved_of(job, derived);
  return out;
}

}  // namespace mblint
