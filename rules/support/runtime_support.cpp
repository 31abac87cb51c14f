#include "rules/support/runtime_support.h"

#include <algorithm>
#include <array>

#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/model/mixed_precision_presets.h"
#include "lint/model/schema.h"

namespace mblint {

Setting either_flag(const Job& job, std::string_view first, std::string_view second) {
  Setting a = read_flag(job, first);
  Setting b = read_flag(job, second);
  bool a_on = a.value.value_or(false);
  bool b_on = b.value.value_or(false);
  if (a_on && b_on) return rank_of(b.where) > rank_of(a.where) ? b : a;
  if (a_on) return a;
  if (b_on) return b;
  if (a.value && b.value) return rank_of(b.where) > rank_of(a.where) ? b : a;
  Setting unknown = a.value ? b : a;
  unknown.value.reset();
  return unknown;
}

bool megatron_lm_validates_flags(const Job& job) {
  return megatron_lm_command_line(job) && !job.megatron_lm_script.empty() &&
         !config_node(job, "megatron_lm.yaml_cfg");  // --yaml-cfg replaces every argument
}

Setting megatron_fsdp(const Job& job) {
  Setting s = either_flag(job, "dist.use_megatron_fsdp", "ddp.use_megatron_fsdp");
  s.name = "use_megatron_fsdp";
  return s;
}

Setting distributed_optimizer(const Job& job) {
  Setting fsdp = megatron_fsdp(job);
  if (fsdp.value.value_or(false)) {
    Setting s = fsdp;
    s.name = "use_distributed_optimizer";
    s.where.origin = "Megatron-FSDP switches the distributed optimizer on";
    return s;
  }
  // Megatron-FSDP would switch it on; a job that turns it off in both places
  // and does not say it uses FSDP is taken at its word.
  return either_flag(job, "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer");
}

std::optional<bool> comm_overlap_sets_dp_overlap(const Job& job) {
  if (job.dialect != Dialect::Bridge) return false;
  const ConfigValue* section = find_path(job.config, "comm_overlap");
  if ((section && section->is_null()) || (!section && job.config_complete)) return false;
  Setting ddp = read_flag(job, "ddp.use_distributed_optimizer");
  if (ddp.value && !*ddp.value) return false;
  if (!section || !section->is_map() || !ddp.value) return std::nullopt;
  return true;
}

namespace {

bool editable(const Job& job) { return job.dialect != Dialect::MegatronLM; }

// A Megatron-LM flag that is not on the command line at all: appended to the
// launch command, after the script's other arguments.
bool can_append_flag(const Job& job, const Provenance& where) {
  return job.kind == InputKind::LaunchScript && job.launch_span.valid() && !where.statement.valid() &&
         !where.value.valid() && where.via.empty() && where.layer != Layer::Rewrite;
}

bool store_true_flag(std::string_view name) {
  for (const MegatronLmFlag& flag : megatron_lm_flags()) {
    if (flag.flag == name && flag.constant == "true") return true;
  }
  return false;
}

Fix value_fix(const Job& job, const std::string& name, const std::string& path, const Provenance& where,
              std::string_view text, FixSafety safety) {
  Fix fix;
  std::string flag = setting_name(job, path);
  bool as_flag = job.dialect == Dialect::MegatronLM && flag.rfind("--", 0) == 0;
  fix.description = as_flag ? fmt::format("pass {} {}", flag, text) : fmt::format("set {} to {}", name, text);
  fix.safety = safety;
  // The re-check lints the job again with the value changed.
  if (!path.empty()) fix.changes.push_back(SettingChange{path, std::string(text)});
  if (editable(job)) {
    edit_or_set(fix, where, path, std::string(text));
  } else if (as_flag) {
    // The value after the flag, or the flag and value added to the command.
    if (auto edit = replace_value(where, std::string(text))) {
      fix.edits.push_back(*edit);
    } else if (text != "null" && can_append_flag(job, where)) {
      fix.edits.push_back(TextEdit{make_span(job.launch_span.file, job.launch_span.end, job.launch_span.end),
                                   fmt::format(" {} {}", flag, text)});
    }
  }
  return fix;
}

}  // namespace

Fix text_fix(const Job& job, const Choice& choice, std::string_view text, FixSafety safety) {
  return value_fix(job, choice.name, choice.path, choice.where, text, safety);
}

Fix text_fix(const Job& job, const NameList& list, std::string_view text, FixSafety safety) {
  return value_fix(job, list.name, list.path, list.where, text, safety);
}

Fix flag_fix(const Job& job, const Setting& setting, bool value, FixSafety safety) {
  if (job.dialect == Dialect::MegatronLM) {
    std::string flag = setting_name(job, setting.path);
    if (flag.rfind("--", 0) != 0) {
      // A setting only a flag's second path writes (model.fp8_param: --fp8-param-gather).
      for (const MegatronLmFlag& f : megatron_lm_flags()) {
        if (f.also == setting.path && f.constant == "true") flag = std::string(f.flag);
      }
    }
    Fix fix = advice_fix(value ? fmt::format("pass {}", flag) : fmt::format("drop {}", flag), safety);
    // The re-check sets what the flag sets: its path, and the second path
    // some flags also write (--fp8-param-gather: fp8_param too).
    std::string text = value ? "true" : "false";
    if (!setting.path.empty()) fix.changes.push_back(SettingChange{setting.path, text});
    if (const MegatronLmFlag* mapped = find_megatron_lm_flag(flag)) {
      for (std::string_view path : {mapped->path, mapped->also}) {
        if (!path.empty() && path != setting.path) fix.changes.push_back(SettingChange{std::string(path), text});
      }
    }
    if (!store_true_flag(flag) || job.kind != InputKind::LaunchScript) return fix;
    const Provenance& where = setting.where;
    if (value && can_append_flag(job, where)) {
      fix.edits.push_back(TextEdit{make_span(job.launch_span.file, job.launch_span.end, job.launch_span.end),
                                   " " + flag});
    } else if (!value && where.statement.valid() && where.via.empty() && where.layer != Layer::Rewrite &&
               where.statement == where.key) {
      fix.edits.push_back(TextEdit{where.statement, ""});  // the flag as written, alone
    }
    return fix;
  }
  return value_fix(job, setting.name, setting.path, setting.where, value ? "true" : "false", safety);
}

Fix int_fix(const Job& job, const Quantity& quantity, int64_t value, FixSafety safety) {
  return value_fix(job, quantity.name, quantity.path, quantity.where, std::to_string(value), safety);
}

Fix unset_fix(const Job& job, const std::string& path, const Provenance& where, FixSafety safety) {
  if (job.dialect == Dialect::MegatronLM) return advice_fix(fmt::format("drop {}", setting_name(job, path)), safety);
  return value_fix(job, last_segment(path), path, where, "null", safety);
}

Fix advice_fix(std::string description, FixSafety safety) {
  Fix fix;
  fix.description = std::move(description);
  fix.safety = safety;
  return fix;
}

Span first_span(const Job& job, std::initializer_list<Span> candidates) {
  for (const Span& span : candidates) {
    if (span.valid()) return span;
  }
  if (job.launch_span.valid()) return job.launch_span;
  return primary_span(job.recipe_where);
}

int rank_of(const Provenance& where) {
  return primary_span(where).valid() ? layer_rank(where.layer) : -1;
}

std::string setting_name(const Job& job, std::string_view path) {
  if (job.dialect == Dialect::MegatronLM) {
    for (const MegatronLmFlag& flag : megatron_lm_flags()) {
      if (flag.path == path && flag.constant.empty()) return std::string(flag.flag);
    }
    for (const MegatronLmFlag& flag : megatron_lm_flags()) {
      if (flag.path == path && flag.constant == "true") return std::string(flag.flag);
    }
    for (const MegatronLmFlag& flag : megatron_lm_extra_flags()) {
      if (flag.path == path) return std::string(flag.flag);
    }
  }
  return std::string(path);
}

// --- precision ------------------------------------------------------------------

namespace {

// Where a preset's value is shown: at the preset, never editable there (the
// edit would rewrite the preset name).
Provenance preset_where(const Provenance& at, std::string origin) {
  Provenance p;
  p.layer = at.layer;
  p.key = primary_span(at);
  p.origin = std::move(origin);
  return p;
}

struct PresetSource {
  const MixedPrecisionPreset* preset = nullptr;
  Provenance at;
  std::string recipe;  // non-empty: the recipe's preset
  std::string label;   // how notes name it
};

Setting preset_flag(const PresetSource& src, std::string_view field, bool value) {
  Setting s;
  s.name = std::string(field);
  s.path = "mixed_precision." + s.name;
  s.value = value;
  s.where = preset_where(src.at, fmt::format("{} {} = {}", src.label, field, value ? "true" : "false"));
  return s;
}

Choice preset_choice(const PresetSource& src, std::string_view field, std::string_view value) {
  Choice c;
  c.name = std::string(field);
  c.path = "mixed_precision." + c.name;
  c.known = true;
  if (!value.empty()) c.value = std::string(value);
  c.where = preset_where(src.at, fmt::format("{} {} = {}", src.label, field, value.empty() ? "None" : value));
  return c;
}

Quantity preset_int(const PresetSource& src, std::string_view field, int value) {
  Quantity q;
  q.name = std::string(field);
  q.path = "mixed_precision." + q.name;
  q.value = value;
  q.where = preset_where(src.at, fmt::format("{} {} = {}", src.label, field, value));
  return q;
}

Precision from_preset(const PresetSource& src) {
  const MixedPrecisionPreset& p = *src.preset;
  Precision out;
  out.bf16 = preset_flag(src, "bf16", !p.fp16 && !p.config_defaults());
  out.fp16 = preset_flag(src, "fp16", p.fp16);
  out.fp8 = preset_choice(src, "fp8", p.fp8);
  out.fp8_recipe = preset_choice(src, "fp8_recipe", p.fp8_recipe);
  out.fp8_param = preset_flag(src, "fp8_param_gather", p.fp8_param_gather);
  out.fp8_param_gather = out.fp8_param;
  out.first_last_layers_bf16 = preset_flag(src, "first_last_layers_bf16", p.first_last_layers_bf16);
  out.layers_at_start_in_bf16 = preset_int(src, "num_layers_at_start_in_bf16", p.layers_at_start);
  out.layers_at_end_in_bf16 = preset_int(src, "num_layers_at_end_in_bf16", p.layers_at_end);
  out.fp4 = preset_choice(src, "fp4", p.fp4);
  out.fp4_param = preset_flag(src, "fp4_param_gather", p.fp4_param_gather);
  out.grad_reduce_in_fp32 = preset_flag(src, "grad_reduce_in_fp32", p.grad_reduce_in_fp32);
  out.reuse_grad_buf_for_mxfp8_param_ag = preset_flag(src, "reuse_grad_buf_for_mxfp8_param_ag", p.reuse_grad_buf);
  return out;
}

// The values a job states without mixed_precision: model.*, ddp.* (Bridge
// with mixed_precision None, Megatron-LM, NeMo).
Precision from_model(const Job& job) {
  Precision out;
  out.bf16 = read_flag(job, "model.bf16");
  out.fp16 = read_flag(job, "model.fp16");
  out.fp8 = read_choice(job, "model.fp8");
  out.fp8_recipe = read_choice(job, "model.fp8_recipe");
  out.fp8_param = read_flag(job, "model.fp8_param");
  out.fp8_param_gather = read_flag(job, "ddp.fp8_param_gather");
  out.first_last_layers_bf16 = read_flag(job, "model.first_last_layers_bf16");
  out.layers_at_start_in_bf16 = config_int(job, "model.num_layers_at_start_in_bf16");
  out.layers_at_end_in_bf16 = config_int(job, "model.num_layers_at_end_in_bf16");
  out.fp4 = read_choice(job, "model.fp4");
  out.fp4_param = read_flag(job, "model.fp4_param");
  out.grad_reduce_in_fp32 = read_flag(job, "ddp.grad_reduce_in_fp32");
  out.reuse_grad_buf_for_mxfp8_param_ag = read_flag(job, "ddp.reuse_grad_buf_for_mxfp8_param_ag");
  return out;
}

// Every field unknown (a partial YAML without a recipe under Bridge).
Precision unknown_precision() {
  Precision out;
  for (Setting* s : {&out.bf16, &out.fp16, &out.fp8_param, &out.fp8_param_gather, &out.first_last_layers_bf16,
                     &out.fp4_param, &out.grad_reduce_in_fp32, &out.reuse_grad_buf_for_mxfp8_param_ag}) {
    s->value.reset();
  }
  out.bf16.name = "bf16";
  out.fp16.name = "fp16";
  out.fp8.name = "fp8";
  out.fp8_recipe.name = "fp8_recipe";
  out.fp4.name = "fp4";
  out.first_last_layers_bf16.name = "first_last_layers_bf16";
  out.fp8_param.name = "fp8_param";
  out.fp8_param_gather.name = "fp8_param_gather";
  out.fp4_param.name = "fp4_param";
  out.grad_reduce_in_fp32.name = "grad_reduce_in_fp32";
  out.reuse_grad_buf_for_mxfp8_param_ag.name = "reuse_grad_buf_for_mxfp8_param_ag";
  out.layers_at_start_in_bf16.name = "num_layers_at_start_in_bf16";
  out.layers_at_end_in_bf16.name = "num_layers_at_end_in_bf16";
  return out;
}

// A mixed_precision section's own entries win over its base.
void apply_section(const ConfigValue& section, Precision& out) {
  auto flag = [&](std::string_view key, Setting& target) {
    const ConfigValue* node = find_child(section, key);
    if (!node) return false;
    target.name = std::string(key);
    target.path = "mixed_precision." + target.name;
    target.where = node->where;
    target.defaulted = false;
    target.value = node->is_null() ? std::optional<bool>(false) : as_bool(node);
    return true;
  };
  auto choice = [&](std::string_view key, Choice& target) {
    const ConfigValue* node = find_child(section, key);
    if (!node) return;
    target = Choice{};
    target.name = std::string(key);
    target.path = "mixed_precision." + target.name;
    target.where = node->where;
    if (node->is_null()) target.known = true;
    if (node->kind == ValueKind::String) {
      target.known = true;
      target.value = node->text;
    }
  };
  auto integer = [&](std::string_view key, Quantity& target) {
    const ConfigValue* node = find_child(section, key);
    if (!node) return;
    target = Quantity{};
    target.name = std::string(key);
    target.path = "mixed_precision." + target.name;
    target.where = node->where;
    target.value = as_int(node);
  };
  flag("bf16", out.bf16);
  flag("fp16", out.fp16);
  choice("fp8", out.fp8);
  choice("fp8_recipe", out.fp8_recipe);
  // fp8_param and fp8_param_gather are kept equal by MixedPrecisionConfig.
  Setting param = out.fp8_param;
  if (flag("fp8_param_gather", param) || flag("fp8_param", param)) {
    out.fp8_param = param;
    out.fp8_param_gather = param;
  }
  flag("first_last_layers_bf16", out.first_last_layers_bf16);
  integer("num_layers_at_start_in_bf16", out.layers_at_start_in_bf16);
  integer("num_layers_at_end_in_bf16", out.layers_at_end_in_bf16);
  choice("fp4", out.fp4);
  Setting fp4_param = out.fp4_param;
  if (flag("fp4_param_gather", fp4_param) || flag("fp4_param", fp4_param)) out.fp4_param = fp4_param;
  flag("grad_reduce_in_fp32", out.grad_reduce_in_fp32);
  flag("reuse_grad_buf_for_mxfp8_param_ag", out.reuse_grad_buf_for_mxfp8_param_ag);
}

std::string preset_label(const Job& job, const ConfigValue& node, const std::string& name) {
  if (node.where.layer == Layer::Recipe && job.recipe) {
    return fmt::format("recipe {} uses mixed_precision {}, which sets", job.recipe->name, name);
  }
  return fmt::format("mixed_precision {} sets", name);
}

// The recipe's preset under a mixed_precision mapping that was merged onto it.
std::optional<PresetSource> recipe_base(const Job& job, const ConfigValue& node) {
  if (!job.recipe || !job.recipe->precision || !*job.recipe->precision) return std::nullopt;
  for (const Provenance& earlier : node.earlier) {
    if (earlier.layer != Layer::Recipe) continue;
    PresetSource src;
    src.preset = find_mixed_precision_preset(job.recipe->precision, true);
    if (!src.preset) return std::nullopt;
    src.at = earlier;
    src.label = fmt::format("recipe {} uses mixed_precision {}, which sets", job.recipe->name, job.recipe->precision);
    return src;
  }
  return std::nullopt;
}

// Recipes adjust the grad_reduce_in_fp32 of the preset they start from (the
// performance recipes and many library recipes turn it off); the catalog
// records what the recipe's mixed_precision config is left with.
void apply_recipe_grad_reduce(const Job& job, const Provenance& at, Precision& out) {
  const Recipe* recipe = job.recipe;
  if (!recipe || !recipe->grad_reduce_from_mixed_precision || recipe->grad_reduce_in_fp32 < 0) return;
  bool value = recipe->grad_reduce_in_fp32 == 1;
  out.grad_reduce_in_fp32.value = value;
  out.grad_reduce_in_fp32.where = preset_where(
      at, fmt::format("recipe {} sets mixed_precision.grad_reduce_in_fp32 = {}", recipe->name, value ? "true" : "false"));
}

}  // namespace

Precision effective_precision(const Job& job) {
  if (job.dialect != Dialect::Bridge) return from_model(job);
  const ConfigValue* node = find_path(job.config, "mixed_precision");
  if (!node) return job.config_complete ? from_model(job) : unknown_precision();
  if (node->is_null()) return from_model(job);
  Precision out;
  if (node->kind == ValueKind::String) {
    PresetSource src;
    src.preset = find_mixed_precision_preset(node->text, node->where.layer == Layer::Recipe);
    if (!src.preset) return unknown_precision();
    src.at = node->where;
    src.label = preset_label(job, *node, node->text);
    out = from_preset(src);
    out.preset = node->text;
    if (node->where.layer == Layer::Recipe) apply_recipe_grad_reduce(job, node->where, out);
  } else if (node->is_map()) {
    std::optional<PresetSource> base = recipe_base(job, *node);
    if (base) {
      out = from_preset(*base);
      out.preset = base->preset->name;
      apply_recipe_grad_reduce(job, base->at, out);
    } else if (job.config_complete || find_child(*node, "_target_")) {
      PresetSource src;
      src.preset = &mixed_precision_config_defaults();
      src.at = node->where;
      src.label = "MixedPrecisionConfig's default is";
      out = from_preset(src);
      for (Setting* s : {&out.bf16, &out.fp16, &out.fp8_param, &out.fp8_param_gather, &out.first_last_layers_bf16,
                         &out.fp4_param, &out.grad_reduce_in_fp32, &out.reuse_grad_buf_for_mxfp8_param_ag}) {
        s->defaulted = true;
      }
    } else {
      out = unknown_precision();
    }
    apply_section(*node, out);
  } else {
    return unknown_precision();
  }
  out.from_mixed_precision = true;
  out.mixed_precision_where = node->where;
  return out;
}

RuleMemo& memo_of(const RuleContext& context) {
  if (!context.memo) context.memo = std::make_shared<RuleMemo>();
  return *std::static_pointer_cast<RuleMemo>(context.memo);
}

const Precision& effective_precision(const RuleContext& context) {
  RuleMemo& memo = memo_of(context);
  if (!memo.precision) memo.precision = effective_precision(context.job);
  return *memo.precision;
}

// --- environment --------------------------------------------------------------

bool has_expandable_segments(const std::string& alloc_conf) {
  for (const std::string& option : split_names(alloc_conf)) {
    if (option == "expandable_segments:True") return true;
  }
  return false;
}

// --- CUDA graphs and recompute -----------------------------------------------

CudaGraphs cuda_graphs(const Job& job) {
  CudaGraphs g;
  g.impl = read_choice(job, "model.cuda_graph_impl");
  // The deprecated switches stand for an implementation when it is "none".
  if (!g.impl.is_set() || *g.impl.value == "none") {
    for (auto [path, impl] : {std::pair{"model.enable_cuda_graph", "local"},
                              std::pair{"model.external_cuda_graph", "transformer_engine"}}) {
      Setting legacy = config_bool(job, path);
      if (legacy.value.value_or(false)) {
        g.impl.value = impl;
        g.impl.known = true;
        g.impl.where = legacy.where;
        g.impl.where.origin = fmt::format("{} set to true here: {} CUDA graphs", legacy.name, impl);
        g.impl.name = legacy.name;
      }
    }
  }
  NameList modules = read_names(job, "model.cuda_graph_modules");
  NameList scope = read_names(job, "model.cuda_graph_scope");
  // cuda_graph_scope is the older spelling; the one that says something wins.
  g.modules = scope.items && !scope.items->empty() ? scope : modules;
  if (!g.modules.known && scope.known && !scope.items) g.modules = modules.known ? modules : scope;
  if (g.modules.items) {
    auto& items = *g.modules.items;
    items.erase(std::remove(items.begin(), items.end(), "full"), items.end());
  }
  bool local_full = g.impl.is("local") && g.modules.contains("full_iteration");
  g.full_iteration = g.impl.is("full_iteration") || local_full;
  return g;
}

NameList recompute_modules(const Job& job) {
  NameList list = read_names(job, "model.recompute_modules");
  if (list.known && !list.items) {
    list.items = std::vector<std::string>{"core_attn"};
    list.defaulted = true;
    if (!primary_span(list.where).valid() || list.where.layer == Layer::SchemaDefault) {
      list.where = Provenance{};
      list.where.layer = Layer::SchemaDefault;
      list.where.origin = "recompute_modules is unset: Megatron-Core uses [core_attn]";
    }
  }
  return list;
}

std::vector<std::string_view> allowed_recompute_modules(const Version& version) {
  std::vector<std::string_view> names = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe"};
  if (version >= Version{0, 14, 0}) names.push_back("shared_experts");
  if (version >= Version{0, 19, 0}) names.push_back("gdn_norm_out");
  if (version >= Version{0, 20, 0}) {
    for (std::string_view n : {"gdp_in_proj", "gdp_qkv", "mhc"}) names.push_back(n);
  }
  return names;
}

}  // namespace mblint
