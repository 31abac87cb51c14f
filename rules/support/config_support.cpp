#include "rules/support/config_support.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <span>

#include "lint/model/config_fields.h"
#include "lint/model/mixed_precision_presets.h"
#include "lint/model/schema.h"

namespace mblint {

namespace {

// A YAML file the loader took for a Megatron Bridge config because one of
// its keys is a section name (`model:`, `optimizer:`), while most of its keys
// are not ConfigContainer fields: a NeMo, verl or other framework's file.
// Rules about keys and values stay silent on those. The guess is made only
// for a YAML linted on its own: a launch script that passes the file to a
// Bridge entry point settles the question, and so do --recipe and
// --dialect bridge (the job builder sets bridge_file_plausible then).
bool plausible_bridge_file(const Job& job) {
  if (job.kind == InputKind::BridgeDump) {
    const ConfigValue* target = find_child(job.config, "_target_");
    if (!target || target->kind != ValueKind::String ||
        target->text.find("ConfigContainer") == std::string::npos) {
      return false;
    }
  }
  if (job.kind != InputKind::BridgeOverrideYaml && job.kind != InputKind::BridgeDump) return true;
  int known_top = 0, unknown_top = 0, known_fields = 0, unknown_fields = 0;
  for (const MapEntry& entry : job.config.entries) {
    if (is_serialization_key(entry.key) || entry.value.where.layer == Layer::Recipe) continue;
    // A section given as a list or a number is not a ConfigContainer section
    // either (only mixed_precision may be a preset name).
    bool shaped = entry.value.is_map() || entry.value.is_null() || entry.value.is_unknown() ||
                  (entry.key == "mixed_precision" && entry.value.kind == ValueKind::String);
    if (!is_config_section(entry.key) || !shaped) {
      ++unknown_top;
      continue;
    }
    ++known_top;
    const SchemaField* field = find_schema_field("", entry.key);
    if (!entry.value.is_map() || (field && is_free_form_field(*field) && entry.key != "model" &&
                                  entry.key != "dataset")) {
      continue;
    }
    for (const MapEntry& child : entry.value.entries) {
      if (is_serialization_key(child.key) || child.value.where.layer == Layer::Recipe) continue;
      ++(is_known_field(job, entry.key, child.key) ? known_fields : unknown_fields);
    }
  }
  if (unknown_top >= 2 && unknown_top > known_top) return false;
  if (unknown_fields >= 3 && unknown_fields > known_fields) return false;
  return true;
}

}  // namespace

bool is_bridge_job(const Job& job) {
  if (job.dialect != Dialect::Bridge) return false;
  bool bridge = job.kind == InputKind::BridgeOverrideYaml || job.kind == InputKind::BridgeDump ||
                (job.kind == InputKind::LaunchScript && job.entry != EntryPoint::MegatronLM);
  if (!bridge) return false;
  if (!job.bridge_file_plausible) job.bridge_file_plausible = plausible_bridge_file(job);
  return *job.bridge_file_plausible;
}

bool is_serialization_key(std::string_view key) {
  return key == "_target_" || key == "_call_" || key == "_partial_" || key == "_args_" || key == "_name_" ||
         key == "_builder_" || key == "_recursive_" || key == "_convert_";
}

const Resolved& most_specific(std::initializer_list<const Resolved*> values) {
  const Resolved* best = *values.begin();
  for (const Resolved* r : values) {
    bool located = span_for(*r).valid();
    bool best_located = span_for(*best).valid();
    if (located && (!best_located || layer_rank(r->where().layer) > layer_rank(best->where().layer))) best = r;
  }
  return *best;
}

Diagnostic finding(const RuleInfo& rule, std::string message, std::initializer_list<const Resolved*> values) {
  const Resolved& primary = most_specific(values);
  Diagnostic diag = make_diagnostic(rule, std::move(message), span_for(primary));
  for (const Resolved* r : values) {
    if (r == &primary) continue;
    Note note = note_for(*r);
    bool duplicate = false;
    for (const Note& n : diag.notes) duplicate = duplicate || (n.message == note.message && n.where == note.where);
    if (!duplicate) diag.notes.push_back(std::move(note));
  }
  return diag;
}

void check_both_on(const Job& job, const RuleInfo& rule, const BothOn& row, std::vector<Diagnostic>& out) {
  Resolved first = resolve(job, row.first);
  Resolved second = resolve(job, row.second);
  if (!is_on(first) || !is_on(second)) return;
  report(out, finding(rule, std::string(row.message), {&first, &second}), std::string(row.help));
}

bool written_by_user(const Provenance& where) { return written_by_user(where.layer); }

Span first_span(const ConfigValue& value) {
  Span span = primary_span(value.where);
  if (span.valid()) return span;
  if (value.where.key.valid()) return value.where.key;
  for (const MapEntry& entry : value.entries) {
    span = first_span(entry.value);
    if (span.valid()) return span;
  }
  for (const ConfigValue& item : value.items) {
    span = first_span(item);
    if (span.valid()) return span;
  }
  return {};
}

// --- environment ----------------------------------------------------------------

bool has_launch_environment(const Job& job) {
  return job.kind == InputKind::LaunchScript && job.entry != EntryPoint::None && job.entry != EntryPoint::Unknown;
}

namespace {

// str(value) in Python, as os.environ.setdefault(name, str(value)) stores it.
std::optional<std::string> python_str(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::String: return value.text;
    case ValueKind::Int: return std::to_string(value.integer);
    case ValueKind::Bool: return std::string(value.boolean ? "True" : "False");
    case ValueKind::Float: return to_display(value);
    default: return std::nullopt;
  }
}

}  // namespace

