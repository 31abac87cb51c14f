#include "lint/model/recipe_layer.h"

#include <string>

#include <fmt/format.h>

namespace mblint {

namespace {

struct LayerWriter {
  const Recipe& recipe;
  const Provenance& selected_at;
  ConfigValue root = make_map();

  Provenance where(std::string origin) const {
    Provenance p = selected_at;
    p.layer = Layer::Recipe;
    p.origin = std::move(origin);
    return p;
  }

  void put(const char* path, ConfigValue value) { assign_path(root, split_path(path), std::move(value)); }

  void integer(const char* path, const RecipeInt& setting, long long megatron_default, bool has_default) {
    std::string field = split_path(path).back();
    if (setting.set && setting.certain) {
      put(path, make_int(setting.value, where(fmt::format("recipe {} sets {} = {}", recipe.name, field,
                                                          setting.value))));
    } else if (!setting.set && setting.certain && has_default) {
      put(path, make_int(megatron_default,
                         where(fmt::format("{} = {}: recipe {} leaves it at the default", field,
                                           megatron_default, recipe.name))));
    }
  }

  void optional_integer(const char* path, const RecipeInt& setting) {
    std::string field = split_path(path).back();
    if (setting.set && setting.certain) {
      put(path, make_int(setting.value, where(fmt::format("recipe {} sets {} = {}", recipe.name, field,
                                                          setting.value))));
    } else if (!setting.set && setting.certain) {
      put(path, make_null(where(fmt::format("recipe {} does not set {}", recipe.name, field))));
    }
  }

  void text(const char* path, const char* value) {
    if (!value || !*value) return;
    std::string field = split_path(path).back();
    put(path, make_string(value, where(fmt::format("recipe {} sets {} = {}", recipe.name, field, value))));
  }

  void flag(const char* path, int value) {
    if (value < 0) return;
    std::string field = split_path(path).back();
    put(path, make_bool(value == 1, where(fmt::format("recipe {} sets {} = {}", recipe.name, field,
                                                      value == 1 ? "true" : "false"))));
  }

  ConfigValue setting(const RecipeSetting& s, const std::string& path) const {
    Provenance at = where(fmt::format("recipe {} sets {} = {}", recipe.name, path,
                                      s.kind == RecipeValueKind::Null ? "None" : s.text));
    switch (s.kind) {
      case RecipeValueKind::Null: return make_null(at);
      case RecipeValueKind::Bool: return make_bool(std::string_view(s.text) == "true", at);
      case RecipeValueKind::Int: return make_int(std::stoll(s.text), at);
      case RecipeValueKind::Float: return make_float(std::stod(s.text), at);
      case RecipeValueKind::String: return make_string(s.text, at);
      case RecipeValueKind::Object: break;
      case RecipeValueKind::List: {
        ConfigValue list = make_list(at);
        std::string_view items = s.text;
        while (!items.empty()) {
          size_t comma = items.find(',');
          list.items.push_back(make_string(std::string(items.substr(0, comma)), at));
          if (comma == std::string_view::npos) break;
          items.remove_prefix(comma + 1);
        }
        return list;
      }
    }
    return make_unknown(fmt::format("{} (a config object of the recipe)", s.text), at);
  }

  // env_vars: Bridge exports each one when the process does not have it set.
  void env_vars() {
    if (recipe.env_vars.empty()) return;
    ConfigValue vars = make_map(where(fmt::format("recipe {} sets env_vars", recipe.name)));
    for (const RecipeSetting& s : recipe.env_vars) vars.entries.push_back(MapEntry{s.key, setting(s, s.key)});
    put("env_vars", std::move(vars));
  }

  void comm_overlap() {
    if (recipe.comm_overlap == 0) {
      put("comm_overlap", make_null(where(fmt::format("recipe {} sets comm_overlap = None", recipe.name))));
    } else if (recipe.comm_overlap == 1) {
      ConfigValue section = make_map(where(fmt::format("recipe {} sets comm_overlap", recipe.name)));
      for (const RecipeSetting& s : recipe.comm_overlap_fields) {
        section.entries.push_back(MapEntry{s.key, setting(s, fmt::format("comm_overlap.{}", s.key))});
      }
      put("comm_overlap", std::move(section));
    }
  }

