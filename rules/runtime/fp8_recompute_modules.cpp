// Recomputing the MoE activation or the layer norms under FP8 needs the FP8
// scaling to be recomputable too: Megatron-Core 0.13 rejects it for every
// FP8 recipe, later releases for delayed scaling (its amax history would be
// updated twice).
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp8RecomputeModules;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Version version = job.versions.megatron_core;
  if (version < Version{0, 13, 0}) return;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (!granularity.is("selective")) return;
  NameList modules = recompute_modules(job);
  std::vector<std::string> hit;
  for (std::string_view name : {"moe_act", "layernorm"}) {
    if (modules.contains(name)) hit.emplace_back(name);
  }
  if (hit.empty()) return;
  const Precision& precision = effective_precision(context);
  if (!precision.fp8.is_set()) return;
  bool every_recipe = version < Version{0, 14, 0};
  if (!every_recipe && !precision.fp8_recipe.is("delayed")) return;
  std::string what = join_names(hit);
  Diagnostic diag = make_diagnostic(
      kFp8RecomputeModules,
      every_recipe ? fmt::format("recompute_modules has {} with fp8 {}: Megatron-Core {} cannot recompute them in FP8",
                                 what, *precision.fp8.value, to_string(version))
                   : fmt::format("recompute_modules has {} with fp8 delayed scaling, which cannot recompute them "
                                 "(use current scaling or MXFP8)",
                                 what),
      first_span(job, {span_for(modules), span_for(granularity)}));
  diag.notes.push_back(note_for(precision.fp8));
  if (!every_recipe) diag.notes.push_back(note_for(precision.fp8_recipe));
  if (every_recipe) {
    diag.help = fmt::format("drop {} from recompute_modules, or run Megatron-Core 0.14 or later with a non-delayed "
                            "FP8 recipe",
                            what);
  } else {
    diag.help = job.dialect == Dialect::MegatronLM
                    ? fmt::format("pass --fp8-recipe tensorwise (or mxfp8), or drop {} from --recompute-modules", what)
                    : fmt::format("use fp8_recipe tensorwise (mixed_precision bf16_with_fp8_current_scaling_mixed) or "
                                  "mxfp8, or drop {} from recompute_modules",
                                  what);
    diag.fixes.push_back(text_fix(job, precision.fp8_recipe, "tensorwise"));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kFp8RecomputeModules = {
    .code = "MB807",
    .name = "fp8-recompute-modules",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "moe_act / layernorm recompute with FP8 delayed scaling (any FP8 on Megatron-Core 0.13)",
    .doc = R"md(Selective recompute of `moe_act` or `layernorm` reruns those ops in the backward pass. Under
FP8 the quantization has to be replayed identically, which delayed scaling (with its amax history)
cannot do. Megatron-Core's `TransformerConfig.__post_init__` raises a `ValueError` before the model
is built:

* Megatron-Core 0.13: for every FP8 recipe ("moe_act and layernorm recompute cannot work with fp8");
* from 0.14: for `fp8_recipe: delayed` ("Delayed scaling does not support moe_act and layernorm
  recompute for fp8"); other recipes also need TransformerEngine 2.6, which mblint cannot see.

Under Megatron Bridge the FP8 settings that count are `mixed_precision`'s (a preset such as
`bf16_with_fp8_delayed_scaling_mixed`, or its fields); they overwrite `model.fp8*` at start-up.)md",
    .bad = {"override.yaml",
     "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  recompute_granularity: selective\n"
     "  recompute_modules: [layernorm]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "mixed_precision: bf16_with_fp8_current_scaling_mixed\nmodel:\n  recompute_granularity: selective\n"
     "  recompute_modules: [layernorm]\n"},
    .check = check,
    .checks = "MC I7, PS 66",
};

}  // namespace mblint
