// num_moe_experts must be a positive count or null (dense). Megatron-LM's
// argument parser maps `--num-experts 0` to None; Megatron-Core and Megatron
// Bridge reject any value <= 0 when the model config is finalized.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeNumExpertsNotPositive;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Field experts = read_field(context.job, "model.num_moe_experts");
  std::optional<int64_t> count = experts.integer();
  if (!count || *count > 0) return;
  // validate_args turns `--num-experts 0` into None: a dense model, no error.
  if (runs_validate_args(context.job) && *count == 0) return;
  report(out,
         diagnostic_at(
             kMoeNumExpertsNotPositive,
             fmt::format(
                 "num_moe_experts is {}: Megatron-Core raises ValueError (\"num_moe_experts must be non-negative.\") "
                 "when the model config is finalized",
                 *count),
             {&experts}),
         "use null for a dense model, or the number of experts (a positive count)", {set_field_fix(experts, "null")});
}

}  // namespace

extern const RuleInfo kMoeNumExpertsNotPositive = {
    .code = "MB703",
    .name = "moe-num-experts-not-positive",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "num_moe_experts must be a positive number of experts, or null for a dense model",
    .doc = R"md(A dense model leaves `num_moe_experts` at null (None). Megatron-Core's
`TransformerConfig.__post_init__` raises `ValueError("num_moe_experts must be non-negative.")` for
any value `<= 0`, so a Megatron Bridge job whose YAML or override writes `num_moe_experts: 0` stops
when the model config is finalized, before training starts.

Megatron-LM is more lenient: `validate_args` turns `--num-experts 0` into None, a dense model,
so only a negative count fails there (same Megatron-Core error). mblint follows the dialect of the
launch.)md",
    .bad = {"override.yaml",
     "model:\n  num_moe_experts: 0\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  num_moe_experts: null\n"},
    .check = check,
    .checks = "MC G3",
};

}  // namespace mblint
