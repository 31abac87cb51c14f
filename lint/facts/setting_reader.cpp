#include "lint/facts/setting_reader.h"

#include <algorithm>
#include <array>
#include <span>

#include <fmt/format.h>

#include "lint/base/python_number.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/model/catalog.h"
#include "lint/model/config_fields.h"
#include "lint/model/hybrid_pattern.h"
#include "lint/model/schema.h"

namespace mblint {

namespace {

// --- step 3: what a catalog recipe is known to leave ------------------------------

// The recompute settings the catalog records for every recipe: one it
// leaves empty is Megatron-Core's None (the recipe layer only writes the
// ones a recipe sets).
std::optional<ConfigValue> recompute_left_unset(const Recipe& r, std::string_view path) {
  auto empty = [](const char* text) { return !text || !*text; };
  bool unset = (path == "model.recompute_granularity" && empty(r.recompute_granularity)) ||
               (path == "model.recompute_method" && empty(r.recompute_method)) ||
               (path == "model.recompute_modules" && empty(r.recompute_modules)) ||
               (path == "model.recompute_num_layers" && !r.recompute_num_layers.set && r.recompute_num_layers.certain);
  if (!unset) return std::nullopt;
  Provenance where;
  where.origin = fmt::format("recipe {} leaves {} at None", r.name, last_segment(path));
  return make_null(std::move(where));
}

// What the recipe sources leave in `path` (tools/gen_config_fields.py
// searched them) and the model the recipe builds; nullopt when not known.
std::optional<ConfigValue> recipe_source_fact(const Recipe& recipe, std::string_view path) {
  std::string_view name = recipe.name;
  Provenance where;
  auto fact = [&](ConfigValue value, std::string origin) {
    value.where.origin = std::move(origin);
    return value;
  };
  if (path == "checkpoint.ckpt_format" && !recipe_listed(RecipeList::MaybeOtherCkptFormat, name)) {
    return fact(make_string("torch_dist"), fmt::format("recipe {} keeps ckpt_format = torch_dist", name));
  }
  if (path == "checkpoint.save" && recipe_listed(RecipeList::WithCommonBase, name) &&
      !recipe_listed(RecipeList::MaybeNoSaveDir, name)) {
    return fact(make_string("nemo_experiments/default/checkpoints"),
                fmt::format("recipe {} saves checkpoints to nemo_experiments/default/checkpoints", name));
  }
  if ((path == "ddp.use_megatron_fsdp" || path == "dist.use_megatron_fsdp") &&
      !recipe_listed(RecipeList::MaybeMegatronFsdp, name)) {
    return fact(make_bool(false), fmt::format("recipe {} does not use Megatron-FSDP", name));
  }
  if (path == "model.gated_linear_unit" && recipe.dims) {
    const char* model = recipe.dims->hf_id && *recipe.dims->hf_id ? recipe.dims->hf_id : recipe.dims->key;
    bool glu = recipe.dims->gated_linear_unit;
    return fact(make_bool(glu), fmt::format("recipe {} builds {}: gated_linear_unit = {}", name, model, glu));
  }
  if ((path == "model.overlap_moe_expert_parallel_comm" || path == "comm_overlap.overlap_moe_expert_parallel_comm") &&
      !recipe_listed(RecipeList::MaybeEpOverlap, name)) {
    return fact(make_bool(false), fmt::format("recipe {} does not overlap expert-parallel communication", name));
  }
  return std::nullopt;
}

std::optional<ConfigValue> recipe_leaves(const Job& job, std::string_view path) {
  if (!job.recipe || job.config_complete) return std::nullopt;
  auto value = recipe_source_fact(*job.recipe, path);
  if (!value && job.dialect == Dialect::Bridge) value = recompute_left_unset(*job.recipe, path);
  if (!value) return std::nullopt;
  std::string origin = std::move(value->where.origin);
  value->where = job.recipe_where;
  value->where.layer = Layer::Recipe;
  value->where.origin = std::move(origin);
  return value;
}

// --- step 4: the dataclass default ----------------------------------------------

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
    "dist.use_sharp",                     "model.hierarchical_context_parallel_sizes",
    // Two recipes assign it, its default (1).
    "ddp.num_distributed_optimizer_instances",
};

bool not_set_by_recipes(std::string_view path) {
  return std::find(std::begin(kNotSetByRecipes), std::end(kNotSetByRecipes), path) != std::end(kNotSetByRecipes);
}

// A setting and its default, as a YAML-ish literal: true, false, null, a
// number or a word.
struct KnownDefault {
  std::string_view path;
  std::string_view text;
};

// Dataclass defaults the schema keeps as expressions (torch dtypes).
constexpr std::array kExpressionDefaults = {
    KnownDefault{"optimizer.main_grads_dtype", "fp32"},
    KnownDefault{"optimizer.main_params_dtype", "fp32"},
    KnownDefault{"optimizer.exp_avg_dtype", "fp32"},
    KnownDefault{"optimizer.exp_avg_sq_dtype", "fp32"},
};

ConfigValue literal_value(std::string_view text) {
  if (text == "null") return make_null();
  if (text == "true") return make_bool(true);
  if (text == "false") return make_bool(false);
  if (auto number = python_int(text)) return make_int(*number);
  if (auto number = python_float(text)) return make_float(*number);
  return make_string(std::string(text));
}

std::optional<ConfigValue> table_default(std::span<const KnownDefault> table, std::string_view path) {
  auto it = std::find_if(table.begin(), table.end(), [&](const KnownDefault& d) { return d.path == path; });
  if (it == table.end()) return std::nullopt;
  return literal_value(it->text);
}

// The dataclass a full dump's model section was built from ("GPTModelProvider"
// for `megatron.bridge.models.gpt_provider.GPTModelProvider`); empty when the
// dump does not say.
std::string dump_model_class(const Job& job) {
  std::optional<std::string> target = as_string(find_path(job.config, "model._target_"));
  if (!target) return {};
  size_t dot = target->rfind('.');
  return dot == std::string::npos ? *target : target->substr(dot + 1);
}

// Model fields some Bridge provider subclass gives a default of its own
// (tools/gen_provider_fields.py), sorted.
constexpr std::string_view kProviderFields[] = {
#include "lint/model/provider_fields.inc"
};

// The schema entry of a field. In a dump whose model section names a class
// the schema lists (GPTModelProvider, HybridModelProvider), a `model.*` field
// is that class's. A provider subclass (Llama3ModelProvider8B, ...) keeps its
// base's defaults except for the fields some provider sets, which have no
// known default.
const SchemaField* schema_field(const Job& job, std::string_view section, std::string_view name) {
  std::string cls = section == "model" && job.config_complete ? dump_model_class(job) : std::string();
  if (cls.empty()) return find_schema_field(section, name);
  for (const SchemaField& field : schema_fields()) {
    if (std::string_view(field.section) == "model" && field.name == name && cls == field.variant) return &field;
  }
  if (std::binary_search(std::begin(kProviderFields), std::end(kProviderFields), name)) return nullptr;
  return find_schema_field(section, name);
}

std::optional<ConfigValue> schema_default(const Job& job, std::string_view path) {
  if (auto value = table_default(kExpressionDefaults, path)) return value;
  size_t dot = path.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const SchemaField* field = schema_field(job, path.substr(0, dot), path.substr(dot + 1));
  if (!field) return std::nullopt;
  if (auto value = literal_default(*field)) return value;
  // `field(default=True, metadata=...)`: the literal inside, unless the
  // argparse metadata says there is none (`{"default": None}`: the model
  // shape, which a config must give; the 0 is a placeholder).
  std::string_view text = field->default_text ? field->default_text : "";
  size_t at = text.find("default=");
  if (!text.starts_with("field(") || at == std::string_view::npos ||
      text.find("{\"default\": None}") != std::string_view::npos) {
    return std::nullopt;
  }
  text.remove_prefix(at + 8);
  text = text.substr(0, text.find_first_of(",)"));
  while (text.ends_with(' ')) text.remove_suffix(1);
  std::string storage(text);
  SchemaField copy = *field;
  copy.default_text = storage.c_str();
  return literal_default(copy);
}

std::optional<ConfigValue> dataclass_default(const Job& job, std::string_view path) {
  bool vouched = job.config_complete || (job.recipe && not_set_by_recipes(path));
  return vouched ? schema_default(job, path) : std::nullopt;
}

// --- step 5: Megatron-LM's argparse defaults ----------------------------------------

// For the settings rules read. Only used for a key some mapped flag writes:
// a flag mblint does not map may have been given, so its key stays unknown.
// Only defaults validate_args keeps: ddp.grad_reduce_in_fp32 is not here,
// since --accumulate-allreduce-grads-in-fp32 defaults to False but
// validate_args turns it on for bf16 (unless --grad-reduce-in-bf16).
constexpr std::array kMegatronLmDefaults = {
    KnownDefault{"model.bf16", "false"},
    KnownDefault{"model.fp16", "false"},
    KnownDefault{"model.fp8", "null"},
    KnownDefault{"model.fp8_recipe", "delayed"},
    KnownDefault{"model.fp8_param", "false"},
    KnownDefault{"ddp.fp8_param_gather", "false"},
    KnownDefault{"model.fp4", "null"},
    KnownDefault{"model.fp4_param", "false"},
    KnownDefault{"ddp.fp4_param_gather", "false"},
    KnownDefault{"model.first_last_layers_bf16", "false"},
    KnownDefault{"model.num_layers_at_start_in_bf16", "1"},
    KnownDefault{"model.num_layers_at_end_in_bf16", "1"},
    KnownDefault{"model.recompute_granularity", "null"},
    KnownDefault{"model.recompute_method", "null"},
    KnownDefault{"model.recompute_num_layers", "null"},
    KnownDefault{"model.recompute_modules", "null"},
    KnownDefault{"model.distribute_saved_activations", "false"},
    KnownDefault{"model.moe_layer_recompute", "false"},
    KnownDefault{"model.cpu_offloading_num_layers", "0"},
    KnownDefault{"model.fine_grained_activation_offloading", "false"},
    KnownDefault{"model.offload_modules", "null"},
    KnownDefault{"model.transformer_impl", "transformer_engine"},
    KnownDefault{"model.cuda_graph_impl", "none"},
    KnownDefault{"model.enable_cuda_graph", "false"},
    KnownDefault{"model.moe_grouped_gemm", "false"},
    KnownDefault{"model.use_mamba_mem_eff_path", "true"},  // --disable-mamba-mem-eff-path turns it off
    KnownDefault{"model.multi_latent_attention", "false"},
    KnownDefault{"model.moe_shared_expert_overlap", "false"},
    KnownDefault{"model.tp_comm_overlap", "false"},
    KnownDefault{"model.gradient_accumulation_fusion", "true"},
    KnownDefault{"model.share_embeddings_and_output_weights", "true"},
    // validate_args requires these (_check_arg_is_not_none): argparse leaves them None.
    KnownDefault{"model.num_layers", "null"},
    KnownDefault{"model.hidden_size", "null"},
    KnownDefault{"model.num_attention_heads", "null"},
    KnownDefault{"model.max_position_embeddings", "null"},
    KnownDefault{"checkpoint.save_interval", "null"},  // also required, with --save
    KnownDefault{"ddp.use_distributed_optimizer", "false"},
    KnownDefault{"optimizer.use_distributed_optimizer", "false"},
    KnownDefault{"ddp.overlap_grad_reduce", "false"},
    KnownDefault{"ddp.overlap_param_gather", "false"},
    KnownDefault{"optimizer.overlap_param_gather_with_optimizer_step", "false"},
    KnownDefault{"ddp.num_buckets", "null"},
    KnownDefault{"ddp.bucket_size", "null"},
    KnownDefault{"ddp.nccl_ub", "false"},
    KnownDefault{"optimizer.optimizer", "adam"},
    KnownDefault{"optimizer.use_precision_aware_optimizer", "false"},
    KnownDefault{"optimizer.main_grads_dtype", "fp32"},
    KnownDefault{"optimizer.main_params_dtype", "fp32"},
    KnownDefault{"optimizer.exp_avg_dtype", "fp32"},
    KnownDefault{"optimizer.exp_avg_sq_dtype", "fp32"},
    KnownDefault{"optimizer.optimizer_cpu_offload", "false"},
    KnownDefault{"optimizer.optimizer_offload_fraction", "1.0"},
    KnownDefault{"dist.use_torch_fsdp2", "false"},
    KnownDefault{"dist.use_megatron_fsdp", "false"},
    KnownDefault{"ddp.use_megatron_fsdp", "false"},
    KnownDefault{"ddp.data_parallel_sharding_strategy", "no_shard"},
    KnownDefault{"checkpoint.ckpt_format", "torch_dist"},
    KnownDefault{"checkpoint.save", "null"},
    KnownDefault{"checkpoint.load", "null"},
    KnownDefault{"ddp.num_distributed_optimizer_instances", "1"},
    KnownDefault{"model.hierarchical_context_parallel_sizes", "null"},
    // --cp-comm-type defaults to [p2p]; validate_args unwraps a one-entry list.
    KnownDefault{"model.cp_comm_type", "p2p"},
    // None at parse time; validate_args then asserts hidden % heads and derives it.
    KnownDefault{"model.kv_channels", "null"},
    // Gated delta net heads (TransformerConfig fields the parser is generated from).
    KnownDefault{"model.linear_num_key_heads", "16"},
    KnownDefault{"model.linear_num_value_heads", "32"},
    KnownDefault{"model.add_bias_linear", "true"},
    KnownDefault{"model.position_embedding_type", "learned_absolute"},
    KnownDefault{"model.moe_router_topk", "2"},
    KnownDefault{"model.moe_router_score_function", "softmax"},
    KnownDefault{"model.moe_router_pre_softmax", "false"},
    KnownDefault{"model.moe_router_load_balancing_type", "aux_loss"},
    KnownDefault{"model.moe_router_dtype", "null"},
    KnownDefault{"model.moe_router_num_groups", "null"},
    KnownDefault{"model.moe_router_group_topk", "null"},
    KnownDefault{"model.moe_router_enable_expert_bias", "false"},
    KnownDefault{"model.moe_router_padding_for_quantization", "false"},
    KnownDefault{"model.moe_token_dispatcher_type", "allgather"},
    KnownDefault{"model.moe_flex_dispatcher_backend", "deepep"},
    KnownDefault{"model.moe_enable_deepep", "false"},
    KnownDefault{"model.moe_shared_expert_intermediate_size", "null"},
    KnownDefault{"model.moe_ffn_hidden_size", "null"},
    KnownDefault{"model.moe_expert_capacity_factor", "null"},
    KnownDefault{"model.moe_pad_expert_input_to_capacity", "false"},
    KnownDefault{"model.moe_latent_size", "null"},
    KnownDefault{"model.moe_layer_freq", "1"},
    KnownDefault{"model.mtp_num_layers", "null"},
    KnownDefault{"model.overlap_moe_expert_parallel_comm", "false"},
    KnownDefault{"model.delay_wgrad_compute", "false"},
};

// Only store_true flags write `path` (--enable-cuda-graph): argparse's
// default is False.
bool store_true_only(std::string_view path) {
  bool any = false;
  for (const MegatronLmFlag& flag : megatron_lm_flags()) {
    if (flag.path != path && flag.also != path) continue;
    if (flag.type != ArgType::Flag || flag.constant != "true") return false;
    any = true;
  }
  return any;
}

// With --use-checkpoint-args the checkpoint supplies what the command line
// leaves out (Megatron-LM's load_args_from_checkpoint): no argparse default.
std::optional<ConfigValue> argparse_default(const Job& job, std::string_view path) {
  if (!megatron_lm_command_line(job) || !megatron_lm_flag_writes(path)) return std::nullopt;
  if (as_bool(find_path(job.config, "checkpoint.use_checkpoint_args")).value_or(false)) return std::nullopt;
  if (auto value = table_default(kMegatronLmDefaults, path)) return value;
  if (store_true_only(path)) return make_bool(false);
  return std::nullopt;
}

// A section that is None in a dump (comm_overlap: null) has no fields.
bool inside_null_section(const Job& job, std::string_view path) {
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', dot + 1)) {
    const ConfigValue* node = find_path(job.config, path.substr(0, dot));  // each enclosing section
    if (node && node->is_null()) return true;
  }
  return false;
}

