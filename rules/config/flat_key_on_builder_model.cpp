// Builder-backed Llama configs (GPTModelConfig) keep the transformer fields
// in a nested `transformer` dataclass. Megatron Bridge's override view is
// built from the dataclass fields, so a Hydra override must spell
// `model.transformer.tensor_model_parallel_size`: the flat key does not exist
// in struct mode and Hydra refuses it.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kFlatKeyOnBuilderModel;

namespace {

constexpr std::string_view kTransformer = "transformer.";

// How the key was written, from its span: the canonical `model.<field>` is
// `<flat>` long; spelled `model.transformer.<field>` it is 12 bytes longer.
// Anything else (an expansion, escapes) is not decided.
enum class Spelling { Flat, Nested, Unknown };

Spelling spelling_of(const Provenance& where, std::string_view field) {
  if (!where.key.valid() || !where.via.empty()) return Spelling::Unknown;
  size_t length = where.key.end - where.key.begin;
  size_t flat = std::string_view("model.").size() + field.size();
  if (length == flat) return Spelling::Flat;
  if (length == flat + kTransformer.size()) return Spelling::Nested;
  return Spelling::Unknown;
}

// A plain `key=value` change; `+`/`++` add the key, which apply_overrides then
// routes through GPTModelConfig.__setattr__ to the transformer.
bool plain_change(const Provenance& where) {
  return where.statement.valid() && where.key.valid() && where.key.begin == where.statement.begin &&
         where.key.file == where.statement.file;
}

bool from_hydra(const Provenance& where) {
  return where.layer == Layer::Override || where.layer == Layer::CommandLine ||
         where.layer == Layer::ConvenienceFlag;
}

void report(const RuleContext& context, const std::string& field, const ConfigValue& value,
            std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Provenance& where = value.where;
  bool flag = where.layer == Layer::ConvenienceFlag;
  std::string message =
      flag ? fmt::format("run_recipe.py turns this flag into the override 'model.{}={}', which Hydra rejects for "
                         "the builder-backed model of {}: \"Could not override 'model.{}'\"",
                         field, to_display(value), job.recipe_name.empty() ? "this job" : job.recipe_name, field)
           : fmt::format("Hydra cannot override 'model.{}' on the builder-backed model of {}: the field lives at "
                         "model.transformer.{} (\"Could not override 'model.{}'\")",
                         field, job.recipe_name.empty() ? "this job" : job.recipe_name, field, field);
  Diagnostic diag = make_diagnostic(kFlatKeyOnBuilderModel, std::move(message), primary_span(where));
  if (job.recipe && job.versions.bridge >= Version{0, 7, 0}) {
    diag.notes.push_back(Note{fmt::format("recipe {} builds its model with AutoBridge.get_model_config() "
                                          "(GPTModelConfig) in Megatron Bridge {}",
                                          job.recipe->name, to_string(job.versions.bridge)),
                              primary_span(job.recipe_where)});
  } else if (job.recipe) {
    diag.notes.push_back(Note{fmt::format("other keys of this job are spelled model.transformer.*, which only the "
                                          "builder-backed model of recipe {} (Megatron Bridge after 0.6) has",
                                          job.recipe->name),
                              primary_span(job.recipe_where)});
  }
  diag.help = flag ? fmt::format("drop the flag and pass model.transformer.{}={} as an override", field,
                                 to_display(value))
                   : fmt::format("write model.transformer.{}={} (YAML files may keep the flat key)", field,
                                 to_display(value));
  if (!flag && !where.key.valid()) {
    out.push_back(std::move(diag));
    return;
  }
  if (!flag) {
    Fix fix;
    fix.description = fmt::format("spell the key model.transformer.{}", field);
    fix.safety = FixSafety::Safe;  // the same setting, in the spelling that is accepted
    fix.edits.push_back(TextEdit{where.key, fmt::format("model.transformer.{}", field)});
    diag.fixes.push_back(std::move(fix));
  }
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || !builder_backed_model(job)) return;
  const ConfigValue* model = find_path(job.config, "model");
  if (!model || !model->is_map()) return;
  for (const MapEntry& entry : model->entries) {
    const Provenance& where = entry.value.where;
    if (!from_hydra(where) || is_builder_outer_field(entry.key) || is_serialization_key(entry.key)) continue;
    if (!is_known_field(job, "model", entry.key)) continue;  // unknown-key's business
    if (where.layer != Layer::ConvenienceFlag) {
      if (!plain_change(where) || spelling_of(where, entry.key) != Spelling::Flat) continue;
    }
    report(context, entry.key, entry.value, out);
  }
}

}  // namespace

extern const RuleInfo kFlatKeyOnBuilderModel = {
    .code = "MB011",
    .name = "flat-key-on-builder-model",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a flat model.* override on a builder-backed Llama config fails: spell it model.transformer.*",
    .doc = R"md(After the 0.6 releases Megatron Bridge builds the Llama 2/3/3.1/3.2 recipes (library and
performance) with `AutoBridge.from_hf_pretrained(...).get_model_config()`, a builder-backed
`GPTModelConfig`. Its transformer settings (parallel sizes, `num_layers`, recompute, `fp8`, ...)
sit in a nested `transformer` dataclass; only a few GPT-level fields (`seq_length`,
`vocab_size`, `rotary_base`, ...) stay on the model. In Python, `cfg.model.tensor_model_parallel_size`
is proxied to the nested config, but the override path is not:

* `create_omegaconf_dict_config` (`training/utils/omegaconf_utils.py`) walks the dataclass
  *fields*, so the OmegaConf view has `model.transformer.tensor_model_parallel_size` and no
  `model.tensor_model_parallel_size`;
* `parse_hydra_overrides` applies CLI overrides in struct mode, where a key that does not exist
  cannot be changed: Hydra raises "Could not override 'model.tensor_model_parallel_size'. To
  append to your config use +model.tensor_model_parallel_size=2", re-raised as
  `OverridesError`, and the job dies before training;
* `run_recipe.py`'s convenience flags (`-tp`, `-pp`, `-cp`, `-vp`, `-ep`, `-etp`) are turned into
  exactly these flat overrides, so they fail the same way for Llama recipes.

The working spelling is `model.transformer.tensor_model_parallel_size=2`. YAML files given with
`--config-file` may keep the flat keys: the merge is not in struct mode and `apply_overrides`
finds the attribute through the proxy. `+model.x=...` also works (the key is added, then set
through the proxy), so only plain changes are reported. GPT-level fields are never reported.

Versions: Megatron Bridge 0.6 and older build Llama with a flat `LlamaModelProvider`, where the
flat spelling is right; the rule applies from 0.7 (`--bridge-version 0.7`), to dumps whose
`model._target_` is a `GPTModelConfig`, and to jobs that already spell other keys
`model.transformer.*`. This follows the code at Megatron Bridge commit 067f987 (it was not run).)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n"
     "    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n    model.tensor_model_parallel_size=2\n",
     "launch.sh --bridge-version 0.7"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n"
     "    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n    model.transformer.tensor_model_parallel_size=2\n"},
    .check = check,
    .checks = "",
};

}  // namespace mblint
