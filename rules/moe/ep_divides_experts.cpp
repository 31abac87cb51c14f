// Each expert-parallel rank holds num_moe_experts / EP experts.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kEpDividesExperts;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& experts = d.num_moe_experts;
  if (!splits_unevenly(experts, ep)) return;
  std::vector<int64_t> choices = closest_around(divisors_above_one(*experts), *ep);
  report(out,
         finding(kEpDividesExperts,
                 fmt::format("num_moe_experts {} is not divisible by expert_model_parallel_size {}", *experts, *ep),
                 {&ep, &experts}),
         choices.empty()
             ? "use expert_model_parallel_size 1"
             : fmt::format("use expert_model_parallel_size {} (a divisor of {})", join_or(choices), *experts),
         set_value_fixes(ep, choices));
}

}  // namespace

extern const RuleInfo kEpDividesExperts = {
    .code = "MB701",
    .name = "ep-divides-experts",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "expert parallelism must divide the number of experts",
    .doc = R"md(Expert parallelism places `num_moe_experts / EP` whole experts on each rank. Megatron-LM's
`validate_args` asserts "Number of experts should be a multiple of expert model parallel_size",
and Megatron-Core's `BaseMoELayer` asserts the same when the model is built — Megatron Bridge
checks nothing up front, so the job fails while building the model.)md",
    .bad = {"override.yaml",
     "model:\n  expert_model_parallel_size: 12\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "model:\n  expert_model_parallel_size: 8\n"},
    .check = check,
    .checks = "MC G2, PS 36",
};

}  // namespace mblint
