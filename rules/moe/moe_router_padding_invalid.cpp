// Router padding pads each expert's token count to the FP8/FP4 GEMM
// alignment: it needs FP8 or FP4 and a dispatcher that can pad.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeRouterPaddingInvalid;

namespace {

using namespace moe;

// moe_router_padding_for_quantization, or the deprecated ..._for_fp8 that turns it on.
Field padding_switch(const Job& job) {
  Field padding = read_field(job, "model.moe_router_padding_for_quantization");
  if (padding.boolean() == true) return padding;
  Field deprecated = read_field(job, "model.moe_router_padding_for_fp8");
  if (deprecated.boolean() == true) return deprecated;
  return padding;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field padding = padding_switch(job);
  if (padding.boolean() != true) return;
  ComputePrecision precision = model_precision(job);
  if (precision.quantized == false) {
    Diagnostic diag = diagnostic_at(
        kMoeRouterPaddingInvalid,
        fmt::format("{} is true but the model trains without FP8 or FP4: Megatron-Core raises ValueError (\"fp8/fp4 "
                    "must be specified when moe_router_padding_for_quantization is True.\")",
                    padding.name),
        {&padding});
    diag.notes.push_back(note_for(precision));
    report(out, std::move(diag),
           fmt::format("set {} to false (it only aligns FP8/FP4 expert GEMMs), or train in FP8/FP4", padding.name),
           {set_field_fix(padding, "false")});
  }
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  std::optional<std::string> type = dispatcher.text();
  if (type && (*type == "allgather" || *type == "alltoall_seq")) {
    report(out,
           diagnostic_at(
               kMoeRouterPaddingInvalid,
               fmt::format("{} is true with the {} token dispatcher: Megatron-Core raises ValueError (\"allgather and "
                           "alltoall_seq dispatcher does not support moe_router_padding_for_quantization.\")",
                           padding.name, *type),
               {&padding, &dispatcher}),
           "use moe_token_dispatcher_type alltoall (or flex)",
           {set_field_fix(dispatcher, "alltoall"), set_field_fix(padding, "false")});
  }
}

}  // namespace

extern const RuleInfo kMoeRouterPaddingInvalid = {
    .code = "MB712",
    .name = "moe-router-padding-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "router padding for quantization needs FP8/FP4 training and the alltoall or flex dispatcher",
    .doc = R"md(`moe_router_padding_for_quantization` (and the deprecated `moe_router_padding_for_fp8`, which
turns it on) pads the routing map so every expert receives a token count aligned for FP8/FP4 GEMMs.
Megatron-Core's `TransformerConfig.__post_init__` raises, when the model config is finalized:

* `ValueError("fp8/fp4 must be specified when moe_router_padding_for_quantization is True.")` when
  neither `fp8` nor `fp4` is set. Under Megatron Bridge the precision comes from `mixed_precision`
  (a preset such as `bf16_with_fp8_current_scaling_mixed`, or its `fp8`/`fp4` fields), which
  overrides `model.fp8` at start-up;
* `ValueError("allgather and alltoall_seq dispatcher does not support
  moe_router_padding_for_quantization.")` with those dispatchers (`allgather` is the default).

Megatron-LM and Megatron Bridge behave the same.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_padding_for_quantization: true\nmixed_precision: bf16_mixed\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "model:\n  moe_router_padding_for_quantization: true\nmixed_precision: bf16_with_fp8_current_scaling_mixed\n"},
    .check = check,
    .checks = "MC G15",
};

}  // namespace mblint