  // Settings the memory estimate reads (Megatron-FSDP, FP8 parameters,
  // offloading), each at its path. The mixed_precision preset is a name here;
  // a field the recipe sets on it is what MixedPrecisionConfig.setup() copies
  // onto the DDP config (fp8_param_gather, which also sets fp8_param).
  void memory_settings() {
    constexpr std::string_view kMixed = "mixed_precision.";
    for (const RecipeSetting& s : recipe.memory_settings) {
      std::string path = s.key;
      if (path.starts_with(kMixed)) {
        ConfigValue value = setting(s, path);
        value.where.origin = fmt::format("recipe {} sets {} = {}, which Megatron Bridge copies to ddp", recipe.name,
                                         path, s.text);
        put(fmt::format("ddp.{}", path.substr(kMixed.size())).c_str(), std::move(value));
        continue;
      }
      put(path.c_str(), setting(s, path));
    }
  }

  void grad_reduce_in_fp32() {
    if (recipe.grad_reduce_in_fp32 < 0) return;
    const char* value = recipe.grad_reduce_in_fp32 == 1 ? "true" : "false";
    std::string origin = recipe.grad_reduce_from_mixed_precision
                             ? fmt::format("recipe {} sets mixed_precision.grad_reduce_in_fp32 = {}, which Megatron "
                                           "Bridge copies to ddp",
                                           recipe.name, value)
                             : fmt::format("recipe {} sets grad_reduce_in_fp32 = {}", recipe.name, value);
    put("ddp.grad_reduce_in_fp32", make_bool(recipe.grad_reduce_in_fp32 == 1, where(std::move(origin))));
  }

  // TransformerConfig's dataclass defaults for the shape the recipe's bare
  // provider leaves alone: 0 for the sizes, None for experts and head width.
  void shape_defaults() {
    for (const char* path : {"model.num_layers", "model.hidden_size", "model.num_attention_heads"}) {
      put(path, make_int(0, where(fmt::format("recipe {} builds a model provider that sets no shape: {} stays "
                                              "TransformerConfig's default 0",
                                              recipe.name, split_path(path).back()))));
    }
    for (const char* path : {"model.num_moe_experts", "model.kv_channels"}) {
      put(path, make_null(where(fmt::format("recipe {} builds a model provider that sets no shape: {} stays "
                                            "TransformerConfig's default None",
                                            recipe.name, split_path(path).back()))));
    }
  }

  void dimension(const char* path, long long value, const ModelDims& dims) {
    const char* model = dims.hf_id && *dims.hf_id ? dims.hf_id : dims.key;
    put(path, make_int(value, where(fmt::format("recipe {} builds {}: {} = {}", recipe.name, model,
                                                 split_path(path).back(), value))));
  }

