// A section whose recipe value is null (or a string) given as a plain
// mapping: apply_overrides only instantiates a mapping that carries
// _target_, so the section becomes a raw dict and start-up fails when Bridge
// uses it as a config object.
#include "lint/model/schema.h"
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kNullSectionWithoutTarget;

namespace {

struct OptionalSection {
  std::string_view name;
  std::string_view target;  // the class to name in _target_
  bool recipes_set_it;      // some catalog recipe assigns it (then only a dump decides)
};

// ConfigContainer fields whose default is None. Searched in the recipe
// sources (Megatron Bridge 067f987): ft, straggler, nvrx_straggler,
// inprocess_restart and tensor_inspect are never assigned by a recipe; peft
// only by the PEFT recipes; comm_overlap and mixed_precision by many.
constexpr OptionalSection kSections[] = {
    {"comm_overlap", "megatron.bridge.training.comm_overlap.CommOverlapConfig", true},
    {"mixed_precision", "megatron.bridge.training.mixed_precision.MixedPrecisionConfig", true},
    {"peft", "megatron.bridge.peft.lora.LoRA", true},
    {"ft", "megatron.bridge.training.config.FaultToleranceConfig", false},
    {"straggler", "megatron.bridge.training.config.StragglerDetectionConfig", false},
    {"nvrx_straggler", "megatron.bridge.training.config.NVRxStragglerDetectionConfig", false},
    {"inprocess_restart", "megatron.bridge.training.config.InProcessRestartConfig", false},
    {"tensor_inspect", "megatron.bridge.training.config.TensorInspectConfig", false},
};

const OptionalSection* optional_section(std::string_view name) {
  for (const OptionalSection& s : kSections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// What the recipe leaves in the section before the file is applied:
// "null", or "" when mblint cannot tell.
std::string recipe_value(const Job& job, const OptionalSection& section) {
  if (!section.recipes_set_it) return "null";
  if (section.name == "peft" && job.recipe && std::string_view(job.recipe->task) != "peft") return "null";
  return "";
}

void missing_target(const RuleContext& context, const MapEntry& entry, std::string help, std::string why,
                    std::vector<Diagnostic>& out) {
  Span where = entry.value.where.statement.valid() ? entry.value.where.statement
               : entry.value.where.key.valid()     ? entry.value.where.key
                                                   : first_span(entry.value);
  Diagnostic diag = make_diagnostic(
      kNullSectionWithoutTarget,
      fmt::format("'{}' is given as a plain mapping without _target_, but {}: Megatron Bridge stores it as a raw "
                  "dict and start-up fails when it is used as a config object",
                  entry.key, why),
      where);
  if (context.job.recipe && !context.job.config_complete) {
    diag.notes.push_back(Note{fmt::format("recipe {} leaves {} unset (None)", context.job.recipe->name, entry.key),
                              primary_span(context.job.recipe_where)});
  }
  report(out, std::move(diag), std::move(help));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || !job.config.is_map()) return;
  for (const MapEntry& entry : job.config.entries) {
    if (!entry.value.is_map() || find_child(entry.value, "_target_")) continue;
    if (!written_by_user(entry.value.where) && !first_span(entry.value).valid()) continue;
    if (const OptionalSection* section = optional_section(entry.key)) {
      std::string help = fmt::format("add `_target_: {}` to the {} mapping", section->target, entry.key);
      if (job.config_complete) {
        missing_target(context, entry, std::move(help), "a dump is instantiated from _target_ keys", out);
      } else if (recipe_value(job, *section) == "null") {
        std::string why = section->recipes_set_it
                              ? fmt::format("{} is None in recipe {}", entry.key, job.recipe->name)
                              : fmt::format("{} is None in every recipe", entry.key);
        missing_target(context, entry, std::move(help), std::move(why), out);
      }
      continue;
    }
    // In a dump every dataclass section needs its _target_ (from_yaml only
    // instantiates what names a class); env_vars is a plain dict.
    const SchemaField* field = find_schema_field("", entry.key);
    if (!job.config_complete || !field || is_free_form_field(*field) || entry.key == "env_vars") continue;
    missing_target(context, entry,
                   fmt::format("add `_target_:` naming the {} class to the {} mapping", field->type, entry.key),
                   "a dump is instantiated from _target_ keys", out);
  }
}

}  // namespace

extern const RuleInfo kNullSectionWithoutTarget = {
    .code = "MB013",
    .name = "null-section-without-target",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a section that is None in the recipe, given as a mapping without _target_, becomes a raw dict",
    .doc = R"md(Several ConfigContainer sections are `None` unless a recipe fills them: `ft`, `straggler`,
`nvrx_straggler`, `inprocess_restart` and `tensor_inspect` (no recipe sets them), `peft` (set by
the PEFT recipes only), `comm_overlap` and `mixed_precision` (set by many recipes, sometimes to a
preset *name*). A YAML override file is merged without a schema, and `apply_overrides`
(`training/utils/omegaconf_utils.py`) only instantiates a mapping that has a `_target_`; when
the current value is `None` (or a string) it is not a dataclass to recurse into, so the mapping
is assigned as a plain `dict`. Start-up then fails where Bridge uses the section as a config
object ("'dict' object has no attribute 'finalize'" and the like).

Give the class: `comm_overlap: {_target_: megatron.bridge.training.comm_overlap.CommOverlapConfig,
tp_comm_overlap: true}`. mblint reports the mapping when it knows the recipe leaves the section
`None`: always for the five sections no recipe sets, for `peft` when the recipe is not a PEFT
recipe, and in full dumps (a dump is instantiated from its `_target_` keys, so every dataclass
section needs one). For `comm_overlap` and `mixed_precision` on a recipe, what the recipe holds is
not in mblint's catalog, so the rule stays silent.)md",
    .bad = {"override.yaml", "ft:\n  enable_ft_package: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "ft:\n  _target_: megatron.bridge.training.config.FaultToleranceConfig\n  enable_ft_package: true\n"},
    .check = check,
    .checks = "",
};

}  // namespace mblint
