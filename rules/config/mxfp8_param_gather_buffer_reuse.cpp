// MXFP8 parameter all-gather without reusing the gradient buffer: Megatron
// Bridge asserts the reuse flag (outside Megatron-FSDP).
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kMxfp8ParamGatherBufferReuse;

namespace {

Resolved mixed(const Job& job, std::string_view field) {
  Resolved r;
  r.path = fmt::format("mixed_precision.{}", field);
  Provenance where;
  std::string preset;
  if (auto value = mixed_precision_value(job, field, &where, &preset)) {
    r.value = *value;
    r.value->where = where;
    // Absent from a mixed_precision mapping: the dataclass default, written nowhere.
    const ConfigValue* mp = find_path(job.config, "mixed_precision");
    if (mp && mp->is_map() && !find_child(*mp, field)) {
      r.defaulted = true;
      return r;
    }
    if (!preset.empty() || where.layer == Layer::Recipe) {
      r.value->where.origin = fmt::format("mixed_precision {} has {} = {}", preset.empty() ? "" : preset, field,
                                          to_display(*value));
    }
  }
  return r;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved gather = mixed(job, "fp8_param_gather");
  Resolved recipe = mixed(job, "fp8_recipe");
  Resolved reuse = mixed(job, "reuse_grad_buf_for_mxfp8_param_ag");
  if (!is_on(gather) || !recipe.known() || recipe.value->kind != ValueKind::String || recipe.value->text != "mxfp8") {
    return;
  }
  if (!is_off(reuse)) return;
  // Megatron-FSDP does its own MXFP8 gather (and turns the reuse off).
  if (switch_value(job, "ddp.use_megatron_fsdp") != false || switch_value(job, "dist.use_megatron_fsdp") != false) {
    return;
  }
  report(out,
         finding(kMxfp8ParamGatherBufferReuse,
                 "fp8_param_gather with fp8_recipe mxfp8 needs reuse_grad_buf_for_mxfp8_param_ag: Megatron "
                 "Bridge asserts \"When fp8_param_gather=True and fp8_recipe='mxfp8', "
                 "reuse_grad_buf_for_mxfp8_param_ag must be set to True\"",
                 {&reuse, &gather, &recipe}),
         "set mixed_precision.reuse_grad_buf_for_mxfp8_param_ag to true (the bf16_with_mxfp8_mixed preset does)");
}

}  // namespace

extern const RuleInfo kMxfp8ParamGatherBufferReuse = {
    .code = "MB962",
    .name = "mxfp8-param-gather-buffer-reuse",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "MXFP8 with fp8_param_gather needs reuse_grad_buf_for_mxfp8_param_ag (without Megatron-FSDP)",
    .doc = R"md(MXFP8 keeps block-scaled weights whose all-gather needs a staging buffer; Megatron reuses the
gradient buffer for it. Megatron Bridge's `ConfigContainer.validate()` asserts, when Megatron-FSDP is
off: "When fp8_param_gather=True and fp8_recipe='mxfp8', reuse_grad_buf_for_mxfp8_param_ag must be
set to True". The MXFP8 presets (`bf16_with_mxfp8_mixed`, `fp16_with_mxfp8_mixed`) set it; a
hand-written `mixed_precision` section, or a preset with `reuse_grad_buf_for_mxfp8_param_ag: false`,
fails at start-up. Megatron-FSDP turns the reuse off itself and is not checked.

The values are `mixed_precision`'s (which `MixedPrecisionConfig.setup()` copies onto ddp and
optimizer).)md",
    .bad = {"override.yaml",
     "mixed_precision:\n  _target_: megatron.bridge.training.mixed_precision.MixedPrecisionConfig\n  bf16: true\n"
     "  fp8: e4m3\n  fp8_recipe: mxfp8\n  fp8_param_gather: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "mixed_precision:\n  _target_: megatron.bridge.training.mixed_precision.MixedPrecisionConfig\n  bf16: true\n"
     "  fp8: e4m3\n  fp8_recipe: mxfp8\n  fp8_param_gather: true\n  reuse_grad_buf_for_mxfp8_param_ag: true\n"},
    .check = check,
    .checks = "BR V17",
};

}  // namespace mblint
