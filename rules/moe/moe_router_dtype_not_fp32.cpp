// With many experts the router's softmax/top-k in bf16 loses precision;
// Megatron-Core warns and recommends fp32 routing.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeRouterDtypeNotFp32;

namespace {

using namespace moe;

constexpr int64_t kManyExperts = 32;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& experts = context.derived.num_moe_experts;
  if (!experts.known() || *experts < kManyExperts) return;
  Field dtype = read_field(context.job, "model.moe_router_dtype");
  if (!dtype.is_null()) return;
  Field experts_field = from_quantity(experts);
  report(out,
         diagnostic_at(
             kMoeRouterDtypeNotFp32,
             fmt::format(
                 "{} experts routed without fp32 routing (moe_router_dtype is {}): the router's scores and top-k run "
                 "in the model's 16-bit dtype and Megatron-Core warns about numerical stability",
                 *experts, dtype.defaulted ? "unset" : "null"),
             {&dtype, &experts_field}),
         "set moe_router_dtype to fp32 (DeepSeek, GLM and Kimi recipes do)", {set_field_fix(dtype, "fp32")});
}

}  // namespace

extern const RuleInfo kMoeRouterDtypeNotFp32 = {
    .code = "MB713",
    .name = "moe-router-dtype-not-fp32",
    .group = RuleGroup::Moe,
    .severity = Severity::Warning,
    .summary = "32 or more experts without fp32 routing",
    .doc = R"md(The router computes a score per expert and picks the top-k. With many experts the scores
crowd together, and in bf16 near-ties and the aux-loss statistics lose precision. Megatron-Core's
`TransformerConfig.__post_init__` warns "Using a large number of experts (e.g. >=32) without fp32
routing. Consider enabling moe_router_dtype for better numerical stability." when
`num_moe_experts >= 32` and `moe_router_dtype` is None; the run continues. NVIDIA's DeepSeek, GLM
and Kimi providers set `moe_router_dtype = "fp32"`.

The value is checked when the job writes it (null), in a full config dump (where unset means the
default None) and for Megatron-LM launches (no `--moe-router-dtype`); a recipe's provider value is
not in mblint's catalog.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_dtype: null\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_router_dtype: fp32\n"},
    .check = check,
    .checks = "MC G17",
};

}  // namespace mblint
