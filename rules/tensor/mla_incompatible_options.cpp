// Multi-latent attention compresses keys and values into a latent vector: it
// has no key/value groups and applies its own (non-interleaved) rotary split.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kMlaIncompatibleOptions;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Setting mla = config_bool(job, "model.multi_latent_attention");
  if (!mla.value || !*mla.value) return;
  Setting interleaved = config_bool(job, "model.rotary_interleaved");
  if (interleaved.value && *interleaved.value) {
    Diagnostic diag = make_diagnostic(
        kMlaIncompatibleOptions,
        "rotary_interleaved is true with multi-latent attention: Megatron-Core rejects it (\"rotary_interleaved "
        "does not work with multi_latent_attention\")",
        span_for(interleaved).valid() ? span_for(interleaved) : span_for(mla));
    diag.notes.push_back(note_for(mla));
    report(out, std::move(diag), "set rotary_interleaved to false",
           {set_setting_fix(interleaved, false, FixSafety::Unsafe)});
  }
  // Megatron-LM: --group-query-attention is what gives num_query_groups a value.
  if (job.dialect != Dialect::MegatronLM) return;
  const Quantity& groups = context.derived.num_query_groups;
  if (!groups.known()) return;
  Diagnostic diag = make_diagnostic(
      kMlaIncompatibleOptions,
      "--group-query-attention is given with --multi-latent-attention: Megatron-LM rejects it (\"Group query "
      "attention is mutually exclusive with multi latent attention.\")",
      span_for(groups).valid() ? span_for(groups) : span_for(mla));
  add_notes(diag, {&groups}, &groups);
  diag.notes.push_back(note_for(mla));
  report(out, std::move(diag),
         "drop --group-query-attention and --num-query-groups: multi-latent attention has no key/value groups");
}

}  // namespace

extern const RuleInfo kMlaIncompatibleOptions = {
    .code = "MB207",
    .name = "mla-incompatible-options",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "multi-latent attention excludes rotary_interleaved and (Megatron-LM) grouped-query attention",
    .doc = R"md(Multi-latent attention (DeepSeek V2/V3, Kimi-K2, Moonlight) projects keys and values through a
low-rank latent and keeps a separate rotary part of each head.

* `rotary_interleaved` does not apply to that split: Megatron-Core's `TransformerConfig` raises
  "rotary_interleaved does not work with multi_latent_attention." while the model config is
  finalized (Megatron Bridge and Megatron-LM alike).
* Megatron-LM's `validate_args` also rejects `--group-query-attention` together with
  `--multi-latent-attention` ("Group query attention is mutually exclusive with multi latent
  attention."). Megatron Bridge's MLA providers ignore `num_query_groups`, so only Megatron-LM
  command lines are checked for it. (`--mla-down-proj-fusion` without MLA, the other half of that
  check, is not read by mblint.))md",
    .bad = {"override.yaml",
     "model:\n  rotary_interleaved: true\n",
     "override.yaml --recipe deepseek_v3_pretrain_1024gpu_h100_bf16_config --nodes 128 --gpus-per-node 8"},
    .good = {.content = "model:\n  rotary_interleaved: false\n"},
    .check = check,
    .checks = "MC B12, MC B13",
};

}  // namespace mblint
