// Quantities rules reason about, read from the resolved job with Megatron's
// defaults and Bridge's version-dependent resolution applied: the parallel
// sizes, world size, data-parallel sizes, microbatches, minimum GPU count,
// pipeline bubble (the share of the step the pipeline idles). Each keeps
// where its value came from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/facts/coverage.h"
#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

struct Quantity {
  std::optional<int64_t> value;
  std::string name;  // "context_parallel_size" (also "world size")
  std::string path;  // "model.context_parallel_size"; empty for derived quantities
  Provenance where;  // where it was set; empty when it was not written anywhere
  bool defaulted = false;  // Megatron's default, not written anywhere
  std::string how;         // how a derived or resolved value came about
  // How the value reads in notes when `value` encodes something else
  // (num_moe_experts null is kept as 0 = dense, but was written "null").
  std::string display;

  bool known() const { return value.has_value(); }
  int64_t operator*() const { return *value; }
};

struct Setting {
  std::optional<bool> value;
  std::string name;
  std::string path;
  Provenance where;
  bool defaulted = false;
};

struct Derived {
  // Parallel sizes (model.*). ETP is resolved per version; VPP 0 = none.
  Quantity tensor_parallel;
  Quantity pipeline_parallel;
  Quantity virtual_pipeline;
  Quantity context_parallel;
  Quantity expert_parallel;
  Quantity expert_tensor_parallel;
  Setting sequence_parallel;  // as configured; Bridge turns it off at TP = 1

  // Resources.
  Quantity nodes;
  Quantity gpus_per_node;
  Quantity world_size;
  const GpuType* gpu = nullptr;
  Quantity nvlink_domain;

  // Weight shards per tensor-parallel rank (GTP, Megatron-LM with
  // Megatron-Core >= 0.19: --tensor-parallel-num-weight-shards / TP); 1 where
  // there is no such setting. Each GTP rank is a rank of its own.
  Quantity weight_shard_groups;
  Quantity expert_weight_shard_groups;  // the same for the expert layers, against ETP

  // Derived.
  Quantity data_parallel;         // W / (TP·PP·CP·GTP): the model replicas (Megatron's data_parallel_size)
  Quantity batch_data_parallel;   // DP·GTP: the ranks that each take their own micro-batch
  Quantity expert_data_parallel;  // W / (ETP·EP·PP·expert GTP)
  Quantity microbatches;          // GBS / (MBS·DP·GTP)
  Quantity min_gpus;              // PP · lcm(TP·CP·GTP, EP·ETP·expert GTP)
  // The share of the step the pipeline idles: (PP−1) / (VPP·m + PP−1).
  // Unknown with a pipeline layout (its stage count is read by the rules).
  std::optional<double> bubble;

  // Model shape and batch.
  Quantity num_layers;
  Quantity hidden_size;
  Quantity num_attention_heads;
  Quantity num_query_groups;
  Quantity num_moe_experts;  // value 0 for a model known to be dense
  Quantity seq_length;       // model.seq_length (Bridge's dataset copy applied)
  Quantity global_batch_size;
  Quantity micro_batch_size;
  Quantity first_stage_layers;
  Quantity last_stage_layers;
  Setting account_for_embedding;
  Setting account_for_loss;
  std::optional<std::string> pipeline_layout;
  Provenance pipeline_layout_where;
  // A layout is set, possibly to a value mblint cannot know (a recipe that
  // computes it): the even-split checks do not apply then.
  bool pipeline_layout_set = false;

  // What the core checks needed and mblint does not know (lint/facts/coverage.h).
  Coverage coverage;
};

Derived derive(const Job& job);

// The pipeline bubble of the 1F1B schedule with `chunks` model chunks per
// rank (the virtual stages; 1 without interleaving) and `microbatches` per
// step (Narayanan et al. 2021): it lasts (PP−1)/(chunks·m) of the ideal,
// bubble-free step, so the pipeline idles (PP−1)/(chunks·m + PP−1) of the
// step it actually takes. 0 for PP 1.
double bubble_idle_share(int64_t pp, int64_t chunks, int64_t microbatches);
// The time the bubble adds, over the ideal step: (PP−1)/(chunks·m).
double bubble_overhead(int64_t pp, int64_t chunks, int64_t microbatches);

// The NVLink domain of `gpu` on nodes of `gpus_per_node` GPUs (0: unknown).
// A single-node NVLink system (HGX/DGX boards) connects only the GPUs of one
// node, so fewer GPUs per node make a smaller domain; a rack-scale NVLink
// system (GB200/GB300 NVL72, Vera Rubin) spans nodes and keeps its size.
int64_t nvlink_domain_size(const GpuType& gpu, int64_t gpus_per_node);
// Whether the GPU type's NVLink domain spans nodes (NVL72 racks).
bool nvlink_spans_nodes(const GpuType& gpu);

// Reading any config value the way the derived quantities are read: the
// effective value where it was set or, for a full dump, the dataclass
// default (defaulted = true). Rules use these for settings Derived does not
// name.
Quantity config_int(const Job& job, std::string_view path);
Setting config_bool(const Job& job, std::string_view path);
// A string setting; `where` filled when set. nullopt when absent, null or
// not a string.
struct TextSetting {
  std::optional<std::string> value;
  std::string name;
  std::string path;
  Provenance where;
  bool present = false;  // the key is in the config (possibly null or unknown)
};
TextSetting config_text(const Job& job, std::string_view path);
// The node itself (nullptr when absent); for lists and maps.
const ConfigValue* config_node(const Job& job, std::string_view path);

// "context_parallel_size set to 2 here", located where it was set.
Note note_for(const Quantity& quantity);
Note note_for(const Setting& setting);

// The span a diagnostic about this quantity points at (may be invalid).
Span span_for(const Quantity& quantity);
Span span_for(const Setting& setting);

// Of several inputs to a failed check, the one the user most likely just
// changed: the highest layer (command line > override > file > recipe).
const Quantity& most_specific(std::initializer_list<const Quantity*> candidates);

int layer_rank(Layer layer);

int64_t gcd64(int64_t a, int64_t b);
int64_t lcm64(int64_t a, int64_t b);

struct ProjectConfig;  // lint/resolve/project_config.h

// cluster.nvlink_domain replaces the domain derived from the GPU type
// (unless --gpu names another GPU on the command line).
void apply_config_nvlink_domain(const ProjectConfig& config, const LintOptions& command_line, Derived& derived);

}  // namespace mblint