  void model_dimensions(const ModelDims& dims) {
    dimension("model.num_layers", dims.num_layers, dims);
    dimension("model.hidden_size", dims.hidden_size, dims);
    dimension("model.num_attention_heads", dims.num_attention_heads, dims);
    if (dims.num_query_groups > 0) dimension("model.num_query_groups", dims.num_query_groups, dims);
    if (dims.ffn_hidden_size > 0) dimension("model.ffn_hidden_size", dims.ffn_hidden_size, dims);
    if (dims.vocab_size > 0) dimension("model.vocab_size", dims.vocab_size, dims);
    if (dims.num_moe_experts > 0) {
      dimension("model.num_moe_experts", dims.num_moe_experts, dims);
      if (dims.moe_ffn_hidden_size > 0) dimension("model.moe_ffn_hidden_size", dims.moe_ffn_hidden_size, dims);
      if (dims.moe_router_topk > 0) dimension("model.moe_router_topk", dims.moe_router_topk, dims);
      if (dims.moe_shared_expert_intermediate_size > 0) {
        dimension("model.moe_shared_expert_intermediate_size", dims.moe_shared_expert_intermediate_size, dims);
      }
    } else {
      put("model.num_moe_experts", make_null(where(fmt::format("{} is a dense model", dims.key))));
    }
    if (dims.multi_latent_attention) {
      put("model.multi_latent_attention",
          make_bool(true, where(fmt::format("{} uses multi-latent attention", dims.key))));
      if (dims.q_lora_rank > 0) dimension("model.q_lora_rank", dims.q_lora_rank, dims);
      if (dims.kv_lora_rank > 0) dimension("model.kv_lora_rank", dims.kv_lora_rank, dims);
    }
    if (dims.mtp_num_layers > 0) dimension("model.mtp_num_layers", dims.mtp_num_layers, dims);
  }
};

}  // namespace

ConfigValue recipe_layer(const Recipe& recipe, const Provenance& selected_at) {
  LayerWriter w{recipe, selected_at};
  w.integer("model.tensor_model_parallel_size", recipe.tensor_model_parallel_size, 1, true);
  w.integer("model.pipeline_model_parallel_size", recipe.pipeline_model_parallel_size, 1, true);
  w.integer("model.context_parallel_size", recipe.context_parallel_size, 1, true);
  w.integer("model.expert_model_parallel_size", recipe.expert_model_parallel_size, 1, true);
  w.optional_integer("model.expert_tensor_parallel_size", recipe.expert_tensor_parallel_size);
  w.optional_integer("model.virtual_pipeline_model_parallel_size", recipe.virtual_pipeline_model_parallel_size);
  if (recipe.sequence_parallel >= 0) {
    w.flag("model.sequence_parallel", recipe.sequence_parallel);
  }
  if (recipe.seq_length.set && recipe.seq_length.certain) {
    w.integer("dataset.seq_length", recipe.seq_length, 0, false);
    w.integer("model.seq_length", recipe.seq_length, 0, false);
  }
  w.integer("train.global_batch_size", recipe.global_batch_size, 0, false);
  w.integer("train.micro_batch_size", recipe.micro_batch_size, 0, false);
  w.text("mixed_precision", recipe.precision);
  w.text("model.recompute_granularity", recipe.recompute_granularity);
  w.text("model.recompute_method", recipe.recompute_method);
  w.integer("model.recompute_num_layers", recipe.recompute_num_layers, 0, false);
  w.flag("ddp.use_distributed_optimizer", recipe.use_distributed_optimizer);
  w.flag("optimizer.use_distributed_optimizer", recipe.use_distributed_optimizer);
  w.text("model.moe_token_dispatcher_type", recipe.moe_token_dispatcher_type);
  w.text("model.moe_flex_dispatcher_backend", recipe.moe_flex_dispatcher_backend);
  w.text("model.cuda_graph_impl", recipe.cuda_graph_impl);
  if (std::string_view(recipe.pipeline_model_parallel_layout) == "?") {
    // Computed by a helper in the recipe (e.g. _get_deepseek_v3_pipeline_layout).
    w.put("model.pipeline_model_parallel_layout",
          make_unknown("layout computed by the recipe", w.where(fmt::format("recipe {} computes a pipeline layout",
                                                                            recipe.name))));
  } else {
    w.text("model.pipeline_model_parallel_layout", recipe.pipeline_model_parallel_layout);
  }
  w.integer("model.num_layers_in_first_pipeline_stage", recipe.num_layers_in_first_pipeline_stage, 0, false);
  w.integer("model.num_layers_in_last_pipeline_stage", recipe.num_layers_in_last_pipeline_stage, 0, false);
  w.flag("model.account_for_embedding_in_pipeline_split", recipe.account_for_embedding_in_pipeline_split);
  w.flag("model.account_for_loss_in_pipeline_split", recipe.account_for_loss_in_pipeline_split);
  if (recipe.recompute_modules && *recipe.recompute_modules) {
    ConfigValue modules = make_list(w.where(fmt::format("recipe {} sets recompute_modules = [{}]", recipe.name,
                                                        recipe.recompute_modules)));
    std::string list = recipe.recompute_modules;
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) modules.items.push_back(make_string(item, modules.where));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    w.put("model.recompute_modules", std::move(modules));
  }
  w.grad_reduce_in_fp32();
  w.flag("optimizer.use_precision_aware_optimizer", recipe.use_precision_aware_optimizer);
  w.text("optimizer.main_grads_dtype", recipe.main_grads_dtype);
  w.text("optimizer.main_params_dtype", recipe.main_params_dtype);
  w.text("optimizer.exp_avg_dtype", recipe.exp_avg_dtype);
  w.text("optimizer.exp_avg_sq_dtype", recipe.exp_avg_sq_dtype);
  w.comm_overlap();
  w.env_vars();
  w.memory_settings();
  if (recipe.dims) w.model_dimensions(*recipe.dims);
  if (recipe.shape_at_defaults) w.shape_defaults();
  return std::move(w.root);
}

}  // namespace mblint
