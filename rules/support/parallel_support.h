// Shared by the parallel group (world size and process groups, tensor
// parallelism and model shape, sequence and context parallelism): settings
// read with the defaults of the program that runs the job, the context-
// parallel communication types, integer lists, the environment the training
// processes see, and notes for values that are not integers.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/support/rule_support.h"

namespace mblint {

// Sequence parallelism as it runs: configured on and TP > 1 (Megatron Bridge
// and Megatron-LM both turn it off at TP = 1). nullopt when unknown.
std::optional<bool> sequence_parallel_runs(const Derived& d);


// "data-parallel size 4 = world size 8 / (TP 1 x PP 1 x CP 2)", for a
// derived quantity (no location).
Note derived_note(const Quantity& quantity);

// True when every one of these values is the recipe's own (NVIDIA's tuned
// choice): heuristic advice stays quiet about them.
bool chosen_by_recipe(std::initializer_list<const Provenance*> values);

// An integer list (hierarchical_context_parallel_sizes).
struct IntList {
  std::string name;
  std::string path;
  bool present = false;  // the key is in the config (possibly null or unknown)
  bool null = false;     // null / None (written, or a default)
  bool defaulted = false;  // the program's default, not written anywhere
  std::optional<std::vector<int64_t>> values;  // nullopt when null or not fully known
  Provenance where;
  std::string display;  // "[2, 4]"

  bool known() const { return values.has_value(); }
};

IntList read_int_list(const Job& job, std::string_view path);

// model.cp_comm_type: a string for every layer, a list with one entry per
// layer, or null (p2p).
struct CpCommType {
  bool known = false;    // the value (every entry) could be read
  bool absent = false;   // not set anywhere mblint can see (a recipe may set it)
  bool null = false;     // null / None: p2p
  bool is_list = false;  // a list of per-layer types
  bool not_text = false; // neither a string nor a list of strings (an int, a map)
  std::vector<std::string> types;      // the entries; {"p2p"} for null
  std::vector<Provenance> type_where;  // where each entry was written
  Provenance where;                    // the whole value
  std::string display;

  bool contains(std::string_view type) const;
};

CpCommType read_cp_comm_type(const Job& job);

// "a2a" for "a2a", "all_gather" and "allgather" are one type for TE.
std::string normalise_cp_comm_type(std::string_view type);

// model.gated_linear_unit (SwiGLU / GeGLU): the config's value, else the
// recipe's model (the catalog records it), else Megatron-LM's default (no
// --swiglu). Unknown otherwise.
Setting gated_linear_unit(const Job& job);

// The class name of a full dump's `dataset` (`GPTSFTDatasetConfig`), from its
// `_target_`; nullopt when the job does not say.
std::optional<std::string> dataset_class(const Job& job);

// Heads per tensor-parallel rank for queries and keys/values, the way
// Megatron-Core splits them (one replicated key/value head per rank when
// num_query_groups < TP; multi-latent attention has one key per query head).
struct HeadsPerRank {
  int64_t query = 0;
  int64_t key_value = 0;
};

std::optional<HeadsPerRank> heads_per_rank(const RuleContext& context);

bool multi_latent_attention(const Job& job);

// kv_channels is known to be unset, so the head dimension is hidden_size /
// num_attention_heads: null where written or by default (a dump's, Megatron-LM's
// argparse, a recipe's bare provider), or a catalog model whose provider does
// not set it. Where it was written null, if anywhere.
std::optional<Provenance> kv_channels_unset(const Job& job);

}  // namespace mblint

namespace mblint {

// DeepSeek V4's attention (Megatron-Core's experimental attention variant
// "dsv4_hybrid"). `on` when the job's variant is dsv4_hybrid: as written, or,
// when unwritten, the catalog records the recipe's model as DeepSeek V4
// (Megatron Bridge's DeepSeekV4Bridge sets the variant on its provider).
// `where` is the variant as written, else the recipe. The variant exists only
// on NVIDIA/Megatron-LM's dev branch (read at d48bd6be0a85; no release and
// neither main nor the older dsv4 branch carry deepseek_v4_hybrid_attention.py),
// so a job on anything else has no such variant and its checks do not apply.
struct Dsv4Attention {
  bool on = false;
  Provenance where;
};
Dsv4Attention dsv4_attention(const Job& job);

}  // namespace mblint
