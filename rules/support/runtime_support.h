// Helpers shared by the recompute, offloading, precision, optimizer, overlap
// and environment rules: reading settings with the defaults of the program
// that runs the job (a full Bridge dump's dataclass defaults, Megatron-LM's
// argparse defaults), the effective precision after Megatron Bridge applies
// `mixed_precision`, the environment the training processes see, and the
// CUDA-graph and recompute settings as Megatron-Core reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/facts/estimate.h"
#include "rules/support/rule_support.h"

namespace mblint {

// --- reading settings ---------------------------------------------------------

// A setting that exists in two sections Megatron Bridge keeps in sync by
// OR-ing them (use_distributed_optimizer in ddp and optimizer): true when
// either is true, false when both are known false.
Setting either_flag(const Job& job, std::string_view first, std::string_view second);

// A Megatron-LM command line that Megatron-LM's own script parses and
// validates as written: one of its entry scripts or a functional-test
// config, not a wrapper with a parser of its own (slime, Megatron-DeepSpeed),
// and no --yaml-cfg replacing the flags. The argument rules judge only these.
bool megatron_lm_validates_flags(const Job& job);

// Megatron-FSDP as configured (dist.use_megatron_fsdp or ddp.use_megatron_fsdp).
Setting megatron_fsdp(const Job& job);

// Whether the distributed optimizer runs: ddp and optimizer are OR-synced by
// Megatron Bridge (Megatron-LM sets both from one flag), and Megatron-FSDP
// switches it on.
Setting distributed_optimizer(const Job& job);

// Whether Megatron Bridge's CommOverlapConfig sets the data-parallel overlap
// settings of ddp and optimizer (a comm_overlap section and
// ddp.use_distributed_optimizer at start-up); nullopt when unknown (a
// recipe's comm_overlap section is not in the catalog).
std::optional<bool> comm_overlap_sets_dp_overlap(const Job& job);

// --- notes and fixes ----------------------------------------------------------

// Fixes that set a value where it was written. The edit is left out where
// an edit would not say the same thing: a Megatron-LM flag (`--fp16` has no
// value to rewrite), a preset, a recipe default, a shell variable.
Fix text_fix(const Job& job, const Choice& choice, std::string_view text, FixSafety safety = FixSafety::Unsafe);
Fix text_fix(const Job& job, const NameList& list, std::string_view text, FixSafety safety = FixSafety::Unsafe);
Fix flag_fix(const Job& job, const Setting& setting, bool value, FixSafety safety = FixSafety::Unsafe);
Fix int_fix(const Job& job, const Quantity& quantity, int64_t value, FixSafety safety = FixSafety::Unsafe);
// "set recompute_num_layers to null" (Bridge) / "drop --recompute-num-layers" (Megatron-LM).
Fix unset_fix(const Job& job, const std::string& path, const Provenance& where, FixSafety safety);
// A fix described in words only.
Fix advice_fix(std::string description, FixSafety safety = FixSafety::Unsafe);

// The first valid span of `candidates`, else where the job was launched or
// its recipe was selected: diagnostics are always located.
Span first_span(const Job& job, std::initializer_list<Span> candidates);

// The layer rank of where a value came from (for picking the primary
// location among several inputs).
int rank_of(const Provenance& where);

// "model.recompute_granularity" -> the dialect's spelling of the setting in
// messages: "--recompute-granularity" for Megatron-LM, the key otherwise.
std::string setting_name(const Job& job, std::string_view path);

// Text for the job's program: Megatron-LM users write flags, the others keys.
inline std::string for_dialect(const Job& job, std::string bridge, std::string megatron_lm) {
  return job.dialect == Dialect::MegatronLM ? std::move(megatron_lm) : std::move(bridge);
}

// --- precision ------------------------------------------------------------------

// The precision the model, optimizer and DDP run with. Under Megatron Bridge
// a `mixed_precision` preset or section overwrites every matching field of
// model/optimizer/ddp at start-up, so its values win over `model.*`.
struct Precision {
  bool from_mixed_precision = false;  // the values are mixed_precision's
  std::string preset;                 // the preset name, when one was used
  Provenance mixed_precision_where;   // where mixed_precision was set
  Setting bf16;
  Setting fp16;
  Choice fp8;         // "e4m3", "hybrid", None
  Choice fp8_recipe;  // "tensorwise", "delayed", "mxfp8", "blockwise", "custom"
  Setting fp8_param;  // keep parameters in fp8 (fp8_param_gather under Bridge)
  Setting fp8_param_gather;
  Setting first_last_layers_bf16;
  Quantity layers_at_start_in_bf16;
  Quantity layers_at_end_in_bf16;
  Choice fp4;  // "e2m1", None
  Setting fp4_param;
  Setting grad_reduce_in_fp32;
  Setting reuse_grad_buf_for_mxfp8_param_ag;
};

Precision effective_precision(const Job& job);

// What RuleContext keeps for the rules that run after the first to ask.
struct RuleMemo {
  std::optional<Precision> precision;
  std::optional<std::optional<MemoryEstimate>> estimate;  // job_estimate (rules/support/memory_support.h)
};

// The memo of the rule run over context.job, made on first use.
RuleMemo& memo_of(const RuleContext& context);

// effective_precision(context.job), worked out once per job.
const Precision& effective_precision(const RuleContext& context);

// --- environment --------------------------------------------------------------

// PYTORCH_CUDA_ALLOC_CONF holds expandable_segments:True (comma-separated options).
bool has_expandable_segments(const std::string& alloc_conf);

// --- CUDA graphs and recompute -----------------------------------------------

struct CudaGraphs {
  Choice impl;        // none, local, transformer_engine, full_iteration
  NameList modules;   // cuda_graph_modules / cuda_graph_scope, without "full"
  bool full_iteration = false;  // a whole-iteration graph (impl full_iteration, or local + full_iteration scope)
  bool enabled() const { return impl.is_set() && *impl.value != "none"; }
};

CudaGraphs cuda_graphs(const Job& job);

// Megatron-Core's default recompute_modules (["core_attn"]) when unset.
NameList recompute_modules(const Job& job);

// The recompute_modules names Megatron-Core `version` accepts, in its order.
std::vector<std::string_view> allowed_recompute_modules(const Version& version);

}  // namespace mblint
