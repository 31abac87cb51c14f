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
#include "lint/facts/setting_reader.h"
#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

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
  // computes it), or a hybrid pattern cut into '|' pipeline segments: the
  // even-split checks do not apply then.
  bool pipeline_layout_set = false;

  // What the core checks needed and mblint does not know (lint/facts/coverage.h).
  Coverage coverage;
};

Derived derive(const Job& job);

// Whether Megatron Bridge's model provider turns calculate_per_token_loss on
// in its finalize when context_parallel_size > 1: the Qwen3-VL and Qwen3.5-VL
// providers (models/qwen_vl/qwen3_vl_provider.py, qwen35_vl_provider.py;
// from v0.5.0). ConfigContainer.validate finalizes the model before its own
// checks, so they see the rewritten value.
bool provider_sets_per_token_loss_with_cp(const Job& job);

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

// Of several inputs to a failed check, the one the user most likely just
// changed: the highest layer (command line > override > file > recipe).
const Quantity& most_specific(std::initializer_list<const Quantity*> candidates);

int64_t gcd64(int64_t a, int64_t b);
int64_t lcm64(int64_t a, int64_t b);

struct ProjectConfig;  // lint/resolve/project_config.h

// cluster.nvlink_domain replaces the domain derived from the GPU type
// (unless --gpu names another GPU on the command line).
void apply_config_nvlink_domain(const ProjectConfig& config, const LintOptions& command_line, Derived& derived);

}  // namespace mblint
