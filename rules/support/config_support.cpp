#include "rules/support/config_support.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <span>

#include "lint/model/schema.h"
#include "rules/support/variant_fields.h"

namespace mblint {

namespace {

struct VariantField {
  const char* section;
  const char* name;
  const char* family;  // "" any variant; else the section's _target_ must name it
  const char* type;    // the variants' annotations, " | "-joined
};

#include "rules/support/config_fields_data.inc"

const VariantField* find_variant_field(std::string_view section, std::string_view name) {
  auto it = std::lower_bound(std::begin(kVariantFields), std::end(kVariantFields), std::make_pair(section, name),
                             [](const VariantField& f, const std::pair<std::string_view, std::string_view>& key) {
                               if (f.section != key.first) return std::string_view(f.section) < key.first;
                               return std::string_view(f.name) < key.second;
                             });
  if (it == std::end(kVariantFields) || it->section != section || it->name != name) return nullptr;
  return &*it;
}

// Fields that no recipe of the catalog (Megatron Bridge 067f987, recipes/
// and perf_recipes/) assigns, checked by searching the recipe sources: for a
// job built on a catalog recipe they keep the dataclass default unless the
// user's files change them.
constexpr std::string_view kNotSetByRecipes[] = {
    "checkpoint.also_save_hf_checkpoint", "checkpoint.ckpt_step",
    "checkpoint.hf_source_path",          "checkpoint.load_main_params_from_ckpt",
    "checkpoint.non_persistent_ckpt_type", "checkpoint.use_persistent_ckpt_worker",
    "ddp.megatron_fsdp_version",          "dist.use_decentralized_pg",
    "dist.use_gloo_process_groups",       "dist.use_torch_fsdp2",
    "dist.use_tp_pp_dp_mapping",          "logger.comet_api_key",
    "logger.comet_experiment_name",       "logger.comet_project",
    "logger.comet_tags",                  "logger.comet_workspace",
    "logger.mlflow_description",          "logger.mlflow_experiment",
    "logger.mlflow_run_name",             "logger.mlflow_tags",
    "logger.mlflow_tracking_uri",         "model.restore_modelopt_state",
    "profiling.profile_step_end",         "profiling.profile_step_start",
    "profiling.use_nsys_profiler",        "profiling.use_pytorch_profiler",
};

bool not_set_by_recipes(std::string_view path) {
  return std::find(std::begin(kNotSetByRecipes), std::end(kNotSetByRecipes), path) != std::end(kNotSetByRecipes);
}

std::optional<ConfigValue> schema_default(std::string_view path) {
  size_t dot = path.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const SchemaField* field = find_schema_field(path.substr(0, dot), path.substr(dot + 1));
  if (!field) return std::nullopt;
  if (auto value = literal_default(*field)) return value;
  // `field(default=True, metadata=...)`: the literal inside.
  std::string_view text = field->default_text ? field->default_text : "";
  constexpr std::string_view kPrefix = "field(default=";
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  std::string_view literal = text.substr(0, text.find_first_of(",)"));
  SchemaField copy = *field;
  std::string storage(literal);
  copy.default_text = storage.c_str();
  return literal_default(copy);
}

}  // namespace

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

namespace {

bool listed(std::span<const std::string_view> names, std::string_view name) {
  return std::binary_search(names.begin(), names.end(), name);
}

// What a catalog recipe is known to leave in `path`, from the recipe
// sources (see tools/gen_config_fields.py); nullopt when not known.
std::optional<ConfigValue> recipe_fact(const Recipe& recipe, std::string_view path, std::string& origin) {
  std::string_view name = recipe.name;
  if (path == "checkpoint.ckpt_format" && !listed(kRecipesMaybeOtherCkptFormat, name)) {
    origin = fmt::format("recipe {} keeps ckpt_format = torch_dist", name);
    return make_string("torch_dist");
  }
  if (path == "checkpoint.save" && listed(kRecipesWithCommonBase, name) && !listed(kRecipesMaybeNoSaveDir, name)) {
    origin = fmt::format("recipe {} saves checkpoints to nemo_experiments/default/checkpoints", name);
    return make_string("nemo_experiments/default/checkpoints");
  }
  if ((path == "ddp.use_megatron_fsdp" || path == "dist.use_megatron_fsdp") &&
      !listed(kRecipesMaybeMegatronFsdp, name)) {
    origin = fmt::format("recipe {} does not use Megatron-FSDP", name);
    return make_bool(false);
  }
  if ((path == "model.overlap_moe_expert_parallel_comm" || path == "comm_overlap.overlap_moe_expert_parallel_comm") &&
      !listed(kRecipesMaybeEpOverlap, name)) {
    origin = fmt::format("recipe {} does not overlap expert-parallel communication", name);
    return make_bool(false);
  }
  return std::nullopt;
}

}  // namespace

Resolved resolve(const Job& job, std::string_view path) {
  Resolved r;
  r.path = std::string(path);
  if (const ConfigValue* node = find_path(job.config, path)) {
    if (!node->is_unknown()) r.value = *node;
    return r;
  }
  if (job.recipe && !job.config_complete) {
    std::string origin;
    if (auto fact = recipe_fact(*job.recipe, path, origin)) {
      r.value = std::move(*fact);
      r.value->where = job.recipe_where;
      r.value->where.layer = Layer::Recipe;
      r.value->where.origin = std::move(origin);
      return r;
    }
  }
  bool vouched = job.config_complete || (job.recipe && not_set_by_recipes(path));
  if (!vouched) return r;
  if (auto value = schema_default(path)) {
    r.value = std::move(*value);
    r.value->where = Provenance{};
    r.value->where.layer = Layer::SchemaDefault;
    r.defaulted = true;
  }
  return r;
}

std::optional<bool> switch_value(const Job& job, std::string_view path) {
  Resolved r = resolve(job, path);
  if (r.known()) return truthy(r);
  if (find_path(job.config, path)) return std::nullopt;  // written, but not known
  if (job.dialect == Dialect::MegatronLM) return false;   // an absent store_true flag
  return std::nullopt;
}

std::optional<bool> truthy(const ConfigValue& v) {
  switch (v.kind) {
    case ValueKind::Null: return false;
    case ValueKind::Bool: return v.boolean;
    case ValueKind::Int: return v.integer != 0;
    case ValueKind::Float: return v.real != 0.0;
    case ValueKind::String: return !v.text.empty();
    case ValueKind::List: return !v.items.empty();
    case ValueKind::Map: return true;
    case ValueKind::Unknown: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<bool> truthy(const Resolved& r) {
  if (!r.known()) return std::nullopt;
  return truthy(*r.value);
}

std::string display(const Resolved& r) {
  if (!r.known()) return "unknown";
  if (r.value->kind == ValueKind::String && !r.value->text.empty()) return r.value->text;
  return to_display(*r.value);
}

Span span_for(const Resolved& r) {
  if (!r.known() || r.defaulted) return {};
  return primary_span(r.where());
}

Note note_for(const Resolved& r) {
  std::string value = display(r);
  if (!r.known() || r.defaulted) return Note{fmt::format("{} is {} (the default)", r.path, value), {}};
  const Provenance& where = r.where();
  Span span = primary_span(where);
  if (where.layer == Layer::Recipe && !where.origin.empty()) return Note{where.origin, span};
  return Note{fmt::format("{} set to {} here", r.path, value), span};
}

bool is_on(const Resolved& r) { return truthy(r).value_or(false); }
bool is_off(const Resolved& r) { return !truthy(r).value_or(true); }

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

std::optional<std::string> dtype_name(const ConfigValue& value) {
  std::string text;
  if (value.kind == ValueKind::String) {
    text = value.text;
  } else if (value.is_map()) {
    const ConfigValue* target = find_child(value, "_target_");
    if (!target || target->kind != ValueKind::String) return std::nullopt;
    text = target->text;
  } else {
    return std::nullopt;
  }
  if (text.rfind("torch.", 0) == 0) text = text.substr(6);
  if (text == "bfloat16" || text == "bf16") return "bf16";
  if (text == "float16" || text == "half" || text == "fp16") return "fp16";
  if (text == "float32" || text == "float" || text == "fp32") return "fp32";
  return std::nullopt;
}

namespace {

using PresetFields = std::map<std::string, ConfigValue, std::less<>>;

// Megatron Bridge's registered presets (training/mixed_precision.py) and the
// short names of performance recipes (perf_recipes/_common.py
// _perf_precision), as the fields they set on top of MixedPrecisionConfig's
// defaults.
std::optional<PresetFields> preset_fields(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  PresetFields f;
  for (const SchemaField& field : schema_fields()) {
    if (std::string_view(field.section) != "mixed_precision") continue;
    if (auto value = literal_default(field)) f[field.name] = *value;
  }
  auto base16 = [&](bool bf16) {
    f[bf16 ? "bf16" : "fp16"] = make_bool(true);
    f["params_dtype"] = make_string(bf16 ? "bf16" : "fp16");
    f["pipeline_dtype"] = make_string(bf16 ? "bf16" : "fp16");
    f["autocast_enabled"] = make_bool(false);
    f["grad_reduce_in_fp32"] = make_bool(bf16);
  };
  auto fp8 = [&](const char* format, const char* recipe, bool param_gather) {
    f["fp8"] = make_string(format);
    f["fp8_recipe"] = make_string(recipe);
    f["fp8_param_gather"] = make_bool(param_gather);
  };
  auto first_last = [&](int64_t start, int64_t end) {
    f["first_last_layers_bf16"] = make_bool(true);
    f["num_layers_at_start_in_bf16"] = make_int(start);
    f["num_layers_at_end_in_bf16"] = make_int(end);
  };
  bool bf16 = name.rfind("fp16", 0) != 0;
  if (name == "bf16_mixed" || name == "fp16_mixed" || name == "bf16") {
    base16(bf16);
  } else if (name == "bf16_with_fp8_delayed_scaling_mixed" || name == "fp16_with_fp8_delayed_scaling_mixed") {
    base16(bf16);
    fp8("hybrid", "delayed", true);
    f["fp8_amax_history_len"] = make_int(1024);
    f["fp8_amax_compute_algo"] = make_string("max");
  } else if (name == "bf16_with_mxfp8_mixed" || name == "fp16_with_mxfp8_mixed") {
    base16(bf16);
    fp8("e4m3", "mxfp8", true);
    f["reuse_grad_buf_for_mxfp8_param_ag"] = make_bool(true);
  } else if (name == "bf16_with_fp8_current_scaling_mixed" || name == "fp16_with_fp8_current_scaling_mixed") {
    base16(bf16);
    fp8("hybrid", "tensorwise", true);
    first_last(1, 1);
  } else if (name == "nemotron_h_bf16_with_fp8_current_scaling_mixed") {
    base16(true);
    fp8("hybrid", "tensorwise", true);
    first_last(2, 2);
  } else if (name == "nanov2_bf16_with_fp8_current_scaling_mixed") {
    base16(true);
    fp8("hybrid", "blockwise", true);
    first_last(2, 2);
  } else if (name == "bf16_with_fp8_subchannel_scaling_mixed" || name == "fp16_with_fp8_subchannel_scaling_mixed") {
    base16(bf16);
    fp8("hybrid", "blockwise", false);
  } else if (name == "bf16_with_nvfp4_mixed" || name == "nemotron_3_super_bf16_with_nvfp4_mixed") {
    base16(true);
    f["fp8"] = make_null();
    f["fp4"] = make_string("e2m1");
    f["fp4_recipe"] = make_string("nvfp4");
    f["fp4_param_gather"] = make_bool(true);
    if (name != "bf16_with_nvfp4_mixed") {
      f["first_last_layers_bf16"] = make_bool(true);
      f["num_layers_at_end_in_bf16"] = make_int(14);
    }
  } else if (name == "fp8_cs" || name == "fp8_ds" || name == "fp8_mx" || name == "nvfp4") {
    // _perf_precision(): a preset with grad_reduce_in_fp32 = False.
    auto base = preset_fields(name == "fp8_cs"   ? "bf16_with_fp8_current_scaling_mixed"
                              : name == "fp8_ds" ? "bf16_with_fp8_delayed_scaling_mixed"
                              : name == "fp8_mx" ? "bf16_with_mxfp8_mixed"
                                                 : "bf16_with_nvfp4_mixed");
    f = *base;
    if (name == "fp8_cs" || name == "fp8_ds") f["first_last_layers_bf16"] = make_bool(false);
  } else {
    return std::nullopt;
  }
  if (name == "bf16") f["grad_reduce_in_fp32"] = make_bool(false);
  if (name == "fp8_cs" || name == "fp8_ds" || name == "fp8_mx" || name == "nvfp4") {
    f["grad_reduce_in_fp32"] = make_bool(false);
  }
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
  std::string normalized(name);
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  if (normalized == "bf16" || normalized == "fp8_cs" || normalized == "fp8_ds" || normalized == "fp8_mx" ||
      normalized == "nvfp4") {
    return false;  // recipe-internal short names, not accepted by get_mixed_precision_config
  }
  return preset_fields(normalized).has_value();
}

std::optional<ConfigValue> mixed_precision_value(const Job& job, std::string_view field, Provenance* where,
                                                 std::string* preset) {
  const ConfigValue* mp = find_path(job.config, "mixed_precision");
  if (!mp || mp->is_null() || mp->is_unknown()) return std::nullopt;
  if (where) *where = mp->where;
  if (mp->kind == ValueKind::String) {
    if (mp->where.layer == Layer::Recipe && !stable_preset_field(field)) return std::nullopt;
    auto fields = preset_fields(mp->text);
    if (!fields) return std::nullopt;
    if (preset) *preset = mp->text;
    auto it = fields->find(field);
    if (it == fields->end()) return std::nullopt;
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

std::string_view variant_annotations(std::string_view section, std::string_view name) {
  const VariantField* field = find_variant_field(section, name);
  return field ? field->type : "";
}

bool is_known_field(const Job& job, std::string_view section, std::string_view name) {
  if (find_schema_field(section, name)) return true;
  const VariantField* it = find_variant_field(section, name);
  if (!it) return false;
  std::string_view family = it->family;
  if (family.empty()) return true;
  // A field only one model family declares (T5's max_position_embeddings):
  // accepted when the section's _target_ names that family.
  const ConfigValue* target = find_path(job.config, std::string(section) + "._target_");
  return target && target->kind == ValueKind::String && target->text.find(family) != std::string::npos;
}

}  // namespace mblint
