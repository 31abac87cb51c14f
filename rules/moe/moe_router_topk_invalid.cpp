// moe_router_topk against the router's other settings: top-1 routing needs
// the softmax before the top-k, the top-k cannot exceed the experts, and
// applying the routing probabilities to the expert input needs top-1.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeRouterTopkInvalid;

namespace {

using namespace moe;

// Softmax over the single selected expert is constant: its gradient is zero.
void check_top1_softmax(const Job& job, const Field& topk, std::vector<Diagnostic>& out) {
  Field score = read_field(job, "model.moe_router_score_function");
  Field pre_softmax = read_field(job, "model.moe_router_pre_softmax");
  Field balancing = read_field(job, "model.moe_router_load_balancing_type");
  if (topk.integer() != 1 || score.text() != "softmax" || pre_softmax.boolean() != false) return;
  if (!balancing.known() || balancing.text() == "sinkhorn") return;
  report(out,
         diagnostic_at(
             kMoeRouterTopkInvalid,
             "moe_router_topk is 1 with the softmax score function applied after the top-k: Megatron-Core raises "
             "ValueError (\"Please use --moe-router-pre-softmax when topk is 1.\") when the model config is finalized",
             {&topk, &score, &pre_softmax}),
         "set moe_router_pre_softmax to true (a softmax over one expert has zero gradient), or use top-k > 1",
         {set_field_fix(pre_softmax, "true")});
}

void check_topk_exceeds_experts(const RuleContext& context, const Field& topk, std::vector<Diagnostic>& out) {
  const Quantity& experts = context.derived.num_moe_experts;
  std::optional<int64_t> k = topk.integer();
  if (!k || *k <= *experts) return;
  Field experts_field = from_quantity(experts);
  report(out,
         diagnostic_at(
             kMoeRouterTopkInvalid,
             fmt::format(
                 "moe_router_topk {} is larger than num_moe_experts {}: torch.topk fails in the router at the first "
                 "step",
                 *k, *experts),
             {&topk, &experts_field}),
         fmt::format("use moe_router_topk of at most {}", *experts), {set_field_fix(topk, std::to_string(*experts))});
}

void check_probs_on_input(const Job& job, const Field& topk, std::vector<Diagnostic>& out) {
  Field on_input = read_field(job, "model.moe_apply_probs_on_input");
  std::optional<int64_t> k = topk.integer();
  if (on_input.boolean() != true || !k || *k == 1) return;
  report(out,
         diagnostic_at(
             kMoeRouterTopkInvalid,
             fmt::format(
                 "moe_apply_probs_on_input is true with moe_router_topk {}: the experts assert \"moe_apply_probs_on_"
                 "input only works with moe_router_topk=1\" at the first step",
                 *k),
             {&on_input, &topk}),
         "set moe_apply_probs_on_input to false, or moe_router_topk 1",
         {set_field_fix(on_input, "false"), set_field_fix(topk, "1")});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_moe(context.derived)) return;
  Field topk = read_field(context.job, "model.moe_router_topk");
  check_top1_softmax(context.job, topk, out);
  check_topk_exceeds_experts(context, topk, out);
  check_probs_on_input(context.job, topk, out);
}

}  // namespace

extern const RuleInfo kMoeRouterTopkInvalid = {
    .code = "MB706",
    .name = "moe-router-topk-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "moe_router_topk does not fit the router: top-1 without pre-softmax, more than the experts, or probs on input with top-k > 1",
    .doc = R"md(Each token is sent to `moe_router_topk` experts. Three settings around it fail:

* **Top-1 with a softmax after the top-k.** A softmax over a single selected score is always 1,
  so its gradient is zero and the router never learns. Megatron-Core's `TransformerConfig` raises
  `ValueError("Please use --moe-router-pre-softmax when topk is 1.")` when `moe_router_topk` is 1,
  `moe_router_score_function` is `softmax`, `moe_router_pre_softmax` is false and the load
  balancing is not `sinkhorn`.
* **More experts per token than experts.** Megatron-Core does not check `moe_router_topk <=
  num_moe_experts`; `torch.topk` raises in the router at the first step.
* **`moe_apply_probs_on_input` with top-k other than 1.** The experts assert "`moe_apply_probs_on_input`
  only works with `moe_router_topk`=1" in the first forward pass.

Megatron-LM and Megatron Bridge behave the same here. The defaults (top-k 2, softmax, no
pre-softmax, aux_loss) apply to Megatron-LM launches and full config dumps; a recipe's own router
settings are not in mblint's catalog, so an unwritten one keeps that check silent.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_topk: 1\n  moe_router_score_function: softmax\n  moe_router_pre_softmax: false\n"
     "  moe_router_load_balancing_type: aux_loss\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "model:\n  moe_router_topk: 1\n  moe_router_score_function: softmax\n  moe_router_pre_softmax: true\n"
     "  moe_router_load_balancing_type: aux_loss\n"},
    .check = check,
    .checks = "MC G8, MC G9, MC G26",
};

}  // namespace mblint