SettingValue found(SettingValue out, SettingSource source, ConfigValue value) {
  out.source = source;
  if (source != SettingSource::RecipeLeaves) {
    value.where = Provenance{};
    value.where.layer = Layer::SchemaDefault;
  }
  out.fallback = std::move(value);
  return out;
}

}  // namespace

bool megatron_lm_command_line(const Job& job) {
  return job.dialect == Dialect::MegatronLM &&
         (job.entry == EntryPoint::MegatronLM || job.kind == InputKind::MegatronLmTestConfig);
}

SettingValue read_setting(const Job& job, std::string_view path) {
  SettingValue out;
  out.path = std::string(path);
  if ((out.written = find_path(job.config, path))) {
    out.source = SettingSource::Written;
    return out;
  }
  if (auto value = recipe_leaves(job, path)) return found(std::move(out), SettingSource::RecipeLeaves, *value);
  if (inside_null_section(job, path)) return out;
  if (auto value = dataclass_default(job, path)) return found(std::move(out), SettingSource::DataclassDefault, *value);
  if (auto value = argparse_default(job, path)) return found(std::move(out), SettingSource::ArgparseDefault, *value);
  return out;
}

// --- typed readers -----------------------------------------------------------------

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool NameList::contains(std::string_view item) const {
  return items && std::find(items->begin(), items->end(), item) != items->end();
}

