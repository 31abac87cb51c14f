// Grouped tensors and single grouped weights/biases are layouts of the
// grouped-GEMM expert MLP; without moe_grouped_gemm there is nothing to group.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeGroupedWeightsRequireGroupedGemm;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field grouped = read_field(job, "model.moe_grouped_gemm");
  if (grouped.boolean() != false) return;
  for (const char* path : {"model.moe_use_grouped_tensor", "model.moe_single_grouped_weight",
                           "model.moe_single_grouped_bias"}) {
    Field option = read_field(job, path);
    if (option.boolean() != true) continue;
    report(out,
           diagnostic_at(
               kMoeGroupedWeightsRequireGroupedGemm,
               fmt::format("{} is true but moe_grouped_gemm is false: Megatron-Core raises ValueError (\"{} require{} "
                           "moe_grouped_gemm=True.\") when the model config is finalized",
                           option.name,
                           option.name == "moe_use_grouped_tensor"
                               ? "moe_use_grouped_tensor=True"
                               : "moe_single_grouped_weight and moe_single_grouped_bias",
                           option.name == "moe_use_grouped_tensor" ? "s" : ""),
               {&option, &grouped}),
           fmt::format("set moe_grouped_gemm to true, or {} to false", option.name),
           {set_field_fix(grouped, "true"), set_field_fix(option, "false")});
  }
}

}  // namespace

extern const RuleInfo kMoeGroupedWeightsRequireGroupedGemm = {
    .code = "MB719",
    .name = "moe-grouped-weights-require-grouped-gemm",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "grouped tensors and single grouped expert weights need moe_grouped_gemm",
    .doc = R"md(`moe_use_grouped_tensor`, `moe_single_grouped_weight` and `moe_single_grouped_bias` store the
experts' weights as one grouped tensor for Transformer Engine's grouped GEMM. Without
`moe_grouped_gemm` (each expert a separate MLP) Megatron-Core's `TransformerConfig.__post_init__`
raises `ValueError("moe_use_grouped_tensor=True requires moe_grouped_gemm=True.")` or
`ValueError("moe_single_grouped_weight and moe_single_grouped_bias require moe_grouped_gemm=True.")`
when the model config is finalized.

Their other requirements — Transformer Engine 2.14 or newer, and the FP8/FP4 recipes the grouped
tensor supports — depend on the installed Transformer Engine and are not checked.)md",
    .bad = {"override.yaml",
     "model:\n  moe_grouped_gemm: false\n  moe_single_grouped_weight: true\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_grouped_gemm: true\n  moe_single_grouped_weight: false\n"},
    .check = check,
    .checks = "MC G25",
};

}  // namespace mblint
