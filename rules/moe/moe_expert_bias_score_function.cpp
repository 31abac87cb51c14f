// Aux-loss-free load balancing adds a learned per-expert bias to the routing
// scores; Megatron-Core implements it for the sigmoid-type score functions only.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeExpertBiasScoreFunction;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field bias = read_field(job, "model.moe_router_enable_expert_bias");
  Field score = read_field(job, "model.moe_router_score_function");
  std::optional<std::string> function = score.text();
  if (bias.boolean() != true || !function || *function == "sigmoid" || *function == "sqrtsoftplus") return;
  report(out,
         diagnostic_at(
             kMoeExpertBiasScoreFunction,
             fmt::format(
                 "moe_router_enable_expert_bias is true with the {} score function: Megatron-Core raises ValueError "
                 "(\"Expert bias for aux-loss-free routing only supports 'sigmoid' and 'sqrtsoftplus' score "
                 "functions\") when the model config is finalized",
                 *function),
             {&bias, &score}),
         "set moe_router_score_function to sigmoid (as DeepSeek-V3 does), or moe_router_enable_expert_bias to "
         "false",
         {set_field_fix(score, "sigmoid"), set_field_fix(bias, "false")});
}

}  // namespace

extern const RuleInfo kMoeExpertBiasScoreFunction = {
    .code = "MB710",
    .name = "moe-expert-bias-score-function",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "expert bias (aux-loss-free routing) needs the sigmoid or sqrtsoftplus score function",
    .doc = R"md(`moe_router_enable_expert_bias` turns on DeepSeek-V3's aux-loss-free load balancing: a
per-expert bias, updated from the expert load, is added to the routing scores before the top-k.
Megatron-Core implements it for the `sigmoid` and `sqrtsoftplus` score functions only, and its
`TransformerConfig.__post_init__` raises `ValueError("Expert bias for aux-loss-free routing only
supports 'sigmoid' and 'sqrtsoftplus' score functions. ...")` for any other (the default is
`softmax`). The job stops when the model config is finalized, in Megatron-LM and Megatron Bridge
alike.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_enable_expert_bias: true\n  moe_router_score_function: softmax\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_router_enable_expert_bias: true\n  moe_router_score_function: sigmoid\n"},
    .check = check,
    .checks = "MC G13",
};

}  // namespace mblint
