// The allgather token dispatcher gathers fixed-shape token blocks; it cannot
// handle sequence lengths that change between microbatches.
#include "rules/moe_support.h"

namespace mblint {

extern const RuleInfo kAllgatherDispatcherVariableSeqLengths;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field variable = read_field(job, "model.variable_seq_lengths");
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  if (variable.boolean() != true || dispatcher.text() != "allgather") return;
  Diagnostic diag = diagnostic_at(
      kAllgatherDispatcherVariableSeqLengths,
      "variable_seq_lengths is true with the allgather token dispatcher: Megatron-Core raises ValueError (\"Token "
      "dispatcher type: allgather does not support variable sequence length, please use alltoall dispatcher "
      "instead.\")",
      {&variable, &dispatcher});
  diag.help = "use moe_token_dispatcher_type alltoall";
  diag.fixes.push_back(set_field_fix(dispatcher, "alltoall"));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kAllgatherDispatcherVariableSeqLengths = {
    "MB714",
    "allgather-dispatcher-variable-seq-lengths",
    Severity::Error,
    "the allgather token dispatcher does not support variable sequence lengths",
    R"md(`variable_seq_lengths` tells Megatron-Core that sequence lengths change between
microbatches (packed or multimodal inputs), so pipeline stages exchange shapes dynamically. The
`allgather` token dispatcher — the Megatron default — cannot handle that: `TransformerConfig.
__post_init__` raises `ValueError("Token dispatcher type: allgather does not support variable
sequence length, please use alltoall dispatcher instead.")` when the model config is finalized.

Megatron Bridge turns `variable_seq_lengths` on by itself for in-batch packing with pipeline
parallelism, but only after that check, so that case is not an error; the rule fires when the
config itself sets it (some providers and recipes do).)md",
    {"override.yaml",
     "model:\n  variable_seq_lengths: true\n  moe_token_dispatcher_type: allgather\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    {"override.yaml",
     "model:\n  variable_seq_lengths: true\n  moe_token_dispatcher_type: alltoall\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    check,
    "MC G18",
};

}  // namespace mblint
