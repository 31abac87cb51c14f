// fp16 and bf16 are two different 16-bit training modes; a model runs in one.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp16AndBf16;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Precision& p = effective_precision(context);
  if (!p.bf16.value.value_or(false) || !p.fp16.value.value_or(false)) return;
  bool fp16_last = rank_of(p.fp16.where) > rank_of(p.bf16.where);
  const Setting& primary = fp16_last ? p.fp16 : p.bf16;
  const Setting& other = fp16_last ? p.bf16 : p.fp16;
  Diagnostic diag = make_diagnostic(
      kFp16AndBf16,
      p.from_mixed_precision ? "mixed_precision sets both fp16 and bf16: a model trains in one 16-bit format"
                             : "fp16 and bf16 are both true: a model trains in one 16-bit format",
      first_span(job, {span_for(primary), span_for(other)}));
  diag.notes.push_back(note_for(other));
  report(out, std::move(diag), "keep bf16 (the usual choice on Ampere and later) and set fp16 to false",
         {flag_fix(job, p.fp16, false), flag_fix(job, p.bf16, false)});
}

}  // namespace

extern const RuleInfo kFp16AndBf16 = {
    .code = "MB816",
    .name = "fp16-and-bf16",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "fp16 and bf16 both on",
    .doc = R"md(A model trains either in fp16 (with loss scaling) or in bf16. Megatron-Core's
`TransformerConfig.__post_init__` raises "Only one of self.fp16: True and self.bf16 True should be
True." (every release), Megatron-LM's `validate_args` asserts it, and Megatron Bridge's
`ConfigContainer.validate()` says "Model config cannot have both bf16=True and fp16=True".

Under Megatron Bridge the values that count are `mixed_precision`'s when it is set: a preset
(`bf16_mixed`, `fp16_mixed`, ...) never sets both, but a `mixed_precision` section can, and it
overwrites `model.*` at start-up. With `mixed_precision: null`, `model.fp16` and `model.bf16` are
checked.)md",
    .bad = {"override.yaml",
     "mixed_precision:\n  fp16: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision:\n  fp16: true\n  bf16: false\n"},
    .check = check,
    .checks = "MC J1",
};

}  // namespace mblint