EnvLookup lookup_env(const Job& job, std::string_view name) {
  EnvLookup result;
  for (auto it = job.env.rbegin(); it != job.env.rend(); ++it) {
    if (it->name != name) continue;
    result.state = EnvState::Set;
    result.value = it->value;
    result.where = it->where;
    return result;
  }
  bool launch_known = has_launch_environment(job);
  if (!is_bridge_job(job)) {
    // Megatron-LM and NeMo read the process environment only.
    if (launch_known && job.dialect == Dialect::MegatronLM) result.state = EnvState::Unset;
    return result;
  }
  const ConfigValue* env_vars = find_path(job.config, "env_vars");
  if (env_vars && env_vars->is_map()) {
    if (const ConfigValue* entry = find_child(*env_vars, name)) {
      if (entry->is_unknown()) return result;
      result.state = EnvState::Set;
      result.value = python_str(*entry);
      result.where = entry->where;
      result.from_config = true;
      return result;
    }
  }
  if (env_vars && env_vars->is_unknown()) return result;
  // A dump lists all of env_vars; so does the recipe layer for a catalog
  // recipe (the catalog records each recipe's env_vars).
  if (launch_known && (job.config_complete || job.recipe)) result.state = EnvState::Unset;
  return result;
}

EnvLookup lookup_launch_env(const Job& job, std::string_view name) {
  if (!has_launch_environment(job)) return EnvLookup{};
  return lookup_env(job, name);
}

