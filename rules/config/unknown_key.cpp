// A key that is no field of its ConfigContainer section: Megatron Bridge's
// apply_overrides logs a warning and skips it, so the setting silently does
// nothing.
#include "lint/model/schema.h"
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kUnknownKey;

namespace {

// Sections with several dataclasses: the message cannot name one class.
bool has_variants(std::string_view section) {
  return section == "model" || section == "dataset" || section == "peft";
}

std::string owner_of(std::string_view section) {
  if (section.empty()) return "ConfigContainer";
  if (has_variants(section)) return fmt::format("any {} config class", section);
  for (const SchemaField& field : schema_fields()) {
    if (field.section == section) return field.variant;
  }
  return std::string(section);
}

// Where the key was written: the whole `key=value` word of an override,
// else the YAML key.
Span key_span(const ConfigValue& value) {
  if (value.where.statement.valid()) return value.where.statement;
  if (value.where.key.valid()) return value.where.key;
  return first_span(value);
}

// Keys the docs use that no GPT provider has: say what to use instead.
std::string known_confusion(std::string_view section, std::string_view name) {
  if (section == "model" && name == "max_position_embeddings") {
    return "GPT model providers have no max_position_embeddings (only T5 does): the position limit is "
           "model.seq_length";
  }
  if (section == "optimizer" && name == "finetune_lr") {
    return "finetune_lr is an argument of some recipe functions, not a config field: set optimizer.lr";
  }
  return "";
}

// The edit that renames the key where it was written, when the written key
// is exactly the field name or the dotted path.
std::optional<TextEdit> rename_key(const ConfigValue& value, std::string_view section, std::string_view name,
                                   const std::string& replacement) {
  Span key = value.where.key;
  if (!key.valid() || !written_by_user(value.where) || !value.where.via.empty()) return std::nullopt;
  size_t length = key.end - key.begin;
  if (length == name.size()) return TextEdit{key, replacement};
  if (length == section.size() + 1 + name.size()) return TextEdit{key, fmt::format("{}.{}", section, replacement)};
  return std::nullopt;
}

// The rename, re-checked by the engine before it is offered (the value
// starts to apply, and may break something: lint/fix/fix_verify.h).
void add_rename_fix(std::string_view section, std::string_view name, const ConfigValue& value,
                    const std::string& replacement, Diagnostic& diag) {
  Fix fix;
  fix.description = fmt::format("rename the key to {}", replacement);
  fix.safety = FixSafety::Unsafe;  // the value starts to apply
  std::string prefix = section.empty() ? "" : fmt::format("{}.", section);
  fix.changes.push_back(SettingChange{prefix + replacement, "", fmt::format("{}{}", prefix, name)});
  if (auto edit = rename_key(value, section, name, replacement)) fix.edits.push_back(*edit);
  diag.fixes.push_back(std::move(fix));
}

void report(const RuleContext& context, std::string_view section, std::string_view name,
            const ConfigValue& value, std::vector<Diagnostic>& out) {
  std::string dotted = section.empty() ? std::string(name) : fmt::format("{}.{}", section, name);
  std::string consequence =
      context.job.config_complete
          ? std::string("loading the dump (ConfigContainer.from_yaml, LENIENT) drops it")
          : fmt::format("{} logs \"Key '{}' in overrides not found in config object\" and skips it",
                        value.where.layer == Layer::Override || value.where.layer == Layer::CommandLine
                            ? "added with '+' but Megatron Bridge"
                            : "Megatron Bridge",
                        name);
  Diagnostic diag = make_diagnostic(kUnknownKey,
                                    fmt::format("'{}' is not a field of {}: {}, so this setting does nothing", dotted,
                                                owner_of(section), consequence),
                                    key_span(value));
  std::vector<std::string> similar = similar_field_names(section, name, 1);
  std::string confusion = known_confusion(section, name);
  if (!confusion.empty()) {
    diag.help = confusion;
  } else if (!similar.empty()) {
    std::string intended = fmt::format("{}{}{}", section, section.empty() ? "" : ".", similar.front());
    diag.help = fmt::format("did you mean {}?", intended);
    // Renaming next to the key it means would write that key twice.
    const ConfigValue* present = find_path(context.job.config, intended);
    if (present && present->where.key.valid() && present->where.key.file == value.where.key.file) {
      diag.notes.push_back(Note{fmt::format("{} is set here already", intended), present->where.key});
      diag.help = fmt::format("did you mean {}? it is set in this file already: remove this key", intended);
    } else {
      add_rename_fix(section, name, value, similar.front(), diag);
    }
  } else {
    diag.help = fmt::format("remove it, or check the spelling against {}", owner_of(section));
  }
  out.push_back(std::move(diag));
}

bool skip(const ConfigValue& value) {
  // mblint's own catalog writes some keys (model dimensions); they are not the user's.
  return value.where.layer == Layer::Recipe || value.where.layer == Layer::Rewrite ||
         value.where.layer == Layer::SchemaDefault;
}

void check_section(const RuleContext& context, const MapEntry& section,
                   std::vector<Diagnostic>& out) {
  const SchemaField* field = find_schema_field("", section.key);
  if (!field || !section.value.is_map()) return;
  // env_vars and other dict-typed sections take any key.
  if (section.key != "model" && section.key != "dataset" && is_free_form_field(*field)) return;
  for (const MapEntry& entry : section.value.entries) {
    if (is_serialization_key(entry.key) || skip(entry.value)) continue;
    if (is_known_field(context.job, section.key, entry.key)) continue;
    report(context, section.key, entry.key, entry.value, out);
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || !job.config.is_map()) return;
  for (const MapEntry& entry : job.config.entries) {
    if (is_serialization_key(entry.key) || skip(entry.value) || !in_scope(context, entry.key)) continue;
    if (!is_config_section(entry.key)) {
      report(context, "", entry.key, entry.value, out);
      continue;
    }
    check_section(context, entry, out);
  }
}

}  // namespace

