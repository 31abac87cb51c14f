// Gated DeltaNet (linear attention) layers split their key and value heads
// across tensor x context parallel ranks, and group value heads per key head.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kLinearAttentionHeadsDivisibility;

namespace {

bool gated_delta_net(const Job& job) {
  TextSetting variant = config_text(job, "model.experimental_attention_variant");
  return variant.value && (*variant.value == "gdn" || *variant.value == "gdn2" ||
                           *variant.value == "gated_delta_net");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!gated_delta_net(job)) return;
  const Derived& d = context.derived;
  Quantity keys = config_int(job, "model.linear_num_key_heads");
  Quantity values = config_int(job, "model.linear_num_value_heads");
  if (!keys.known() || !values.known() || *keys <= 0 || *values <= 0) return;
  if (*values % *keys != 0) {
    Diagnostic diag = finding(
        kLinearAttentionHeadsDivisibility,
        fmt::format("linear_num_value_heads {} is not a multiple of linear_num_key_heads {}: each key head of the "
                    "gated delta net serves a whole number of value heads",
                    *values, *keys),
        {&values, &keys});
    int64_t valid = nearest_multiple(*values, *keys);
    report(out, std::move(diag), fmt::format("use linear_num_value_heads {} (a multiple of {})", valid, *keys),
           {set_value_fix(values, valid)});
    return;
  }
  const Quantity& tp = d.tensor_parallel;
  const Quantity& cp = d.context_parallel;
  if (!tp.known() || !cp.known() || *tp <= 0 || *cp <= 0) return;
  int64_t ranks = *tp * *cp;
  for (const Quantity* heads : {&keys, &values}) {
    if (**heads % ranks == 0) continue;
    Diagnostic diag =
        finding(kLinearAttentionHeadsDivisibility,
                fmt::format("{} {} is not divisible by tensor x context parallel = {} x {} = {}: the gated delta net "
                            "splits its heads across those ranks",
                            heads->name, **heads, *tp, *cp, ranks),
                {heads, &tp, &cp});
    int64_t common = gcd64(*keys, *values);
    report(out, std::move(diag), fmt::format("use tensor x context parallel sizes whose product divides {}", common));
    return;
  }
}

}  // namespace

extern const RuleInfo kLinearAttentionHeadsDivisibility = {
    .code = "MB208",
    .name = "linear-attention-heads-divisibility",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "gated delta net head counts must be divisible by TP x CP, value heads a multiple of key heads",
    .doc = R"md(Gated DeltaNet linear attention (`experimental_attention_variant: gdn`, `gdn2`, as in
Qwen3-Next and Qwen3.5) has its own key and value head counts, `linear_num_key_heads` (default 16)
and `linear_num_value_heads` (default 32). Both are split across the tensor-parallel and the
context-parallel ranks, and each key head serves a group of value heads.

Megatron-Core's `TransformerConfig` asserts while the model config is finalized:
"linear_num_value_heads (v) must be a multiple of linear_num_key_heads (k)", and
"linear_num_key_heads=... must be a multiple of (tensor_model_parallel_size * context_parallel_size)"
(the same for the value heads).)md",
    .bad = {"override.yaml",
     "model:\n  experimental_attention_variant: gdn\n  linear_attention_freq: 4\n  linear_num_key_heads: 16\n  linear_num_value_heads: 24\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  experimental_attention_variant: gdn\n  linear_attention_freq: 4\n  linear_num_key_heads: 16\n  linear_num_value_heads: 32\n"},
    .check = check,
    .checks = "MC B14",
};

}  // namespace mblint