std::optional<int64_t> env_int(const EnvLookup& env) {
  if (env.state != EnvState::Set || !env.value || env.value->empty()) return std::nullopt;
  int64_t value = 0;
  const char* end = env.value->data() + env.value->size();
  auto [ptr, ec] = std::from_chars(env.value->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string env_source(const Job& job, const EnvLookup& env) {
  if (!env.from_config) return "exported";
  if (env.where.layer == Layer::Recipe && job.recipe) return fmt::format("env_vars of recipe {}", job.recipe->name);
  return "env_vars";
}

Note note_for(const EnvLookup& env, std::string_view name) {
  if (env.state == EnvState::Unset) {
    return Note{fmt::format("{} is not set in the launch environment", name), {}};
  }
  Span span = primary_span(env.where);
  std::string value = env.value ? *env.value : std::string("an unknown value");
  if (env.from_config && env.where.layer == Layer::Recipe && !env.where.origin.empty()) {
    return Note{fmt::format("{} (Megatron Bridge applies it when the shell does not set it)", env.where.origin), span};
  }
  if (env.from_config) {
    return Note{fmt::format("env_vars sets {}={} here (Megatron Bridge applies it when the shell does not set it)",
                            name, value),
                span};
  }
  return Note{fmt::format("{}={} is set here", name, value), span};
}

// --- precision --------------------------------------------------------------------

namespace {

using PresetFields = std::map<std::string, ConfigValue, std::less<>>;

// The MixedPrecisionConfig a preset returns, field by field: its defaults
// with the preset's values on top.
PresetFields preset_fields(const MixedPrecisionPreset& preset) {
  PresetFields f;
  for (const SchemaField& field : schema_fields()) {
    if (std::string_view(field.section) != "mixed_precision") continue;
    if (auto value = literal_default(field)) f[field.name] = *value;
  }
  if (preset.config_defaults()) return f;
  auto text_or_null = [](std::string_view text) { return text.empty() ? make_null() : make_string(std::string(text)); };
  std::string dtype = preset.fp16 ? "fp16" : "bf16";
  f[dtype] = make_bool(true);
  f["params_dtype"] = make_string(dtype);
  f["pipeline_dtype"] = make_string(dtype);
  f["autocast_enabled"] = make_bool(false);
  f["grad_reduce_in_fp32"] = make_bool(preset.grad_reduce_in_fp32);
  f["fp8"] = text_or_null(preset.fp8);
  f["fp8_recipe"] = make_string(std::string(preset.fp8_recipe));
  f["fp8_param_gather"] = make_bool(preset.fp8_param_gather);
  if (preset.fp8_recipe == "delayed") {
    f["fp8_amax_history_len"] = make_int(1024);
    f["fp8_amax_compute_algo"] = make_string("max");
  }
  f["reuse_grad_buf_for_mxfp8_param_ag"] = make_bool(preset.reuse_grad_buf);
  f["first_last_layers_bf16"] = make_bool(preset.first_last_layers_bf16);
  f["num_layers_at_start_in_bf16"] = make_int(preset.layers_at_start);
  f["num_layers_at_end_in_bf16"] = make_int(preset.layers_at_end);
  f["fp4"] = text_or_null(preset.fp4);
  f["fp4_param_gather"] = make_bool(preset.fp4_param_gather);
  return f;
}

// Of a preset a recipe selected, the fields recipes never adjust afterwards
// (they do set grad_reduce_in_fp32, fp8_param_gather, fp8_recipe, ... on
// the returned object).
bool stable_preset_field(std::string_view field) {
  return field == "bf16" || field == "fp16" || field == "fp32" || field == "params_dtype" || field == "fp8" ||
         field == "fp4";
}

}  // namespace

bool is_mixed_precision_preset(std::string_view name) {
  return find_mixed_precision_preset(name, false) != nullptr;
}

std::optional<ConfigValue> mixed_precision_value(const Job& job, std::string_view field, Provenance* where,
                                                 std::string* preset) {
  const ConfigValue* mp = find_path(job.config, "mixed_precision");
  if (!mp || mp->is_null() || mp->is_unknown()) return std::nullopt;
  if (where) *where = mp->where;
  if (mp->kind == ValueKind::String) {
    if (mp->where.layer == Layer::Recipe && !stable_preset_field(field)) return std::nullopt;
    const MixedPrecisionPreset* named = find_mixed_precision_preset(mp->text, mp->where.layer == Layer::Recipe);
    if (!named) return std::nullopt;
    if (preset) *preset = mp->text;
    PresetFields fields = preset_fields(*named);
    auto it = fields.find(field);
    if (it == fields.end()) return std::nullopt;
    ConfigValue value = it->second;
    value.where = mp->where;
    return value;
  }
  if (!mp->is_map()) return std::nullopt;
  if (const ConfigValue* value = find_child(*mp, field)) {
    if (value->is_unknown()) return std::nullopt;
    if (where) *where = value->where;
    return *value;
  }
  // A mapping with _target_ (or a dump) is a fresh MixedPrecisionConfig:
  // absent fields take the dataclass defaults. Without _target_ it merges
  // into whatever the recipe had.
  if (!job.config_complete && !find_child(*mp, "_target_")) return std::nullopt;
  const SchemaField* schema = find_schema_field("mixed_precision", field);
  if (!schema) return std::nullopt;
  auto value = literal_default(*schema);
  if (value) value->where = mp->where;
  return value;
}

std::optional<std::string> transformer_impl(const Job& job) {
  Resolved r = resolve(job, "model.transformer_impl");
  if (r.known()) return r.value->kind == ValueKind::String ? std::optional<std::string>(r.value->text) : std::nullopt;
  if (find_path(job.config, "model.transformer_impl")) return std::nullopt;
  if (job.dialect == Dialect::MegatronLM) return "transformer_engine";
  if (job.recipe && job.recipe->module && std::string_view(job.recipe->module).find("gemma4") == std::string_view::npos) {
    return "transformer_engine";
  }
  return std::nullopt;
}

// --- key spelling -------------------------------------------------------------------

bool builder_backed_model(const Job& job) {
  if (const ConfigValue* target = find_path(job.config, "model._target_");
      target && target->kind == ValueKind::String) {
    return target->text.find("GPTModelConfig") != std::string::npos ||
           target->text.find("HybridModelConfig") != std::string::npos;
  }
  if (!job.recipe || !job.recipe->module) return false;
  // Llama recipes build their model with AutoBridge.get_model_config() since
  // Megatron Bridge commit 061468b (after the 0.6 releases); 0.6 and older
  // use LlamaModelProvider, a flat provider.
  bool llama = std::string_view(job.recipe->module).find("/llama/") != std::string_view::npos;
  return llama && (job.versions.bridge >= Version{0, 7, 0} || job.builder_backed_model);
}

bool is_builder_outer_field(std::string_view name) {
  // megatron/training/models/base.py ModelConfig and models/gpt.py
  // GPTModelConfig (Megatron-LM), plus Bridge's GPTModelConfig.logit_dtype.
  static constexpr std::array<std::string_view, 23> kOuter = {
      "restore_modelopt_state", "extra_checkpoint_metadata", "pre_wrap_hooks", "post_wrap_hooks",
      "transformer", "transformer_layer_spec", "vocab_size", "make_vocab_size_divisible_by",
      "should_pad_vocab", "seq_length", "fp16_lm_cross_entropy", "logit_dtype",
      "parallel_output", "share_embeddings_and_output_weights", "position_embedding_type", "rotary_percent",
      "rotary_base", "rope_scaling", "rope_scaling_factor", "scatter_embedding_sequence_parallel",
      "seq_len_interpolation_factor", "tp_comm_overlap_cfg", "use_arbitrary_attention_mask",
  };
  return std::find(kOuter.begin(), kOuter.end(), name) != kOuter.end();
}

bool is_known_field(const Job& job, std::string_view section, std::string_view name) {
  if (find_schema_field(section, name)) return true;
  const VariantField* it = find_variant_field(section, name);
  return it && variant_field_applies(job, *it);
}

}  // namespace mblint
