// Without kv_channels the head dimension is hidden_size / num_attention_heads:
// Megatron-LM asserts that it is whole, Megatron-Core (and so Megatron
// Bridge) silently floors it.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHeadDimNotWhole;

namespace {

// Head counts near `heads` that divide the hidden size.
std::vector<int64_t> head_choices(int64_t hidden, int64_t heads) {
  return closest_around(divisors_above_one(hidden), heads);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& hidden = d.hidden_size;
  const Quantity& heads = d.num_attention_heads;
  if (!splits_unevenly(hidden, heads)) return;
  if (multi_latent_attention(context.job)) return;  // MLA sets its own head dimensions
  auto unset = kv_channels_unset(context.job);
  if (!unset) return;
  bool megatron_lm = context.job.dialect == Dialect::MegatronLM;
  int64_t floored = *hidden / *heads;
  std::string message =
      megatron_lm
          ? fmt::format("hidden_size {} is not divisible by num_attention_heads {} and --kv-channels is not given: "
                        "Megatron-LM asserts the head dimension hidden_size / num_attention_heads is whole",
                        *hidden, *heads)
          : fmt::format("hidden_size {} is not divisible by num_attention_heads {} and kv_channels is unset: "
                        "Megatron-Core silently uses a head dimension of {} ({} // {}), so attention is {} wide, "
                        "not {}",
                        *hidden, *heads, floored, *hidden, *heads, floored * *heads, *hidden);
  Diagnostic diag = finding(kHeadDimNotWhole, std::move(message), {&heads, &hidden});
  if (megatron_lm) diag.severity = Severity::Error;
  if (primary_span(*unset).valid()) diag.notes.push_back(note_at("kv_channels", "null", *unset));
  std::vector<int64_t> choices = head_choices(*hidden, *heads);
  std::string help = fmt::format(
      "set kv_channels explicitly if a head dimension of {} is intended{}", floored,
      choices.empty() ? std::string()
                      : fmt::format(", or use num_attention_heads {} (divisors of {})", join_or(choices), *hidden));
  report(out, std::move(diag), std::move(help), set_value_fixes(heads, choices));
}

}  // namespace

extern const RuleInfo kHeadDimNotWhole = {
    .code = "MB205",
    .name = "head-dim-not-whole",
    .group = RuleGroup::Tensor,
    .severity = Severity::Warning,
    .summary = "without kv_channels, hidden_size must be divisible by num_attention_heads",
    .doc = R"md(The attention head dimension is `kv_channels`; when it is unset it defaults to
`hidden_size / num_attention_heads`. The two programs disagree about a remainder:

* Megatron-LM's `validate_args` asserts `hidden_size % num_attention_heads == 0` when
  `--kv-channels` is not given: the job stops at start-up (an **error**).
* Megatron-Core's `TransformerConfig`, which Megatron Bridge builds directly, floors it silently
  (`hidden_size // num_attention_heads`): the run works, but attention is narrower than the
  hidden size and the model is not the one the numbers describe (a **warning**).

Models whose head dimension is deliberately not `hidden_size / heads` (Qwen3, Gemma) set
`kv_channels`; they are not affected. Multi-latent attention has its own head dimensions.)md",
    .bad = {"override.yaml",
     "model:\n  num_attention_heads: 24\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  num_attention_heads: 24\n  kv_channels: 128\n"},
    .check = check,
    .checks = "MC B5",
};

}  // namespace mblint
