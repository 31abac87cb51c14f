// The allgather token dispatcher gathers fixed-shape token blocks; it cannot
// handle sequence lengths that change between microbatches.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kAllgatherDispatcherVariableSeqLengths;

namespace {

using namespace moe;

// The dispatcher; for a recipe of a dense model, which never sets one (only
// the MoE models' providers and bridges do), Megatron-Core's default.
Field dispatcher_of(const Job& job) {
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  if (dispatcher.present || !job.recipe) return dispatcher;
  const ConfigValue* experts = find_path(job.config, "model.num_moe_experts");
  bool dense_recipe = experts && experts->is_null() && experts->where.layer == Layer::Recipe;
  if (!dense_recipe) return dispatcher;
  dispatcher.value = make_string("allgather");
  dispatcher.value.where.layer = Layer::SchemaDefault;
  dispatcher.present = true;
  dispatcher.defaulted = true;
  dispatcher.default_from =
      fmt::format("Megatron-Core's default: recipe {} builds a dense model and sets no dispatcher", job.recipe_name);
  return dispatcher;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field variable = read_field(job, "model.variable_seq_lengths");
  Field dispatcher = dispatcher_of(job);
  if (variable.boolean() != true || dispatcher.text() != "allgather") return;
  report(
      out,
      diagnostic_at(
          kAllgatherDispatcherVariableSeqLengths,
          "variable_seq_lengths is true with the allgather token dispatcher: Megatron-Core raises ValueError (\"Token "
          "dispatcher type: allgather does not support variable sequence length, please use alltoall dispatcher "
          "instead.\")",
          {&variable, &dispatcher}),
      "use moe_token_dispatcher_type alltoall", {set_field_fix(dispatcher, "alltoall")});
}

}  // namespace

extern const RuleInfo kAllgatherDispatcherVariableSeqLengths = {
    .code = "MB714",
    .name = "allgather-dispatcher-variable-seq-lengths",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "the allgather token dispatcher does not support variable sequence lengths",
    .doc = R"md(`variable_seq_lengths` tells Megatron-Core that sequence lengths change between
microbatches (packed or multimodal inputs), so pipeline stages exchange shapes dynamically. The
`allgather` token dispatcher — the Megatron default — cannot handle that: `TransformerConfig.
__post_init__` raises `ValueError("Token dispatcher type: allgather does not support variable
sequence length, please use alltoall dispatcher instead.")` when the model config is finalized.

The check is not guarded by the model having experts (`megatron/core/transformer/transformer_config.py`,
every release from core_v0.12.0, where `alltoall_seq` was rejected too): a dense model keeps the
default `allgather`, so `variable_seq_lengths: true` on a dense recipe such as Llama 3 8B raises as
well. Recipes of dense models never set a dispatcher (only the MoE providers and bridges set
`alltoall` or `flex`), so mblint uses the default for them; for an MoE recipe an unset dispatcher
is unknown (its provider may set one).

Megatron Bridge turns `variable_seq_lengths` on by itself for in-batch packing with pipeline
parallelism, but only after that check, so that case is not an error; the rule fires when the
config itself sets it (some providers and recipes do).)md",
    .bad = {"override.yaml",
     "model:\n  variable_seq_lengths: true\n  moe_token_dispatcher_type: allgather\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  variable_seq_lengths: true\n  moe_token_dispatcher_type: alltoall\n"},
    .check = check,
    .checks = "MC G18",
};

}  // namespace mblint
