#include "lint/load/dialects/nemo_yaml.h"

#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "lint/load/yaml/interpolation.h"

namespace mblint {

namespace {

// NeMo's `model.<name>` -> Bridge path, where the meaning is the same.
struct Mapping {
  std::string_view nemo;
  std::string_view bridge;
};

constexpr Mapping kModelFields[] = {
    {"tensor_model_parallel_size", "model.tensor_model_parallel_size"},
    {"pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
    {"virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size"},
    {"context_parallel_size", "model.context_parallel_size"},
    {"expert_model_parallel_size", "model.expert_model_parallel_size"},
    {"expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
    {"sequence_parallel", "model.sequence_parallel"},
    {"num_layers", "model.num_layers"},
    {"hidden_size", "model.hidden_size"},
    {"ffn_hidden_size", "model.ffn_hidden_size"},
    {"num_attention_heads", "model.num_attention_heads"},
    {"num_query_groups", "model.num_query_groups"},
    {"kv_channels", "model.kv_channels"},
    {"num_moe_experts", "model.num_moe_experts"},
    {"moe_router_topk", "model.moe_router_topk"},
    {"moe_token_dispatcher_type", "model.moe_token_dispatcher_type"},
    {"moe_grouped_gemm", "model.moe_grouped_gemm"},
    {"make_vocab_size_divisible_by", "model.make_vocab_size_divisible_by"},
    {"position_embedding_type", "model.position_embedding_type"},
    {"share_embeddings_and_output_weights", "model.share_embeddings_and_output_weights"},
    {"overlap_p2p_comm", "model.overlap_p2p_comm"},
    {"batch_p2p_comm", "model.batch_p2p_comm"},
    {"ub_tp_comm_overlap", "model.tp_comm_overlap"},
    {"activations_checkpoint_granularity", "model.recompute_granularity"},
    {"activations_checkpoint_method", "model.recompute_method"},
    {"activations_checkpoint_num_layers", "model.recompute_num_layers"},
    {"global_batch_size", "train.global_batch_size"},
    {"micro_batch_size", "train.micro_batch_size"},
    {"rampup_batch_size", "train.rampup_batch_size"},
};

// Parallel sizes where NeMo's inference and conversion configs write -1 for
// "whatever the checkpoint has".
bool is_parallel_size(std::string_view path) {
  return path.find("parallel_size") != std::string_view::npos;
}

bool holds_any(const ConfigValue& root, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (find_child(root, key)) return true;
  }
  return false;
}

// --- self-references -----------------------------------------------------------------------

// Package names used as `${<package>.<top-level key>...}` where <package>
// is not itself a key of the file: the config group the file is mounted at.
void collect_packages(const ConfigValue& node, const ConfigValue& root, std::set<std::string>& packages) {
  if (node.kind == ValueKind::String) {
    const std::string& text = node.text;
    for (size_t at = text.find("${"); at != std::string::npos; at = text.find("${", at + 2)) {
      size_t dot = text.find('.', at + 2);
      if (dot == std::string::npos) continue;
      std::string package = text.substr(at + 2, dot - at - 2);
      size_t end = text.find_first_of(".}:", dot + 1);
      std::string section = text.substr(dot + 1, end == std::string::npos ? std::string::npos : end - dot - 1);
      bool identifier = !package.empty() && package.find_first_of(":${}") == std::string::npos;
      if (identifier && !find_child(root, package) && find_child(root, section)) packages.insert(package);
    }
    return;
  }
  for (const ConfigValue& item : node.items) collect_packages(item, root, packages);
  for (const MapEntry& entry : node.entries) collect_packages(entry.value, root, packages);
}

// Resolve interpolations with the file also mounted under each package it
// names itself by, as the Launcher's Hydra composition does.
ConfigValue resolved_copy(const ConfigValue& root) {
  std::set<std::string> packages;
  collect_packages(root, root, packages);
  ConfigValue mounted = root;
  size_t own_entries = mounted.entries.size();
  for (const std::string& package : packages) mounted.entries.push_back(MapEntry{package, root});
  resolve_interpolations(mounted);
  mounted.entries.resize(own_entries);
  return mounted;
}

// --- values -----------------------------------------------------------------------------------

ConfigValue mapped_value(const ConfigValue& value, std::string_view path) {
  if (is_parallel_size(path) && as_int(&value) == -1) {
    ConfigValue unknown = make_unknown("-1", value.where);
    unknown.where.origin = "-1 means the value stored in the checkpoint";
    return unknown;
  }
  return value;
}

void map_model_fields(const ConfigValue& model, bool inference, ConfigValue& out) {
  for (const Mapping& m : kModelFields) {
    if (inference && m.bridge.substr(0, 6) == "train.") continue;
    const ConfigValue* value = find_child(model, m.nemo);
    if (!value) continue;
    bool optional_size = m.nemo == "virtual_pipeline_model_parallel_size" || m.nemo == "num_query_groups" ||
                         m.nemo == "num_moe_experts" || m.nemo == "rampup_batch_size";
    if (value->is_null() && !optional_size && m.nemo.find("activations_checkpoint") == std::string_view::npos) {
      continue;  // null: NeMo falls back to its default
    }
    assign_path(out, split_path(m.bridge), mapped_value(*value, m.bridge));
  }
}

// Fine-tuning (SFT, PEFT, NeMo-Aligner): NeMo sets the model's micro and
// global batch from data.train_ds when the config has a train_ds
// (merge_cfg_with / _modify_config).
void map_fine_tuning_batch(const ConfigValue& model, bool inference, ConfigValue& out) {
  if (inference) return;
  for (std::string_view key : {"micro_batch_size", "global_batch_size"}) {
    const ConfigValue* value = find_path(model, fmt::format("data.train_ds.{}", key));
    if (value && !value->is_null()) assign_path(out, {"train", std::string(key)}, *value);
  }
}

// encoder_seq_length is the model's; the data section and the position
// embeddings stand in for it in configs that leave it out. Fine-tuning and
// PEFT configs give the samples' length as data.train_ds.max_seq_length: the
// dataset's, not the (restored) model's.
void map_sequence_length(const ConfigValue& model, ConfigValue& out) {
  const ConfigValue* data_length = find_path(model, "data.seq_length");
  const ConfigValue* samples = data_length ? nullptr : find_path(model, "data.train_ds.max_seq_length");
  const ConfigValue* length = nullptr;
  for (std::string_view key : {"encoder_seq_length", "seq_length"}) {
    if (!length) length = find_child(model, key);
  }
  if (!length) length = data_length;
  if (!length) length = find_child(model, "max_position_embeddings");
  if (length && !length->is_null()) assign_path(out, {"model", "seq_length"}, *length);
  if (data_length && !data_length->is_null()) assign_path(out, {"dataset", "seq_length"}, *data_length);
  if (samples && !samples->is_null()) assign_path(out, {"dataset", "seq_length"}, *samples);
}

void map_optimizer(const ConfigValue& model, ConfigValue& out) {
  const ConfigValue* name = find_path(model, "optim.name");
  if (!name || name->is_null()) return;
  ConfigValue flag;
  if (name->is_unknown() || name->kind != ValueKind::String) {
    flag = make_unknown(to_display(*name), name->where);
  } else {
    bool distributed = name->text == "distributed_fused_adam" || name->text == "mcore_distributed_optim";
    flag = make_bool(distributed, name->where);
    flag.where.origin = fmt::format("optim.name {} {} the distributed optimizer", name->text,
                                    distributed ? "is" : "is not");
  }
  assign_path(out, {"ddp", "use_distributed_optimizer"}, flag);
  assign_path(out, {"optimizer", "use_distributed_optimizer"}, flag);
}

// trainer.precision: bf16 / bf16-mixed, 16 / 16-mixed, 32.
void map_precision(const ConfigValue& root, ConfigValue& out) {
  const ConfigValue* precision = find_path(root, "trainer.precision");
  if (!precision || precision->is_null()) return;
  if (precision->is_unknown()) {
    assign_path(out, {"model", "bf16"}, make_unknown(precision->text, precision->where));
    assign_path(out, {"model", "fp16"}, make_unknown(precision->text, precision->where));
    return;
  }
  std::string text = precision->kind == ValueKind::String ? precision->text : to_display(*precision);
  bool bf16 = text.rfind("bf16", 0) == 0;
  bool fp16 = text == "16" || text.rfind("16-", 0) == 0;
  assign_path(out, {"model", "bf16"}, make_bool(bf16, precision->where));
  assign_path(out, {"model", "fp16"}, make_bool(fp16, precision->where));
}

// The checkpoint a fine-tuning, PEFT or Aligner config starts from: its
// model replaces what the file leaves out. Aligner configs name it in a
// `pretrained_checkpoint` section, serving configs in `<x>_model_file`,
// whose path is given at launch (null in the file): the model is still the
// checkpoint's.
std::optional<ConfigValue> restored_checkpoint(const ConfigValue& root) {
  for (std::string_view path :
       {"restore_from_path", "model.restore_from_path", "pretrained_checkpoint.restore_from_path"}) {
    const ConfigValue* value = find_path(root, path);
    if (value && !value->is_null()) return *value;
  }
  if (const ConfigValue* aligner = find_child(root, "pretrained_checkpoint"); aligner && aligner->is_map()) {
    const ConfigValue* path = find_child(*aligner, "restore_from_path");
    return make_unknown("the checkpoint given at launch", path ? path->where : aligner->where);
  }
  // Serving configs: rm_model_file, gpt_model_file, ...
  for (const MapEntry& entry : root.entries) {
    const std::string& key = entry.key;
    if (key.size() >= 10 && key.compare(key.size() - 10, 10, "model_file") == 0) {
      return make_unknown("the model file given at launch", entry.value.where);
    }
  }
  return std::nullopt;
}

LocatedInt trainer_count(const ConfigValue* value, std::string_view what) {
  LocatedInt count;
  if (!value) {
    count.unknown_because = fmt::format("the config does not set {}", what);
    return count;
  }
  count.where = value->where;
  if (value->is_list()) {
    count.unknown_because = fmt::format("{} is a list of device ids", what);
    return count;
  }
  count.value = as_int(value);
  if (count.value && *count.value > 0) return count;
  count.value.reset();
  if (value->is_unknown()) {
    count.unknown_because = fmt::format("{} is `{}`, which depends on the environment", what, value->text);
  } else if (as_int(value) == -1) {
    count.unknown_because = fmt::format("{} is -1: every GPU the node has", what);
  } else {
    count.unknown_because = fmt::format("{} is `{}`, not a count", what, to_display(*value));
  }
  return count;
}

Provenance default_where() {
  Provenance where;
  where.layer = Layer::SchemaDefault;
  where.origin = "the NeMo default";
  return where;
}

void default_if_absent(Job& job, std::string_view path, ConfigValue value) {
  if (find_path(job.config, path)) return;
  assign_path(job.config, split_path(path), std::move(value));
}

}  // namespace

bool is_nemo_config(const ConfigValue& root) {
  if (!root.is_map()) return false;
  const ConfigValue* trainer = find_child(root, "trainer");
  const ConfigValue* model = find_child(root, "model");
  if (!trainer || !model || !trainer->is_map() || !model->is_map()) return false;
  return !holds_any(root, {"policy", "actor_rollout_ref", "MODEL_ARGS", "_target_"});
}

NemoConfig read_nemo_config(const ConfigValue& root) {
  NemoConfig out;
  out.config = make_map();
  ConfigValue resolved = resolved_copy(root);
  if (const ConfigValue* model = find_child(resolved, "model"); model && model->is_map()) {
    out.inference = find_child(resolved, "inference") && find_child(resolved, "inference")->is_map();
    map_model_fields(*model, out.inference, out.config);
    map_fine_tuning_batch(*model, out.inference, out.config);
    map_sequence_length(*model, out.config);
    map_optimizer(*model, out.config);
  }
  map_precision(resolved, out.config);
  if (std::optional<ConfigValue> checkpoint = restored_checkpoint(resolved)) {
    assign_path(out.config, {"checkpoint", "pretrained_checkpoint"}, *checkpoint);
  }
  out.cluster.nodes = trainer_count(find_path(resolved, "trainer.num_nodes"), "trainer.num_nodes");
  out.cluster.gpus_per_node = trainer_count(find_path(resolved, "trainer.devices"), "trainer.devices");
  return out;
}

void apply_nemo_defaults(Job& job) {
  const ConfigValue* checkpoint = find_path(job.config, "checkpoint.pretrained_checkpoint");
  if (checkpoint && !checkpoint->is_null()) return;  // the checkpoint's model fills the gaps
  for (std::string_view path : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                                "model.context_parallel_size", "model.expert_model_parallel_size"}) {
    default_if_absent(job, path, make_int(1, default_where()));
  }
  default_if_absent(job, "model.sequence_parallel", make_bool(false, default_where()));
  default_if_absent(job, "model.virtual_pipeline_model_parallel_size", make_null(default_where()));
  default_if_absent(job, "model.num_moe_experts", make_null(default_where()));
  if (auto tp = as_int(find_path(job.config, "model.tensor_model_parallel_size"))) {
    Provenance where = default_where();
    where.origin = fmt::format("NeMo 1.x has no expert tensor parallelism: experts are split like the dense "
                               "layers (tensor_model_parallel_size {})",
                               *tp);
    default_if_absent(job, "model.expert_tensor_parallel_size", make_int(*tp, where));
  }
}

}  // namespace mblint
