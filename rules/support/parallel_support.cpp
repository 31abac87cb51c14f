#include "rules/support/parallel_support.h"

#include <algorithm>

namespace mblint {

std::optional<bool> sequence_parallel_runs(const Derived& d) {
  if (!d.sequence_parallel.value) return std::nullopt;
  if (!*d.sequence_parallel.value) return false;
  if (!d.tensor_parallel.known()) return std::nullopt;
  return *d.tensor_parallel > 1;
}

Note derived_note(const Quantity& quantity) {
  std::string value = quantity.value ? std::to_string(*quantity.value) : std::string("unknown");
  if (quantity.how.empty()) return Note{fmt::format("{} {}", quantity.name, value), {}};
  return Note{fmt::format("{} {} = {}", quantity.name, value, quantity.how), {}};
}

bool chosen_by_recipe(std::initializer_list<const Provenance*> values) {
  return std::all_of(values.begin(), values.end(), [](const Provenance* p) { return p->layer == Layer::Recipe; });
}

// A default that is None reads "None", as the program's own default does.
std::string shown(const SettingValue& setting, const ConfigValue& node) {
  return setting.defaulted() && node.is_null() ? "None" : to_display(node);
}

IntList read_int_list(const Job& job, std::string_view path) {
  IntList list;
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = locate(setting, list);
  if (!node) return list;
  list.present = setting.source == SettingSource::Written;
  list.display = shown(setting, *node);
  if (node->is_null()) {
    list.null = true;
    return list;
  }
  if (!node->is_list()) return list;
  std::vector<int64_t> values;
  for (const ConfigValue& item : node->items) {
    auto value = as_int(&item);
    if (!value) return list;
    values.push_back(*value);
  }
  list.values = std::move(values);
  return list;
}

bool CpCommType::contains(std::string_view type) const {
  return std::any_of(types.begin(), types.end(), [&](const std::string& t) { return t == type; });
}

std::string normalise_cp_comm_type(std::string_view type) {
  std::string out;
  for (char c : type) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

CpCommType read_cp_comm_type(const Job& job) {
  CpCommType cp;
  SettingValue setting = read_setting(job, "model.cp_comm_type");
  const ConfigValue* node = setting.node();
  if (!node) {
    cp.absent = true;
    return cp;
  }
  cp.where = node->where;
  cp.display = shown(setting, *node);
  if (node->is_unknown()) return cp;
  if (node->is_null()) {
    cp.known = true;
    cp.null = true;
    cp.types = {"p2p"};
    return cp;
  }
  if (node->kind == ValueKind::String) {
    cp.known = true;
    cp.types = {node->text};
    cp.type_where = {node->where};
    return cp;
  }
  if (!node->is_list()) {
    cp.known = true;
    cp.not_text = true;
    return cp;
  }
  cp.is_list = true;
  for (const ConfigValue& item : node->items) {
    if (item.is_unknown()) return cp;
    if (item.kind != ValueKind::String) {
      cp.known = true;
      cp.not_text = true;
      return cp;
    }
    cp.types.push_back(item.text);
    cp.type_where.push_back(item.where);
  }
  // Megatron-LM's nargs='+' flag: one word is the type of every layer.
  if (megatron_lm_command_line(job) && cp.types.size() == 1) cp.is_list = false;
  cp.known = true;
  return cp;
}

Setting gated_linear_unit(const Job& job) { return read_flag(job, "model.gated_linear_unit"); }

std::optional<std::string> dataset_class(const Job& job) {
  TextSetting target = config_text(job, "dataset._target_");
  if (!target.value) return std::nullopt;
  size_t dot = target.value->rfind('.');
  return dot == std::string::npos ? *target.value : target.value->substr(dot + 1);
}

bool multi_latent_attention(const Job& job) {
  return as_bool(find_path(job.config, "model.multi_latent_attention")).value_or(false);
}

std::optional<Provenance> kv_channels_unset(const Job& job) {
  SettingValue kv_channels = read_setting(job, "model.kv_channels");
  if (const ConfigValue* node = kv_channels.node()) {
    return node->is_null() ? std::optional<Provenance>(node->where) : std::nullopt;
  }
  if (job.recipe && job.recipe->dims && job.recipe->dims->kv_channels == 0) return Provenance{};
  return std::nullopt;
}

std::optional<HeadsPerRank> heads_per_rank(const RuleContext& context) {
  const Derived& d = context.derived;
  if (!d.tensor_parallel.known() || !d.num_attention_heads.known()) return std::nullopt;
  int64_t tp = *d.tensor_parallel;
  int64_t heads = *d.num_attention_heads;
  if (tp <= 0 || heads <= 0 || heads % tp != 0) return std::nullopt;
  HeadsPerRank per_rank;
  per_rank.query = heads / tp;
  if (multi_latent_attention(context.job)) {
    per_rank.key_value = per_rank.query;
    return per_rank;
  }
  // num_query_groups null means multi-head attention (one group per head).
  const ConfigValue* groups_node = find_path(context.job.config, "model.num_query_groups");
  const Recipe* recipe = context.job.recipe;
  bool mha = (groups_node && groups_node->is_null()) || (!groups_node && context.job.config_complete) ||
             (!groups_node && recipe && recipe->dims && recipe->dims->num_query_groups == 0);
  int64_t groups = mha ? heads : d.num_query_groups.known() ? *d.num_query_groups : 0;
  if (groups <= 0) return std::nullopt;
  if (groups < tp) {
    per_rank.key_value = 1;
  } else if (groups % tp == 0) {
    per_rank.key_value = groups / tp;
  } else {
    return std::nullopt;
  }
  return per_rank;
}

}  // namespace mblint

namespace mblint {

Dsv4Attention dsv4_attention(const Job& job) {
  TextSetting variant = config_text(job, "model.experimental_attention_variant");
  if (variant.value) return {*variant.value == "dsv4_hybrid", variant.where};
  bool catalogued = job.recipe && job.recipe->dims && job.recipe->dims->dsv4 && *job.recipe->dims->dsv4;
  if (catalogued && !variant.present) return {true, job.recipe_where};
  return {};
}

}  // namespace mblint