Quantity config_int(const Job& job, std::string_view path) {
  Quantity q;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, q);
  q.value = as_int(node);
  if (node && node->is_null()) q.display = "null";
  return q;
}

Setting config_bool(const Job& job, std::string_view path) {
  Setting s;
  SettingValue setting = read_setting(job, path);
  s.value = as_bool(locate(setting, s));
  return s;
}

Setting read_flag(const Job& job, std::string_view path) {
  Setting s;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, s);
  s.value = node && node->is_null() ? std::optional<bool>(false) : as_bool(node);
  return s;
}

TextSetting config_text(const Job& job, std::string_view path) {
  TextSetting t;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, t);
  t.present = node != nullptr;
  t.value = as_string(node);
  return t;
}

namespace {

int64_t pipeline_segments(std::string_view pattern) {
  return static_cast<int64_t>(split_hybrid_pattern(pattern).segments.size());
}

}  // namespace

std::optional<HybridPatternSetting> hybrid_layer_pattern(const Job& job) {
  for (const char* path : {"model.hybrid_layer_pattern", "model.hybrid_override_pattern"}) {
    TextSetting written = config_text(job, path);
    if (written.value && !written.value->empty()) {
      return HybridPatternSetting{*written.value, false, path, written.where, pipeline_segments(*written.value)};
    }
  }
  const ModelDims* dims = job.recipe ? job.recipe->dims : nullptr;
  if (dims && dims->hybrid_layer_pattern && *dims->hybrid_layer_pattern) {
    return HybridPatternSetting{dims->hybrid_layer_pattern, true, "", {}, pipeline_segments(dims->hybrid_layer_pattern)};
  }
  return std::nullopt;
}

