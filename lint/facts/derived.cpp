#include "lint/facts/derived.h"

#include <numeric>

#include <fmt/format.h>

#include "lint/model/hybrid_pattern.h"
#include "lint/model/schema.h"
#include "lint/resolve/project_config.h"

namespace mblint {

int64_t gcd64(int64_t a, int64_t b) { return std::gcd(a, b); }
int64_t lcm64(int64_t a, int64_t b) { return a == 0 || b == 0 ? 0 : a / std::gcd(a, b) * b; }

double bubble_overhead(int64_t pp, int64_t chunks, int64_t microbatches) {
  if (pp <= 1) return 0.0;
  return static_cast<double>(pp - 1) / static_cast<double>(std::max<int64_t>(chunks, 1) * std::max<int64_t>(microbatches, 1));
}

double bubble_idle_share(int64_t pp, int64_t chunks, int64_t microbatches) {
  if (pp <= 1) return 0.0;
  double work = static_cast<double>(std::max<int64_t>(chunks, 1) * std::max<int64_t>(microbatches, 1));
  return static_cast<double>(pp - 1) / (work + static_cast<double>(pp - 1));
}

bool nvlink_spans_nodes(const GpuType& gpu) { return gpu.nvlink_domain > gpu.gpus_per_node; }

int64_t nvlink_domain_size(const GpuType& gpu, int64_t gpus_per_node) {
  if (nvlink_spans_nodes(gpu) || gpus_per_node <= 0) return gpu.nvlink_domain;
  return std::min<int64_t>(gpu.nvlink_domain, gpus_per_node);
}

namespace {

// An optional size (VPP): null or 1 means "none" (0 here).
Quantity read_optional_size(const Job& job, std::string_view path) {
  Quantity q = config_int(job, path);
  const ConfigValue* node = find_path(job.config, path);
  bool null_value = (node && node->is_null()) || (!node && q.defaulted && !q.value);
  if (null_value) {
    q.value = 0;
    q.display = node ? "null" : "None";
  } else if (q.value && *q.value == 1) {
    q.value = 0;  // Megatron treats a single virtual stage as none
    q.display = "1";
  }
  return q;
}

Quantity from_located(const LocatedInt& located, std::string name) {
  Quantity q;
  q.name = std::move(name);
  q.value = located.value;
  q.where = located.where;
  q.how = located.where.origin.empty() ? located.unknown_because : located.where.origin;
  return q;
}

Quantity derived_quantity(std::string name, std::optional<int64_t> value, std::string how) {
  Quantity q;
  q.name = std::move(name);
  q.value = value;
  q.how = std::move(how);
  return q;
}

void resolve_expert_tensor_parallel(const Job& job, Derived& d) {
  Quantity& etp = d.expert_tensor_parallel;
  if (etp.known()) return;
  const ConfigValue* node = find_path(job.config, "model.expert_tensor_parallel_size");
  if (node && !node->is_null()) return;  // unknown, not unset
  if (!node && !job.recipe && !job.config_complete) return;  // unset somewhere we cannot see
  if (!d.expert_parallel.known() || !d.tensor_parallel.known()) return;
  bool bridge_sets_one = job.versions.bridge >= Version{0, 6, 0} && *d.expert_parallel > 1;
  if (bridge_sets_one) {
    etp.value = 1;
    etp.how = "expert_tensor_parallel_size is unset: Megatron Bridge >= 0.6 uses 1 when "
              "expert_model_parallel_size > 1";
  } else {
    etp.value = *d.tensor_parallel;
    etp.how = fmt::format("expert_tensor_parallel_size is unset: {} uses tensor_model_parallel_size ({})",
                          *d.expert_parallel > 1 ? "Megatron Bridge < 0.6" : "Megatron-Core",
                          *d.tensor_parallel);
  }
  etp.where = node ? node->where : Provenance{};
}

// Megatron Bridge's Qwen3VLMoEModelProvider.finalize turns sequence
// parallelism on whenever tensor_model_parallel_size > 1
// (models/qwen_vl/qwen3_vl_provider.py, every release from v0.2.0 to
// 067f987df03b; no other provider forces it). The provider builds the
// Qwen3-VL MoE models: the catalog's qwen3_vl_* models with experts, or a
// dump's _target_.

// The provider class a Bridge job's model is built by matches `provider`
// ("Qwen3VL"): a dump's _target_ names it; a recipe's catalog model key
// starts with `model_prefix` ("qwen3_vl_").
bool built_by(const Job& job, std::string_view provider, std::string_view model_prefix) {
  if (job.dialect != Dialect::Bridge) return false;
  if (std::optional<std::string> target = config_text(job, "model._target_").value) {
    return target->find(provider) != std::string::npos;
  }
  const ModelDims* dims = job.recipe ? job.recipe->dims : nullptr;
  return dims && std::string_view(dims->key).rfind(model_prefix, 0) == 0;
}

// Megatron Bridge's Qwen3VLMoEModelProvider.finalize turns sequence
// parallelism on whenever tensor_model_parallel_size > 1
// (models/qwen_vl/qwen3_vl_provider.py, every release from v0.2.0 to
// 067f987df03b; no other provider forces it).
void resolve_sequence_parallel(const Job& job, Derived& d) {
  Setting& sp = d.sequence_parallel;
  if (!sp.value || *sp.value || !d.tensor_parallel.known() || *d.tensor_parallel <= 1) return;
  if (!built_by(job, "Qwen3VLMoEModelProvider", "qwen3_vl_")) return;
  // Of the catalog's qwen3_vl_* models, those with experts are the MoE provider's (a dump names its class).
  const ModelDims* dims = job.recipe ? job.recipe->dims : nullptr;
  if (!find_path(job.config, "model._target_") && !(dims && dims->num_moe_experts > 0)) return;
  sp.value = true;
  sp.where.origin = "Megatron Bridge's Qwen3VLMoEModelProvider.finalize sets sequence_parallel = true because "
                    "tensor_model_parallel_size > 1";
}

void derive_resources(const Job& job, Derived& d) {
  d.nodes = from_located(job.cluster.nodes, "nodes");
  d.gpus_per_node = from_located(job.cluster.gpus_per_node, "GPUs per node");
  if (job.cluster.world_size.value) {
    d.world_size = from_located(job.cluster.world_size, "world size");
  } else if (d.nodes.known() && d.gpus_per_node.known()) {
    d.world_size = derived_quantity("world size", *d.nodes * *d.gpus_per_node,
                                    fmt::format("{} node{} x {} GPU{} per node", *d.nodes,
                                                *d.nodes == 1 ? "" : "s", *d.gpus_per_node,
                                                *d.gpus_per_node == 1 ? "" : "s"));
  }
  d.gpu = job.cluster.gpu.empty() ? nullptr : find_gpu(job.cluster.gpu);
  d.nvlink_domain.name = "NVLink domain";
  if (d.gpu && d.gpus_per_node.known() && nvlink_domain_size(*d.gpu, *d.gpus_per_node) < d.gpu->nvlink_domain) {
    // An HGX board's NVLink stops at the node: 4 GPUs per node are a domain of 4.
    d.nvlink_domain.value = nvlink_domain_size(*d.gpu, *d.gpus_per_node);
    d.nvlink_domain.where = d.gpus_per_node.where;
    d.nvlink_domain.how = fmt::format("{} NVLink connects the GPUs of one node only: {} GPU{} per node", d.gpu->display,
                                      *d.gpus_per_node, *d.gpus_per_node == 1 ? "" : "s");
  } else if (d.gpu) {
    d.nvlink_domain.value = d.gpu->nvlink_domain;
    d.nvlink_domain.where = job.cluster.gpu_where;
    d.nvlink_domain.how = fmt::format("{} has {} GPUs per NVLink domain", d.gpu->display, d.gpu->nvlink_domain);
  } else if (d.gpus_per_node.known()) {
    d.nvlink_domain.value = *d.gpus_per_node;
    d.nvlink_domain.where = d.gpus_per_node.where;
    d.nvlink_domain.how = fmt::format(
        "no GPU type given: assuming each node ({} GPUs) is one NVLink domain; pass --gpu for NVL72 racks",
        *d.gpus_per_node);
  }
}

// GTP = shards / TP for Megatron-LM launches on Megatron-Core >= 0.19
// (`--tensor-parallel-num-weight-shards`; validate_args folds it into the
// model-parallel size). Megatron Bridge does not pass it to
// initialize_model_parallel, and older releases have no such flag: 1 there.
Quantity weight_shards(const Job& job, std::string_view path, const Quantity& tp, std::string name) {
  Quantity q;
  q.name = std::move(name);
  q.value = 1;
  bool applies = job.dialect == Dialect::MegatronLM && job.versions.megatron_core >= Version{0, 19, 0};
  const ConfigValue* node = find_path(job.config, path);
  if (!applies || !node || node->is_null()) return q;
  Quantity shards = config_int(job, path);
  q.value.reset();
  q.where = shards.where;
  // A count that is no multiple of TP is tp-weight-shards-invalid's to report.
  if (!shards.known() || !tp.known() || *tp <= 0 || *shards < *tp || *shards % *tp != 0) return q;
  q.value = *shards / *tp;
  q.how = fmt::format("{} {} = {} {} / {} {}", q.name, *q.value, shards.name, *shards, tp.name, *tp);
  return q;
}

std::string gtp_factor(const Quantity& gtp, std::string_view label) {
  return gtp.known() && *gtp > 1 ? fmt::format(" x {} {}", label, *gtp) : std::string();
}

void derive_sizes(Derived& d) {
  auto& tp = d.tensor_parallel;
  auto& pp = d.pipeline_parallel;
  auto& cp = d.context_parallel;
  auto& ep = d.expert_parallel;
  auto& etp = d.expert_tensor_parallel;
  auto& gtp = d.weight_shard_groups;
  auto& egtp = d.expert_weight_shard_groups;
  auto& w = d.world_size;
  d.data_parallel.name = "data-parallel size";
  d.expert_data_parallel.name = "expert data-parallel size";
  d.microbatches.name = "microbatches per step";
  d.min_gpus.name = "minimum GPU count";
  bool dense_known = tp.known() && pp.known() && cp.known() && gtp.known() && *tp > 0 && *pp > 0 && *cp > 0 &&
                     *gtp > 0;
  if (dense_known && w.known() && *w % (*tp * *pp * *cp * *gtp) == 0) {
    d.data_parallel.value = *w / (*tp * *pp * *cp * *gtp);
    d.data_parallel.how = fmt::format("world size {} / (TP {} x PP {} x CP {}{})", *w, *tp, *pp, *cp, gtp_factor(gtp, "GTP"));
  }
  d.batch_data_parallel = d.data_parallel;
  if (d.data_parallel.known() && *gtp > 1) {
    d.batch_data_parallel.value = *d.data_parallel * *gtp;
    d.batch_data_parallel.how = fmt::format("{} replicas ({}) x GTP {}: each weight-shard rank takes its own "
                                            "micro-batch",
                                            *d.data_parallel, d.data_parallel.how, *gtp);
  }
  bool expert_known = ep.known() && etp.known() && pp.known() && egtp.known() && *ep > 0 && *etp > 0 && *pp > 0 &&
                      *egtp > 0;
  if (expert_known && w.known() && *w % (*etp * *ep * *pp * *egtp) == 0) {
    d.expert_data_parallel.value = *w / (*etp * *ep * *pp * *egtp);
    d.expert_data_parallel.how = fmt::format("world size {} / (ETP {} x EP {} x PP {}{})", *w, *etp, *ep, *pp,
                                             gtp_factor(egtp, "expert GTP"));
  }
  if (dense_known && expert_known) {
    d.min_gpus.value = *pp * lcm64(*tp * *cp * *gtp, *ep * *etp * *egtp);
    d.min_gpus.how = fmt::format("PP {} x lcm(TP {} x CP {}{}, EP {} x ETP {}{})", *pp, *tp, *cp, gtp_factor(gtp, "GTP"),
                                 *ep, *etp, gtp_factor(egtp, "expert GTP"));
  }
  auto& gbs = d.global_batch_size;
  auto& mbs = d.micro_batch_size;
  auto& dp = d.batch_data_parallel;
  if (gbs.known() && mbs.known() && dp.known() && *mbs > 0 && *dp > 0 && *gbs % (*mbs * *dp) == 0) {
    d.microbatches.value = *gbs / (*mbs * *dp);
    d.microbatches.how = fmt::format("global batch {} / (micro batch {} x DP {})", *gbs, *mbs, *dp);
  }
  // With a layout the virtual stages are its stage count, which the rules read.
  if (pp.known() && *pp > 1 && d.microbatches.known() && *d.microbatches > 0 && d.virtual_pipeline.known() &&
      !d.pipeline_layout_set) {
    d.bubble = bubble_idle_share(*pp, std::max<int64_t>(1, *d.virtual_pipeline), *d.microbatches);
  }
}

}  // namespace

Derived derive(const Job& job) {
  Derived d;
  d.tensor_parallel = config_int(job, "model.tensor_model_parallel_size");
  d.pipeline_parallel = config_int(job, "model.pipeline_model_parallel_size");
  d.context_parallel = config_int(job, "model.context_parallel_size");
  d.expert_parallel = config_int(job, "model.expert_model_parallel_size");
  d.expert_tensor_parallel = config_int(job, "model.expert_tensor_parallel_size");
  d.virtual_pipeline = read_optional_size(job, "model.virtual_pipeline_model_parallel_size");
  d.sequence_parallel = config_bool(job, "model.sequence_parallel");
  resolve_expert_tensor_parallel(job, d);
  resolve_sequence_parallel(job, d);

  d.num_layers = config_int(job, "model.num_layers");
  d.hidden_size = config_int(job, "model.hidden_size");
  d.num_attention_heads = config_int(job, "model.num_attention_heads");
  d.num_query_groups = config_int(job, "model.num_query_groups");
  d.num_moe_experts = config_int(job, "model.num_moe_experts");
  // null (written, or the dataclass default of a dump) means a dense model.
  const ConfigValue* experts = find_path(job.config, "model.num_moe_experts");
  bool dump_default = !experts && job.config_complete;
  if ((experts && experts->is_null()) || (dump_default && !d.num_moe_experts.known())) {
    d.num_moe_experts.value = 0;
    d.num_moe_experts.display = dump_default ? "None" : "null";
    d.num_moe_experts.defaulted = dump_default;
  }
  d.seq_length = config_int(job, "model.seq_length");
  if (!find_path(job.config, "model.seq_length")) d.seq_length = config_int(job, "dataset.seq_length");
  d.global_batch_size = config_int(job, "train.global_batch_size");
  d.micro_batch_size = config_int(job, "train.micro_batch_size");
  d.first_stage_layers = config_int(job, "model.num_layers_in_first_pipeline_stage");
  d.last_stage_layers = config_int(job, "model.num_layers_in_last_pipeline_stage");
  d.account_for_embedding = config_bool(job, "model.account_for_embedding_in_pipeline_split");
  d.account_for_loss = config_bool(job, "model.account_for_loss_in_pipeline_split");
  if (const ConfigValue* layout = find_path(job.config, "model.pipeline_model_parallel_layout");
      layout && !layout->is_null()) {
    d.pipeline_layout_set = true;
    d.pipeline_layout_where = layout->where;
    if (layout->kind == ValueKind::String) d.pipeline_layout = layout->text;
  }
  // A hybrid pattern's '|' segments place every layer too: Megatron-Core
  // takes segment v x PP + rank for virtual stage v of that rank and asks no
  // even split (hybrid_layer_allocation.py select_pipeline_segment, and
  // validate_args skips its divisibility check; core_v0.17.0).
  for (const char* path : {"model.hybrid_layer_pattern", "model.hybrid_override_pattern"}) {
    const ConfigValue* pattern = find_path(job.config, path);
    if (pattern && pattern->kind == ValueKind::String && split_hybrid_pattern(pattern->text).segments.size() > 1) {
      d.pipeline_layout_set = true;
    }
  }

  derive_resources(job, d);
  d.weight_shard_groups = weight_shards(job, "model.tensor_parallel_num_weight_shards", d.tensor_parallel,
                                        "weight-shard (GTP) size");
  d.expert_weight_shard_groups = weight_shards(job, "model.expert_tensor_parallel_num_weight_shards",
                                               d.expert_tensor_parallel, "expert weight-shard (GTP) size");
  derive_sizes(d);
  d.coverage = job_coverage(job, d);
  return d;
}

const Quantity& most_specific(std::initializer_list<const Quantity*> candidates) {
  const Quantity* best = *candidates.begin();
  for (const Quantity* q : candidates) {
    bool located = primary_span(q->where).valid();
    bool best_located = primary_span(best->where).valid();
    if (located && (!best_located || layer_rank(q->where.layer) > layer_rank(best->where.layer))) best = q;
  }
  return *best;
}

void apply_config_nvlink_domain(const ProjectConfig& config, const LintOptions& command_line, Derived& derived) {
  // --gpu names another cluster: its domain comes from the GPU type.
  if (!config.nvlink_domain || command_line.gpu) return;
  derived.nvlink_domain.value = std::stoll(config.nvlink_domain->text);
  derived.nvlink_domain.where = Provenance{};
  derived.nvlink_domain.where.value = config.nvlink_domain->span;
  derived.nvlink_domain.where.statement = config.nvlink_domain->span;
  derived.nvlink_domain.how.clear();  // the note reads "NVLink domain set to N here"
  derived.nvlink_domain.defaulted = false;
}

bool provider_sets_per_token_loss_with_cp(const Job& job) {
  if (job.versions.bridge < Version{0, 5, 0}) return false;
  return built_by(job, "Qwen3VL", "qwen3_vl_") || built_by(job, "Qwen35VL", "qwen35_vl_");
}

}  // namespace mblint