extern const RuleInfo kUnknownKey = {
    .code = "MB010",
    .name = "unknown-key",
    .group = RuleGroup::Config,
    .severity = Severity::Warning,
    .summary = "a key that is no field of its config section is skipped by Megatron Bridge",
    .doc = R"md(Megatron Bridge merges a `--config-file` YAML into the recipe without a schema (OmegaConf
merge accepts any key), and `+key=value` overrides may add keys Hydra has never seen. The values
are then copied onto the dataclasses by `apply_overrides`
(`training/utils/omegaconf_utils.py`): a key the dataclass does not have is skipped with only a
log line, "Key 'finetune_lr' in overrides not found in config object OptimizerConfig.
Skipping.". Full dumps loaded with `ConfigContainer.from_yaml` drop unknown keys the same way
(LENIENT mode). The run starts and the setting silently does nothing, so this is a warning, not an
error: nothing rejects the job. `_apply_overrides` has skipped unknown keys with that log line in
every release from 0.2 (where the example scripts called it themselves) through 0.6 and the
development branch. (A Hydra override *without* `+` of a key that does not exist is different:
Hydra rejects it in struct mode, reported by `override-syntax`.)

Real cases: `optimizer.finetune_lr` in the Qwen3-Next finetune example (a recipe-function
argument, not an `OptimizerConfig` field) and `model.max_position_embeddings` in the
Megatron-LM migration guide (GPT providers have no such field; the limit is `seq_length`).

mblint checks the first level of each section against the fields Megatron Bridge declares.
Sections with several classes (`model`, `dataset`, `peft`) accept the fields of any of them,
including model-specific providers (a VLM's `freeze_vision_model`, distillation's `teacher`);
T5-only fields count only when `model._target_` names T5. DeepSeek V4 recipes need Megatron-Core
dev (no release has its attention), so the `TransformerConfig` fields only dev declares
(`cp_partition_mode`, `csa_window_size`, ...; Megatron-LM d48bd6be0a85, absent at the 2a75ac12c5
Bridge pins) count for a DeepSeek V4 job only. Builder-backed Llama configs'
`model.transformer.*` are read as `model.*`. Free-form dict sections (`env_vars`) and the
serialization keys of dumps (`_target_`, `_call_`, ...) are not checked, nor are keys the recipe
itself sets. The rule applies to Megatron Bridge jobs only.

A YAML file linted on its own, with no `--recipe` and no `--dialect`, may belong to another
framework that also has a `model:` section (NeMo, verl): when most of its keys (three or more)
are no Bridge fields, mblint takes it for such a file and says nothing about its keys. That guess
is made only then: a YAML applied to a recipe (`--recipe`), forced with `--dialect bridge`, or
passed by a launch script to a Bridge entry point (`--config-file`) is a Bridge file, and every
misspelled key in it is reported.

The did-you-mean comes with a fix that renames the key where it was written (also a quick fix in
the editor). The rename makes the value apply, so it is re-checked first: the job with the key
renamed is linted again, and when that brings a new error or warning (the value breaks something once
it applies) the rename is not offered and the help names the finding. `--fix --unsafe-fixes` applies
renames pass by pass, so keys that only make sense together (TP and sequence parallelism) are
renamed in turn. When the intended key is set in the same file already, no rename is offered (it
would write the key twice): the help says to remove the misspelled one.)md",
    .bad = {"override.yaml", "optimizer:\n  finetune_lr: 0.000005\n  min_lr: 0.000005\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "optimizer:\n  lr: 0.000005\n  min_lr: 0.000005\n"},
    .check = check,
    .checks = "",
    .scope = RuleScope::Section,
};

}  // namespace mblint