Choice read_choice(const Job& job, std::string_view path) {
  Choice c;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, c);
  if (!node) return c;
  if (node->is_null() || (node->kind == ValueKind::Bool && !node->boolean)) {
    c.known = true;
  } else if (node->kind == ValueKind::String) {
    c.known = true;
    c.value = node->text;
  }
  return c;
}

NameList read_names(const Job& job, std::string_view path) {
  NameList list;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, list);
  if (!node) return list;
  if (node->is_null()) {
    list.known = true;
  } else if (node->kind == ValueKind::String) {
    list.known = true;
    list.items = split_names(node->text);
  } else if (node->is_list()) {
    std::vector<std::string> items;
    for (const ConfigValue& item : node->items) {
      if (item.kind != ValueKind::String) return list;  // an expression or a typo: unknown
      items.push_back(item.text);
    }
    list.known = true;
    list.items = std::move(items);
  }
  return list;
}

std::optional<double> read_number(const Job& job, std::string_view path, Provenance* where) {
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = setting.node();
  if (!node) return std::nullopt;
  if (where) *where = node->where;
  return as_number(node);
}

Choice read_dtype(const Job& job, std::string_view path) {
  Choice c;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, c);
  if (!node) return c;
  c.value = dtype_name(*node);
  c.known = c.value.has_value();
  return c;
}

