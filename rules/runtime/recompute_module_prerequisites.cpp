// Some selective-recompute modules only exist in certain models: moe_act
// needs the grouped-GEMM experts, mla_up_proj multi-latent attention,
// gdn_norm_out gated delta-net attention, and shared_experts cannot be
// recomputed while it overlaps with the expert dispatch.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kRecomputeModulePrerequisites;

namespace {

// multi_latent_attention as written, or what the recipe's model uses.
Setting multi_latent_attention(const Job& job) {
  Setting mla = read_flag(job, "model.multi_latent_attention");
  if (mla.value || config_node(job, "model.multi_latent_attention") || !job.recipe || !job.recipe->dims) return mla;
  mla.value = job.recipe->dims->multi_latent_attention;
  mla.where = job.recipe_where;
  mla.where.layer = Layer::Recipe;
  mla.where.origin = fmt::format("recipe {} builds {}, {}", job.recipe->name, job.recipe->dims->key,
                                 *mla.value ? "with multi-latent attention" : "without multi-latent attention");
  return mla;
}

struct Finding {
  std::string module;
  std::string message;
  std::vector<Note> notes;
  std::string help;
  std::vector<Fix> fixes;
};

void collect(const RuleContext& context, const NameList& modules, std::vector<Finding>& found) {
  const Job& job = context.job;
  if (modules.contains("moe_act")) {
    Setting grouped = read_flag(job, "model.moe_grouped_gemm");
    if (grouped.value && !*grouped.value) {
      found.push_back({"moe_act", "recompute_modules has 'moe_act', which needs moe_grouped_gemm, but it is false",
                       {note_for(grouped)}, "set moe_grouped_gemm to true, or drop 'moe_act' from recompute_modules",
                       {flag_fix(job, grouped, true)}});
    }
  }
  if (modules.contains("mla_up_proj")) {
    Setting mla = multi_latent_attention(job);
    if (mla.value && !*mla.value) {
      found.push_back({"mla_up_proj",
                       "recompute_modules has 'mla_up_proj', which needs multi-latent attention; this model does not "
                       "use it",
                       {note_for(mla)}, "drop 'mla_up_proj' from recompute_modules (or recompute 'core_attn')", {}});
    }
  }
  if (modules.contains("gdn_norm_out") && job.versions.megatron_core >= Version{0, 19, 0}) {
    Choice variant = read_choice(job, "model.experimental_attention_variant");
    if (variant.known && !variant.is("gated_delta_net")) {
      found.push_back({"gdn_norm_out",
                       fmt::format("recompute_modules has 'gdn_norm_out', which needs experimental_attention_variant "
                                   "gated_delta_net, but it is {}",
                                   variant.value ? *variant.value : "None"),
                       {note_for(variant)}, "drop 'gdn_norm_out' from recompute_modules", {}});
    }
  }
  if (modules.contains("shared_experts") && job.versions.megatron_core >= Version{0, 14, 0}) {
    Quantity shared = config_int(job, "model.moe_shared_expert_intermediate_size");
    Setting overlap = read_flag(job, "model.moe_shared_expert_overlap");
    if (shared.known() && overlap.value.value_or(false)) {
      found.push_back({"shared_experts",
                       "recompute_modules has 'shared_experts', which cannot be recomputed while "
                       "moe_shared_expert_overlap runs the shared experts beside the expert dispatch",
                       {note_for(overlap), note_for(shared)},
                       "set moe_shared_expert_overlap to false, or drop 'shared_experts' from recompute_modules",
                       {flag_fix(job, overlap, false)}});
    }
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (!granularity.is("selective")) return;
  NameList modules = recompute_modules(job);
  if (!modules.items) return;
  std::vector<Finding> found;
  collect(context, modules, found);
  for (Finding& f : found) {
    Diagnostic diag = make_diagnostic(kRecomputeModulePrerequisites, std::move(f.message),
                                      first_span(job, {span_for(modules), span_for(granularity)}));
    diag.notes = std::move(f.notes);
    diag.help = std::move(f.help);
    diag.fixes = std::move(f.fixes);
    out.push_back(std::move(diag));
  }
}

}  // namespace

extern const RuleInfo kRecomputeModulePrerequisites = {
    .code = "MB806",
    .name = "recompute-module-prerequisites",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "a selective-recompute module the model does not have, or one that conflicts with shared-expert overlap",
    .doc = R"md(Megatron-Core's `TransformerConfig.__post_init__` checks that each module listed in
`recompute_modules` (with `recompute_granularity: selective`) exists in the model, and raises a
`ValueError` before the model is built when it does not:

* `moe_act` needs `moe_grouped_gemm` ("moe_act in recompute_modules is only supported with
  moe_grouped_gemm");
* `mla_up_proj` needs `multi_latent_attention` ("... only supported with multi_latent_attention");
* `gdn_norm_out` needs `experimental_attention_variant: gated_delta_net` (Megatron-Core 0.19);
* `shared_experts` cannot be recomputed with `moe_shared_expert_overlap` on a model with shared
  experts ("shared_experts recompute cannot work with --moe-shared-expert-overlap", from 0.14).

Megatron Bridge and Megatron-LM both run these checks. Whether a recipe's model uses multi-latent
attention comes from mblint's catalog when the config does not say. FP8 with `moe_act` or
`layernorm` is `fp8-recompute-modules`; 'moe' with expert-parallel overlap is checked with the
other overlap prerequisites.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: selective\n  recompute_modules: [mla_up_proj]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn]\n"},
    .check = check,
    .checks = "MC I7, PS 66",
};

}  // namespace mblint
