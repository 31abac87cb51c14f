// Two FP8 options depend on the FP8 recipe: a custom recipe needs the
// quantizer factory that defines it, and the FP8 output projection exists
// only for MXFP8.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp8RecipeOptions;

namespace {

void custom_recipe(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.versions.megatron_core < Version{0, 16, 0}) return;
  if (!p.fp8.is_set() || !p.fp8_recipe.is("custom")) return;
  Choice factory = read_choice(job, "model.fp8_quantizer_factory");
  if (!factory.known || (factory.value && !factory.value->empty())) return;
  Diagnostic diag = make_diagnostic(kFp8RecipeOptions,
                                    "fp8_recipe custom needs fp8_quantizer_factory (the Python path of the quantizer "
                                    "factory), but it is not set",
                                    first_span(job, {span_for(p.fp8_recipe)}));
  diag.notes.push_back(note_for(factory));
  report(out, std::move(diag),
         "set model.fp8_quantizer_factory to package.module.factory, or use a built-in fp8_recipe");
}

void output_projection(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.versions.megatron_core < Version{0, 18, 0}) return;
  Setting proj = read_flag(job, "model.fp8_output_proj");
  if (!proj.value.value_or(false)) return;
  if (p.fp8.is_none()) {
    Diagnostic diag = make_diagnostic(kFp8RecipeOptions, "fp8_output_proj needs FP8 training, but fp8 is None",
                                      first_span(job, {span_for(proj)}));
    diag.notes.push_back(note_for(p.fp8));
    report(out, std::move(diag), "set fp8_output_proj to false", {flag_fix(job, proj, false)});
    return;
  }
  if (!p.fp8.is_set() || !p.fp8_recipe.is_set() || p.fp8_recipe.is("mxfp8")) return;
  Diagnostic diag = make_diagnostic(
      kFp8RecipeOptions, fmt::format("fp8_output_proj requires fp8_recipe mxfp8, not {}", *p.fp8_recipe.value),
      first_span(job, {span_for(proj)}));
  diag.notes.push_back(note_for(p.fp8_recipe));
  report(out, std::move(diag),
         "set fp8_output_proj to false, or train with MXFP8 (mixed_precision bf16_with_mxfp8_mixed)",
         {flag_fix(job, proj, false)});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Precision& p = effective_precision(context);
  custom_recipe(context, p, out);
  output_projection(context, p, out);
}

}  // namespace

extern const RuleInfo kFp8RecipeOptions = {
    .code = "MB821",
    .name = "fp8-recipe-options",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "fp8_recipe custom without a quantizer factory, or fp8_output_proj without MXFP8",
    .doc = R"md(Megatron-Core's `TransformerConfig.__post_init__` raises a `ValueError` before the model is
built when:

* `fp8_recipe: custom` has no `fp8_quantizer_factory` (Megatron-Core 0.16 and later: "fp8_quantizer_factory
  must be provided when fp8_recipe is 'custom'");
* `fp8_output_proj` (run the LM-head projection in FP8, Megatron-Core 0.18 and later) is set without
  FP8 ("fp8_output_proj must be used together with fp8 mode.") or with a recipe other than MXFP8
  ("fp8_output_proj requires fp8_recipe='mxfp8'").

Under Megatron Bridge the FP8 settings come from `mixed_precision` when it is set.)md",
    .bad = {"override.yaml",
     "model:\n  fp8_output_proj: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision: bf16_with_mxfp8_mixed\nmodel:\n  fp8_output_proj: true\n"},
    .check = check,
    .checks = "MC J8",
};

}  // namespace mblint
