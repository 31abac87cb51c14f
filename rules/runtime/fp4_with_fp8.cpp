// FP4 (NVFP4) and FP8 are alternative low-precision GEMM modes.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp4WithFp8;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Precision& p = effective_precision(context);
  if (p.fp4.is_set() && p.fp8.is_set()) {
    bool fp4_last = rank_of(p.fp4.where) > rank_of(p.fp8.where);
    Diagnostic diag = make_diagnostic(
        kFp4WithFp8,
        fmt::format("fp4 {} and fp8 {} are both set: a run uses one low-precision format", *p.fp4.value,
                    *p.fp8.value),
        first_span(job, {fp4_last ? span_for(p.fp4) : span_for(p.fp8), span_for(p.fp8)}));
    diag.notes.push_back(fp4_last ? note_for(p.fp8) : note_for(p.fp4));
    report(out, std::move(diag),
           for_dialect(job, "set fp8 to null (NVFP4 training) or fp4 to null (FP8 training)",
                       "drop --fp8-format (NVFP4 training) or --fp4-format (FP8 training)"),
           {text_fix(job, p.fp8, "null"), text_fix(job, p.fp4, "null")});
  }
  if (p.fp4_param.value.value_or(false) && p.fp4.is_none()) {
    Diagnostic diag = make_diagnostic(kFp4WithFp8,
                                      "fp4 parameters (fp4_param_gather) need fp4 training, but fp4 is None",
                                      first_span(job, {span_for(p.fp4_param)}));
    diag.notes.push_back(note_for(p.fp4));
    report(out, std::move(diag),
           for_dialect(job, "set fp4_param_gather to false, or fp4 to e2m1",
                       "drop --fp4-param-gather, or pass --fp4-format e2m1"),
           {flag_fix(job, p.fp4_param, false)});
  }
}

}  // namespace

extern const RuleInfo kFp4WithFp8 = {
    .code = "MB818",
    .name = "fp4-with-fp8",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "fp4 together with fp8, or fp4 parameters without fp4",
    .doc = R"md(NVFP4 (`fp4: e2m1`) and FP8 are two ways to run the GEMMs in low precision; a run picks one.

* Megatron Bridge's `MixedPrecisionConfig.finalize()` raises "fp4 and fp8 cannot be used
  simultaneously. Please choose one.", Megatron-LM's `validate_args` "--fp4-format and --fp8-format
  cannot be used simultaneously", Megatron-Core's `TransformerConfig` (0.15 and later) the same.
* FP4 parameters (`fp4_param` / `fp4_param_gather`) without FP4 training are rejected ("fp4_param
  must be used together with fp4 mode", "--fp4-param-gather must be used together with
  --fp4-format").

FP4 also needs TransformerEngine 2.7; that version is not in the files and is not checked.)md",
    .bad = {"override.yaml",
     "mixed_precision:\n  fp4: e2m1\n  fp8: hybrid\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision: bf16_with_nvfp4_mixed\n"},
    .check = check,
    .checks = "MC J5",
};

}  // namespace mblint
