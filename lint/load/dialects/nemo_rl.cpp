#include "lint/load/dialects/nemo_rl.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/base/made_word.h"
#include "lint/base/yaml_scalar.h"
#include "lint/load/yaml/interpolation.h"

namespace fs = std::filesystem;

namespace mblint {

namespace {

// How many files a `defaults:` chain may hold, one inheriting from the next.
constexpr size_t kMaxInheritance = 8;

// The files a config inherits from, as written: `defaults: ../../dpo.yaml`
// or a list of such paths. Taken out of the config, as NeMo-RL does.
std::vector<ConfigValue> take_defaults(ConfigValue& config) {
  std::vector<ConfigValue> parents;
  auto it = std::find_if(config.entries.begin(), config.entries.end(),
                         [](const MapEntry& e) { return e.key == "defaults"; });
  if (it == config.entries.end()) return parents;
  if (it->value.is_list()) {
    parents = it->value.items;
  } else {
    parents.push_back(it->value);
  }
  config.entries.erase(it);
  return parents;
}

struct Chain {
  const ReadNemoRlYaml& read;
  std::vector<fs::path> reading;  // the files being read, outermost first
  std::vector<Unresolved> unresolved;
};

std::optional<ConfigValue> load_with_parents(Chain& chain, const fs::path& path, Span named_at) {
  fs::path normal = path.lexically_normal();
  if (std::find(chain.reading.begin(), chain.reading.end(), normal) != chain.reading.end()) {
    chain.unresolved.push_back(Unresolved{"config file",
                                          fmt::format("`{}` inherits from itself through `defaults:`", path.string()),
                                          "break the cycle in the `defaults:` chain", named_at});
    return std::nullopt;
  }
  if (chain.reading.size() >= kMaxInheritance) {
    chain.unresolved.push_back(Unresolved{
        "config file",
        fmt::format("the `defaults:` chain is deeper than {} files; `{}` is not read", kMaxInheritance, path.string()),
        "shorten the chain", named_at});
    return std::nullopt;
  }
  std::string why;
  std::optional<ConfigValue> config = chain.read(normal, named_at, why);
  if (!config) {
    chain.unresolved.push_back(Unresolved{"config file", why,
                                          "check the path: NeMo-RL reads it relative to the file that names it",
                                          named_at});
    return std::nullopt;
  }
  if (!config->is_map()) return make_map();
  chain.reading.push_back(normal);
  ConfigValue merged = make_map();
  for (const ConfigValue& parent : take_defaults(*config)) {
    Span at = parent.where.value;
    if (parent.kind != ValueKind::String) {
      chain.unresolved.push_back(Unresolved{
          "config file", fmt::format("`defaults:` holds `{}`, which is not a file path", to_display(parent)),
          "name the parent file as a path relative to this file", at});
      continue;
    }
    fs::path named = parent.text;
    if (std::optional<ConfigValue> loaded =
            load_with_parents(chain, named.is_absolute() ? named : normal.parent_path() / named, at)) {
      merge_into(merged, *loaded);
    }
  }
  chain.reading.pop_back();
  merge_into(merged, *config);
  return merged;
}

// `key=value`, `+key=value`, `++key=value` and `~key` as NeMo-RL applies
// them (OmegaConf's dotted update; the value typed as YAML).
void apply_override(ConfigValue& root, const MappedString& word, std::string_view prefix) {
  std::string_view text = word.text;
  if (text.empty() || text[0] == '-') return;
  size_t eq = text.find('=');
  size_t start = text.find_first_not_of("+~");
  if (start == std::string_view::npos) return;
  if (text.substr(start, prefix.size()) != prefix) return;
  start += prefix.size();
  std::string key(text.substr(start, eq == std::string_view::npos ? std::string_view::npos : eq - start));
  if (key.empty() || has_unknown(word, 0, eq == std::string_view::npos ? text.size() : eq)) return;
  if (text[0] == '~') {
    erase_path(root, split_path(key));
    return;
  }
  if (eq == std::string_view::npos) return;
  Provenance where;
  where.layer = Layer::Override;
  where.key = span_of(word, start, eq);
  where.value = span_of(word, eq + 1, text.size());
  where.statement = span_of(word, 0, text.size());
  std::string value(text.substr(eq + 1));
  ConfigValue typed = has_unknown(word, eq + 1, text.size()) ? make_unknown(value, where)
                                                              : type_plain_scalar(value, YamlFlavor::OmegaConf);
  typed.where = where;
  assign_path(root, split_path(key), std::move(typed));
}

// The value of `key` as the text of a flag's argument: an integer as written,
// anything else (absent, null, a string, an unresolved interpolation) unknown.
MappedString size_word(const ConfigValue& root, const std::string& key, Span command) {
  const ConfigValue* value = find_path(root, key);
  if (!value) return unknown_word_at(key, command);  // set in no file mblint read
  if (auto number = as_int(value); number && value->kind == ValueKind::Int) {
    return word_at(std::to_string(*number), value->where.value.valid() ? value->where.value : command);
  }
  return unknown_word_at(fmt::format("{} = {}", key, to_display(*value)), value->where.value.valid() ? value->where.value : command);
}

LocatedInt cluster_count(const ConfigValue& root, std::string_view key, Span command) {
  LocatedInt count;
  const ConfigValue* value = find_path(root, key);
  if (!value) {
    count.unknown_because = fmt::format("the NeMo-RL config does not set {}", key);
    count.where.layer = Layer::Launcher;
    count.where.statement = command;
    return count;
  }
  count.where = value->where;
  if (value->where.layer != Layer::Override) count.where.layer = Layer::ConfigFile;
  std::optional<int64_t> number = value->kind == ValueKind::Int ? as_int(value) : std::nullopt;
  if (number && *number > 0) {
    count.value = number;
    count.where.origin = fmt::format("NeMo-RL's {} set to {} here", key, *number);
  } else {
    count.unknown_because = fmt::format("{} is `{}`, not a known count", key, to_display(*value));
  }
  return count;
}

}  // namespace

void apply_dotted_overrides(ConfigValue& root, const std::vector<MappedString>& overrides, std::string_view prefix) {
  for (const MappedString& word : overrides) apply_override(root, word, prefix);
}

NemoRlConfig read_nemo_rl_config(const fs::path& path, Span named_at, const std::vector<MappedString>& overrides,
                                 const ReadNemoRlYaml& read) {
  Chain chain{read, {}, {}};
  NemoRlConfig out;
  std::optional<ConfigValue> loaded = load_with_parents(chain, path, named_at);
  out.root = loaded ? std::move(*loaded) : make_map();
  apply_dotted_overrides(out.root, overrides);
  resolve_interpolations(out.root);
  out.unresolved = std::move(chain.unresolved);
  return out;
}

NemoRlPolicy nemo_rl_policy(const ConfigValue& root, Span command) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kSizes = {{
      {"tensor_model_parallel_size", "--tensor-model-parallel-size"},
      {"pipeline_model_parallel_size", "--pipeline-model-parallel-size"},
      {"context_parallel_size", "--context-parallel-size"},
      {"expert_model_parallel_size", "--expert-model-parallel-size"},
      {"expert_tensor_parallel_size", "--expert-tensor-parallel-size"},
  }};
  NemoRlPolicy policy;
  policy.cluster.nodes = cluster_count(root, "cluster.num_nodes", command);
  policy.cluster.gpus_per_node = cluster_count(root, "cluster.gpus_per_node", command);
  if (const ConfigValue* model = find_path(root, "policy.model_name"); model && model->kind == ValueKind::String) {
    policy.model = word_at(model->text, model->where.value);
    policy.model_statement = model->where.statement.valid() ? model->where.statement : model->where.value;
  }
  const ConfigValue* enabled = find_path(root, "policy.megatron_cfg.enabled");
  policy.megatron = enabled && enabled->kind == ValueKind::Bool ? as_bool(enabled) : std::nullopt;
  if (policy.megatron == false) return policy;
  const std::string prefix = "policy.megatron_cfg.";
  auto add = [&](std::string_view flag, MappedString value) {
    policy.arguments.push_back(word_at(flag, value.begins.empty() ? command : span_of(value, 0, value.text.size())));
    policy.arguments.push_back(std::move(value));
  };
  for (const auto& [key, flag] : kSizes) add(flag, size_word(root, prefix + std::string(key), command));
  // No virtual pipeline unless the config asks for one (Bridge's default).
  if (const ConfigValue* vpp = find_path(root, prefix + "virtual_pipeline_model_parallel_size"); vpp && !vpp->is_null())
    add("--num-virtual-stages-per-pipeline-rank", size_word(root, prefix + "virtual_pipeline_model_parallel_size", command));
  // On/off settings that Megatron-LM's defaults would otherwise decide.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kSwitches = {{
      {"sequence_parallel", "--sequence-parallel"},
      {"optimizer.use_distributed_optimizer", "--use-distributed-optimizer"},
      {"optimizer.bf16", "--bf16"},
      {"optimizer.fp16", "--fp16"},
      {"distributed_data_parallel_config.overlap_grad_reduce", "--overlap-grad-reduce"},
      {"distributed_data_parallel_config.overlap_param_gather", "--overlap-param-gather"},
  }};
  for (const auto& [key, flag] : kSwitches) {
    const ConfigValue* value = find_path(root, prefix + std::string(key));
    std::optional<bool> on = value && value->kind == ValueKind::Bool ? as_bool(value) : std::nullopt;
    if (!on) {
      policy.unknown_flags.push_back(flag);
    } else if (*on) {
      policy.arguments.push_back(word_at(flag, value->where.value.valid() ? value->where.value : command));
    }
  }
  add("--seq-length", size_word(root, "policy.max_total_sequence_length", command));
  add("--micro-batch-size", size_word(root, "policy.train_micro_batch_size", command));
  add("--global-batch-size", size_word(root, "policy.train_global_batch_size", command));
  return policy;
}

}  // namespace mblint
