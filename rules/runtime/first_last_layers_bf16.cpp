// first_last_layers_bf16 keeps some layers at each end of the model out of
// FP8. Delayed scaling cannot mix precisions that way, and each count must
// fit in one pipeline stage.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFirstLastLayersBf16;

namespace {

void delayed(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!p.fp8_recipe.is("delayed")) return;
  bool recipe_last = rank_of(p.fp8_recipe.where) > rank_of(p.first_last_layers_bf16.where);
  Diagnostic diag = make_diagnostic(
      kFirstLastLayersBf16, "fp8 delayed scaling does not support first_last_layers_bf16 (BF16 first/last layers)",
      first_span(job, {recipe_last ? span_for(p.fp8_recipe) : span_for(p.first_last_layers_bf16),
                       span_for(p.first_last_layers_bf16)}));
  diag.notes.push_back(recipe_last ? note_for(p.first_last_layers_bf16) : note_for(p.fp8_recipe));
  report(out, std::move(diag),
         for_dialect(job, "use fp8_recipe tensorwise (current scaling), or set first_last_layers_bf16 to false",
                     "pass --fp8-recipe tensorwise (current scaling), or drop --first-last-layers-bf16"),
         {text_fix(job, p.fp8_recipe, "tensorwise"), flag_fix(job, p.first_last_layers_bf16, false)});
}

void counts(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (!d.num_layers.known() || !d.pipeline_parallel.known() || *d.pipeline_parallel <= 0) return;
  int64_t limit = *d.num_layers / *d.pipeline_parallel;
  for (const Quantity* count : {&p.layers_at_start_in_bf16, &p.layers_at_end_in_bf16}) {
    if (!count->known() || (*count->value >= 0 && *count->value <= limit)) continue;
    Diagnostic diag = make_diagnostic(
        kFirstLastLayersBf16,
        fmt::format("{} {} must be between 0 and the {} layers of a pipeline stage ({} layers / "
                    "pipeline_model_parallel_size {})",
                    count->name, *count->value, limit, *d.num_layers, *d.pipeline_parallel),
        first_span(job, {span_for(*count)}));
    add_notes(diag, {&d.num_layers, &d.pipeline_parallel}, nullptr);
    report(out, std::move(diag), fmt::format("use {} between 0 and {}", count->name, limit),
           {int_fix(job, *count, *count->value < 0 ? 0 : limit)});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Precision& p = effective_precision(context);
  if (!p.fp8.is_set() || !p.first_last_layers_bf16.value.value_or(false)) return;
  delayed(context, p, out);
  counts(context, p, out);
}

}  // namespace

extern const RuleInfo kFirstLastLayersBf16 = {
    .code = "MB820",
    .name = "first-last-layers-bf16",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "BF16 first/last layers with FP8 delayed scaling, or more BF16 layers than a pipeline stage holds",
    .doc = R"md(With FP8 training, `first_last_layers_bf16` keeps `num_layers_at_start_in_bf16` layers at the
start and `num_layers_at_end_in_bf16` at the end in BF16 (the current-scaling presets keep one or
two). Megatron-Core's `TransformerConfig.__post_init__` raises a `ValueError` (every release):

* with `fp8_recipe: delayed`: "Delayed scaling does not support first / last layer in BF16.";
* when a count is negative or larger than `num_layers // pipeline_model_parallel_size`: "...
  must be between 0 and number of layers per pipeline stage".

Under Megatron Bridge, these fields come from `mixed_precision` when it is set (its defaults are 0
layers; Megatron-Core's and Megatron-LM's are 1).)md",
    .bad = {"override.yaml",
     "mixed_precision:\n  fp8: hybrid\n  fp8_recipe: delayed\n  first_last_layers_bf16: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision: bf16_with_fp8_current_scaling_mixed\n"},
    .check = check,
    .checks = "MC J7",
};

}  // namespace mblint
