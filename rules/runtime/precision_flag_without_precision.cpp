// fp16_lm_cross_entropy and fp32_residual_connection refine a 16-bit run;
// without one they mean nothing. Megatron-LM rejects them, Megatron-Core
// (and so Megatron Bridge) never reads them then.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kPrecisionFlagWithoutPrecision;

namespace {

void push(const RuleContext& context, std::vector<Diagnostic>& out, const Setting& flag, std::string what,
          std::vector<Note> notes) {
  const Job& job = context.job;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Diagnostic diag = make_diagnostic(
      kPrecisionFlagWithoutPrecision,
      fmt::format("{}: {}", what, megatron_lm ? "Megatron-LM rejects it" : "it has no effect"),
      first_span(job, {span_for(flag)}));
  if (!megatron_lm) diag.severity = Severity::Warning;
  diag.notes = std::move(notes);
  report(out, std::move(diag), fmt::format("set {} to false", flag.name),
         {flag_fix(job, flag, false, FixSafety::Safe)});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Precision& p = effective_precision(context);
  Setting cross_entropy = read_flag(job, "model.fp16_lm_cross_entropy");
  if (cross_entropy.value.value_or(false) && p.fp16.value && !*p.fp16.value) {
    push(context, out, cross_entropy, "fp16_lm_cross_entropy is true but the model does not train in fp16",
         {note_for(p.fp16)});
  }
  Setting residual = read_flag(job, "model.fp32_residual_connection");
  if (residual.value.value_or(false) && p.fp16.value && !*p.fp16.value && p.bf16.value && !*p.bf16.value) {
    push(context, out, residual,
         "fp32_residual_connection is true but the model trains in fp32 (neither fp16 nor bf16), where the residual "
         "is fp32 already",
         {note_for(p.fp16), note_for(p.bf16)});
  }
}

}  // namespace

extern const RuleInfo kPrecisionFlagWithoutPrecision = {
    .code = "MB817",
    .name = "precision-flag-without-precision",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "fp16_lm_cross_entropy without fp16, or fp32_residual_connection without fp16/bf16",
    .doc = R"md(Two switches refine 16-bit training:

* `fp16_lm_cross_entropy` computes the loss from fp16 logits; Megatron-LM's `validate_args` asserts
  "lm cross entropy in fp16 only support in fp16 mode.";
* `fp32_residual_connection` keeps the residual stream in fp32; Megatron-LM asserts "residual
  connection in fp32 only supported when using fp16 or bf16.".

Under **Megatron-LM** either one without its precision stops the job at start-up (error). Megatron
Bridge does not check them: in fp32 the residual is fp32 anyway, and Megatron-Core's GPT model stores
`fp16_lm_cross_entropy` without reading it, so the setting silently does nothing (warning; turning
it off is safe). Under Bridge, the precision that counts is `mixed_precision`'s when it is set.)md",
    .bad = {"override.yaml",
     "model:\n  fp16_lm_cross_entropy: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision: fp16_mixed\nmodel:\n  fp16_lm_cross_entropy: true\n"},
    .check = check,
    .checks = "MC J4",
};

}  // namespace mblint
