// MixedPrecisionConfig.setup() copies every one of its fields onto the model,
// optimizer and DDP configs that have the same field, whenever the values
// differ. A precision setting written on model.* / optimizer.* / ddp.* while
// mixed_precision is set is therefore silently replaced at start-up.
#include "lint/model/schema.h"
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kPrecisionOverriddenByMixedPrecision;

namespace {

// fp8_param / fp4_param are kept in sync with *_param_gather inside
// MixedPrecisionConfig; the pair is reported through *_param_gather.
bool copied_field(std::string_view field) { return field != "fp8_param" && field != "fp4_param"; }

bool is_dtype_field(std::string_view field) { return field.size() > 6 && field.substr(field.size() - 6) == "_dtype"; }

// Whether the user's value survives: Python compares with `!=`, but null and
// false mean the same for these options, so only a different meaning counts.
std::optional<bool> same_setting(std::string_view field, const ConfigValue& user, const ConfigValue& mixed) {
  if (user.is_unknown() || mixed.is_unknown()) return std::nullopt;
  if (is_dtype_field(field)) {
    auto a = dtype_name(user), b = dtype_name(mixed);
    if (a && b) return *a == *b;
    if (user.is_null() || mixed.is_null()) return user.is_null() && mixed.is_null();
    return std::nullopt;
  }
  bool user_off = user.is_null() || (user.kind == ValueKind::Bool && !user.boolean);
  bool mixed_off = mixed.is_null() || (mixed.kind == ValueKind::Bool && !mixed.boolean);
  if (user_off || mixed_off) return user_off == mixed_off;
  if (user.kind == ValueKind::Bool && mixed.kind == ValueKind::Bool) return user.boolean == mixed.boolean;
  if (auto a = as_number(&user), b = as_number(&mixed); a && b) return *a == *b;
  if (user.kind == ValueKind::String && mixed.kind == ValueKind::String) return user.text == mixed.text;
  return std::nullopt;
}

std::string shown(std::string_view field, const ConfigValue& value) {
  if (is_dtype_field(field)) {
    if (auto name = dtype_name(value)) return *name;
  }
  if (value.kind == ValueKind::String) return value.text;
  return to_display(value);
}

void check_field(const RuleContext& context, std::string_view section, std::string_view field,
                 std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  std::string path = fmt::format("{}.{}", section, field);
  const ConfigValue* user = find_path(job.config, path);
  if (!user || !written_by_user(user->where)) return;
  Provenance mixed_where;
  std::string preset;
  auto mixed = mixed_precision_value(job, field, &mixed_where, &preset);
  if (!mixed) return;
  auto same = same_setting(field, *user, *mixed);
  if (!same || *same) return;
  std::string source = preset.empty() ? std::string("mixed_precision") : fmt::format("mixed_precision {}", preset);
  Diagnostic diag = make_diagnostic(
      kPrecisionOverriddenByMixedPrecision,
      fmt::format("{} = {} is overwritten at start-up: {} sets {} to {} on the {} config", path, shown(field, *user),
                  source, field, shown(field, *mixed), section),
      primary_span(user->where));
  Span mixed_span = primary_span(mixed_where);
  if (mixed_where.layer == Layer::Recipe && !mixed_where.origin.empty()) {
    diag.notes.push_back(Note{mixed_where.origin, mixed_span});
  } else if (preset.empty()) {
    diag.notes.push_back(Note{fmt::format("mixed_precision.{} is {} here", field, shown(field, *mixed)), mixed_span});
  } else {
    diag.notes.push_back(Note{fmt::format("{} is set here", source), mixed_span});
  }
  report(out, std::move(diag),
         fmt::format("set mixed_precision.{} instead (or choose a mixed_precision preset that has it)", field));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  for (const SchemaField& field : schema_fields()) {
    if (std::string_view(field.section) != "mixed_precision" || !copied_field(field.name)) continue;
    for (std::string_view section : {"model", "optimizer", "ddp"}) {
      if (find_schema_field(section, field.name)) check_field(context, section, field.name, out);
    }
  }
}

}  // namespace

extern const RuleInfo kPrecisionOverriddenByMixedPrecision = {
    .code = "MB012",
    .name = "precision-overridden-by-mixed-precision",
    .group = RuleGroup::Config,
    .severity = Severity::Warning,
    .summary = "a precision setting on model/optimizer/ddp that mixed_precision silently overwrites",
    .doc = R"md(When `mixed_precision` is set (a preset name such as `bf16_mixed`, or a
`MixedPrecisionConfig`), Megatron Bridge's `runtime_config_update` resolves it and calls
`MixedPrecisionConfig.setup()` (`training/mixed_precision.py`), which copies **every**
`MixedPrecisionConfig` field onto the model, optimizer and DDP configs that have a field of the
same name, whenever the two differ: `bf16`, `fp16`, `params_dtype`, `pipeline_dtype`, `fp8`,
`fp8_recipe`, `fp8_param_gather`, `fp4`, `grad_reduce_in_fp32`, `first_last_layers_bf16`, the loss
scaling settings, ... There is no warning (a debug log line only). So `model.fp8: hybrid` with
`mixed_precision: bf16_mixed` trains in plain BF16, because the preset's `fp8` is null, and
`ddp.grad_reduce_in_fp32: false` is put back to true. Precision must be changed through
`mixed_precision.*` (or by choosing another preset).

mblint reports a value written on `model.*`, `optimizer.*` or `ddp.*` (in a file, an override or
on the command line, and every field of a full dump, whose edited values are overwritten the same
way when it is loaded) whose meaning differs from what `mixed_precision` will write; equal values,
and null versus false, are not reported because nothing changes. That covers the precision switches
(`bf16`, `fp16`, `fp8`, `fp8_recipe`, `fp8_param_gather`, `fp4`, ...), the BF16 layer counts,
`grad_reduce_in_fp32`, the MXFP8 buffer reuse, `params_dtype`, `pipeline_dtype`, `autocast_dtype`,
the FP8 scaling options, `fp4_recipe`, the loss-scaling settings and the optimizer's `fp8_recipe`
(`src/megatron/bridge/training/mixed_precision.py`, `update_config_with_precision_overrides`, the
same from v0.2.0 to v0.6.0). The preset values are those of
`mixed_precision.py` and of the performance recipes' short names (`bf16`, `fp8_cs`, `fp8_mx`,
`nvfp4`: the preset with `grad_reduce_in_fp32 = False`). For a preset the recipe chose, only
`bf16`, `fp16`, `params_dtype`, `fp8` and `fp4` are relied on (recipes adjust the rest after
choosing); a `mixed_precision` mapping counts for the fields it lists, and with `_target_` (or in
a dump) the other fields take the dataclass defaults.)md",
    .bad = {"override.yaml", "model:\n  params_dtype: torch.float32\nmixed_precision: bf16_mixed\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  params_dtype: torch.bfloat16\nmixed_precision: bf16_mixed\n"},
    .check = check,
    .checks = "PS 45",
};

}  // namespace mblint