Resolved resolve(const Job& job, std::string_view path) {
  Resolved r;
  r.path = std::string(path);
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = setting.node();
  if (!node || node->is_unknown()) return r;
  r.value = *node;
  r.defaulted = setting.defaulted();
  return r;
}

std::optional<bool> switch_value(const Job& job, std::string_view path) {
  Resolved r = resolve(job, path);
  if (r.known()) return truthy(r);
  if (find_path(job.config, path)) return std::nullopt;  // written, but not known
  if (job.dialect == Dialect::MegatronLM) return false;   // an absent store_true flag
  return std::nullopt;
}

const ConfigValue* config_node(const Job& job, std::string_view path) { return find_path(job.config, path); }

std::optional<std::string> dtype_name(const ConfigValue& value) {
  std::string_view text;
  if (value.kind == ValueKind::String) {
    text = value.text;
  } else if (value.is_map()) {
    const ConfigValue* target = find_child(value, "_target_");
    if (!target || target->kind != ValueKind::String) return std::nullopt;
    text = target->text;
  } else {
    return std::nullopt;
  }
  if (text.starts_with("torch.")) text.remove_prefix(6);
  if (text == "bfloat16" || text == "bf16") return "bf16";
  if (text == "float16" || text == "half" || text == "fp16") return "fp16";
  if (text == "float32" || text == "float" || text == "fp32") return "fp32";
  if (text == "fp8" || text == "uint8") return "fp8";
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

bool is_on(const Resolved& r) { return truthy(r).value_or(false); }
bool is_off(const Resolved& r) { return !truthy(r).value_or(true); }

// --- notes -------------------------------------------------------------------------

int layer_rank(Layer layer) {
  switch (layer) {
    case Layer::SchemaDefault: return 0;
    case Layer::Recipe: return 1;
    case Layer::Rewrite: return 2;
    case Layer::Launcher: return 3;
    case Layer::ConfigFile: return 4;
    case Layer::ConvenienceFlag: return 5;
    case Layer::Override: return 6;
    case Layer::CommandLine: return 7;
  }
  return 0;
}

Span span_for(const Quantity& q) { return primary_span(q.where); }
Span span_for(const Setting& s) { return primary_span(s.where); }
Span span_for(const Choice& choice) { return primary_span(choice.where); }
Span span_for(const NameList& list) { return primary_span(list.where); }

Span span_for(const Resolved& r) {
  if (!r.known() || r.defaulted) return {};
  return primary_span(r.where());
}

namespace {

// A quantity's or switch's note: the recipe's or the derivation's own words
// first.
Note note_from(const std::string& name, const std::string& value, const Provenance& where, bool defaulted,
               const std::string& how) {
  Span span = primary_span(where);
  if (where.layer == Layer::Recipe && !where.origin.empty()) return Note{where.origin, span};
  if (!how.empty()) return Note{how, span};
  if (defaulted || !span.valid()) return Note{fmt::format("{} is {} (the default)", name, value), {}};
  if (!where.origin.empty()) return Note{where.origin, span};
  return Note{fmt::format("{} set to {} here", name, value), span};
}

}  // namespace

Note note_at(std::string_view name, std::string_view shown, const Provenance& where, bool defaulted) {
  Span span = primary_span(where);
  if (!where.origin.empty()) return Note{where.origin, span};
  if (defaulted || !span.valid()) return Note{fmt::format("{} is {} (the default)", name, shown), {}};
  return Note{fmt::format("{} set to {} here", name, shown), span};
}

Note note_for(const Quantity& q) {
  std::string value = !q.display.empty() ? q.display : q.value ? std::to_string(*q.value) : std::string("unknown");
  return note_from(q.name, value, q.where, q.defaulted, q.how);
}

Note note_for(const Setting& s) {
  return note_from(s.name, s.value ? (*s.value ? "true" : "false") : "unknown", s.where, s.defaulted, "");
}

Note note_for(const Choice& choice) {
  return note_at(choice.name, choice.value ? *choice.value : "None", choice.where, choice.defaulted);
}

Note note_for(const NameList& list) {
  // fmt, not "[" + ...: GCC 12's -Wrestrict misfires on that at -O3.
  std::string shown = list.items ? fmt::format("[{}]", join_names(*list.items)) : "None";
  return note_at(list.name, shown, list.where, list.defaulted);
}

std::string display(const Resolved& r) {
  if (!r.known()) return "unknown";
  if (r.value->kind == ValueKind::String && !r.value->text.empty()) return r.value->text;
  return to_display(*r.value);
}

Note note_for(const Resolved& r) {
  std::string value = display(r);
  if (!r.known() || r.defaulted) return Note{fmt::format("{} is {} (the default)", r.path, value), {}};
  const Provenance& where = r.where();
  Span span = primary_span(where);
  if (where.layer == Layer::Recipe && !where.origin.empty()) return Note{where.origin, span};
  return Note{fmt::format("{} set to {} here", r.path, value), span};
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

std::string join_names(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace mblint
