// Expert parallelism on a model without experts.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kEpOnDenseModel;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& experts = d.num_moe_experts;
  if (!splits(ep) || !experts.known() || *experts != 0) return;
  report(out,
         finding_at(kEpOnDenseModel,
                    fmt::format(
                        "expert_model_parallel_size {} on a dense model: num_moe_experts is not set, and Megatron-Core "
                        "refuses expert parallelism without experts",
                        *ep),
                    ep, {&ep, &experts}),
         "set expert_model_parallel_size to 1", {set_value_fix(ep, 1)});
}

}  // namespace

extern const RuleInfo kEpOnDenseModel = {
    .code = "MB702",
    .name = "ep-on-dense-model",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "expert parallelism needs a mixture-of-experts model",
    .doc = R"md(`expert_model_parallel_size > 1` only means something when the model has experts.
Megatron-Core's `TransformerConfig` raises "num_moe_experts must be non None to use
expert-parallel" and Megatron-LM asserts "num_experts must be non None to use expert model
parallelism". Besides failing, an EP size on a dense model changes the expert grid that the
world size must divide.)md",
    .bad = {"override.yaml",
     "model:\n  expert_model_parallel_size: 8\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  expert_model_parallel_size: 1\n"},
    .check = check,
    .checks = "MC G1, PS 35",
};

}  // namespace mblint
