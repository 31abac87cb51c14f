// A GPT model with gated delta net layers needs their layer pattern:
// Megatron-Core has no default for it and refuses the config without one.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kLinearAttentionFreqUnset;

namespace {

// Whether linear_attention_freq is known to be unset: not written anywhere
// mblint read, and not set by the recipe's model (a catalogued gated delta
// net model's provider sets it; another recipe's model leaves it None, as
// Megatron-LM's flag does).
bool freq_unset(const Job& job) {
  const ConfigValue* freq = config_node(job, "model.linear_attention_freq");
  if (freq && !freq->is_null()) return false;
  if (freq && freq->is_null()) return true;
  if (job.dialect == Dialect::MegatronLM) return true;
  return job.recipe && job.recipe->dims && !(job.recipe->dims->gated_delta_net && *job.recipe->dims->gated_delta_net);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  TextSetting variant = config_text(job, "model.experimental_attention_variant");
  // Only "gdn": "gdn2" layers come from a hybrid pattern's 'G' symbol.
  if (!variant.value || *variant.value != "gdn" || !freq_unset(job)) return;
  Diagnostic diag = make_diagnostic(
      kLinearAttentionFreqUnset,
      "experimental_attention_variant gdn without linear_attention_freq: Megatron-Core asserts "
      "\"linear_attention_freq must be set for linear gdn.\" (it has no default: which layers are gated delta "
      "net and which softmax attention is the model's choice)",
      primary_span(variant.where));
  report(out, std::move(diag),
         "set model.linear_attention_freq: N (every Nth layer softmax attention, the others gated delta net; "
         "Qwen3-Next and Qwen3.5 use 4) or a per-layer list of 1 (gated delta net) and 0");
}

}  // namespace

extern const RuleInfo kLinearAttentionFreqUnset = {
    .code = "MB210",
    .name = "linear-attention-freq-unset",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "gated delta net attention (gdn) without linear_attention_freq, which has no default",
    .doc = R"md(`experimental_attention_variant: gdn` builds a GPT model whose layers are gated delta net (linear
attention) or softmax attention, chosen per layer by `linear_attention_freq` (an integer N: every
Nth layer is softmax attention; or a list of 1 and 0, one per layer). The field defaults to None,
and Megatron-Core's `TransformerConfig.__post_init__` asserts "linear_attention_freq must be set
for linear gdn." (`megatron/core/transformer/transformer_config.py`, Megatron-LM 2a75ac12c54b, the
commit Megatron Bridge 0.6 pins; unchanged at d98e8a64dd). Megatron-LM's `--linear-attention-freq`
defaults to None too. `gdn2` is exempt: its layers come from a hybrid pattern's `G` symbol.

The rule fires when the variant is `gdn` and the pattern is unset everywhere mblint reads: not
written, and not set by the recipe's model (Qwen3-Next's and Qwen3.5's providers set it; a recipe
of another model, such as Llama, leaves it None).)md",
    .bad = {"override.yaml", "model:\n  experimental_attention_variant: gdn\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  experimental_attention_variant: gdn\n  linear_attention_freq: 4\n"},
    .check = check,
};

}  // namespace mblint
