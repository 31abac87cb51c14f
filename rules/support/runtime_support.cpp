#include "rules/support/runtime_support.h"

#include <algorithm>
#include <array>

#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/model/schema.h"

namespace mblint {

namespace {

Provenance default_where(std::string origin) {
  Provenance where;
  where.layer = Layer::SchemaDefault;
  where.origin = std::move(origin);
  return where;
}

// Megatron-LM's argparse defaults for the settings these rules read. Only
// used for a key some mapped flag writes: a flag mblint does not map may
// have been given, so its key stays unknown.
struct LmDefault {
  std::string_view path;
  std::string_view text;  // YAML-ish literal: true, false, null, a number or a word
};

constexpr std::array kMegatronLmDefaults = {
    LmDefault{"model.bf16", "false"},
    LmDefault{"model.fp16", "false"},
    LmDefault{"model.fp8", "null"},
    LmDefault{"model.fp8_recipe", "delayed"},
    LmDefault{"model.fp8_param", "false"},
    LmDefault{"ddp.fp8_param_gather", "false"},
    LmDefault{"model.fp4", "null"},
    LmDefault{"model.fp4_param", "false"},
    LmDefault{"ddp.fp4_param_gather", "false"},
    LmDefault{"model.first_last_layers_bf16", "false"},
    LmDefault{"model.num_layers_at_start_in_bf16", "1"},
    LmDefault{"model.num_layers_at_end_in_bf16", "1"},
    LmDefault{"ddp.grad_reduce_in_fp32", "false"},
    LmDefault{"model.recompute_granularity", "null"},
    LmDefault{"model.recompute_method", "null"},
    LmDefault{"model.recompute_num_layers", "null"},
    LmDefault{"model.recompute_modules", "null"},
    LmDefault{"model.distribute_saved_activations", "false"},
    LmDefault{"model.moe_layer_recompute", "false"},
    LmDefault{"model.cpu_offloading_num_layers", "0"},
    LmDefault{"model.fine_grained_activation_offloading", "false"},
    LmDefault{"model.offload_modules", "null"},
    LmDefault{"model.transformer_impl", "transformer_engine"},
    LmDefault{"model.cuda_graph_impl", "none"},
    LmDefault{"model.enable_cuda_graph", "false"},
    LmDefault{"model.moe_grouped_gemm", "false"},
    LmDefault{"model.multi_latent_attention", "false"},
    LmDefault{"model.moe_shared_expert_overlap", "false"},
    LmDefault{"model.tp_comm_overlap", "false"},
    LmDefault{"model.gradient_accumulation_fusion", "true"},
    LmDefault{"model.share_embeddings_and_output_weights", "true"},
    LmDefault{"ddp.use_distributed_optimizer", "false"},
    LmDefault{"optimizer.use_distributed_optimizer", "false"},
    LmDefault{"ddp.overlap_grad_reduce", "false"},
    LmDefault{"ddp.overlap_param_gather", "false"},
    LmDefault{"optimizer.overlap_param_gather_with_optimizer_step", "false"},
    LmDefault{"ddp.num_buckets", "null"},
    LmDefault{"ddp.bucket_size", "null"},
    LmDefault{"ddp.nccl_ub", "false"},
    LmDefault{"optimizer.optimizer", "adam"},
    LmDefault{"optimizer.use_precision_aware_optimizer", "false"},
    LmDefault{"optimizer.main_grads_dtype", "fp32"},
    LmDefault{"optimizer.main_params_dtype", "fp32"},
    LmDefault{"optimizer.exp_avg_dtype", "fp32"},
    LmDefault{"optimizer.exp_avg_sq_dtype", "fp32"},
    LmDefault{"optimizer.optimizer_cpu_offload", "false"},
    LmDefault{"optimizer.optimizer_offload_fraction", "1.0"},
    LmDefault{"dist.use_torch_fsdp2", "false"},
    LmDefault{"dist.use_megatron_fsdp", "false"},
    LmDefault{"ddp.use_megatron_fsdp", "false"},
    LmDefault{"ddp.data_parallel_sharding_strategy", "no_shard"},
    LmDefault{"checkpoint.ckpt_format", "torch_dist"},
    LmDefault{"checkpoint.save", "null"},
    LmDefault{"checkpoint.load", "null"},
};

// Dataclass defaults of a full dump that the schema keeps as expressions
// (torch dtypes, field(default=...)).
constexpr std::array kDumpDefaults = {
    LmDefault{"optimizer.main_grads_dtype", "fp32"},
    LmDefault{"optimizer.main_params_dtype", "fp32"},
    LmDefault{"optimizer.exp_avg_dtype", "fp32"},
    LmDefault{"optimizer.exp_avg_sq_dtype", "fp32"},
    LmDefault{"dist.use_gloo_process_groups", "true"},
};

ConfigValue literal_value(std::string_view text, Provenance where) {
  if (text == "null") return make_null(std::move(where));
  if (text == "true") return make_bool(true, std::move(where));
  if (text == "false") return make_bool(false, std::move(where));
  if (text.find('.') != std::string_view::npos && std::isdigit(static_cast<unsigned char>(text[0]))) {
    return make_float(std::stod(std::string(text)), std::move(where));
  }
  if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit)) {
    return make_int(std::stoll(std::string(text)), std::move(where));
  }
  return make_string(std::string(text), std::move(where));
}

const LmDefault* find_default(std::span<const LmDefault> table, std::string_view path) {
  auto it = std::find_if(table.begin(), table.end(), [&](const LmDefault& d) { return d.path == path; });
  return it == table.end() ? nullptr : &*it;
}

// A section that is None in a dump (comm_overlap: null) has no fields.
bool inside_null_section(const Job& job, std::string_view path) {
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', dot + 1)) {
    const ConfigValue* node = find_path(job.config, path.substr(0, dot));  // each enclosing section
    if (node && node->is_null()) return true;
  }
  return false;
}

// The recompute settings the catalog records for every recipe: one it
// leaves empty is Megatron-Core's None (the recipe layer only writes the
// ones a recipe sets).
bool recipe_leaves_unset(const Job& job, std::string_view path) {
  if (!job.recipe || job.dialect != Dialect::Bridge) return false;
  const Recipe& r = *job.recipe;
  auto empty = [](const char* text) { return !text || !*text; };
  if (path == "model.recompute_granularity") return empty(r.recompute_granularity);
  if (path == "model.recompute_method") return empty(r.recompute_method);
  if (path == "model.recompute_modules") return empty(r.recompute_modules);
  if (path == "model.recompute_num_layers") return !r.recompute_num_layers.set && r.recompute_num_layers.certain;
  return false;
}

// The node for `path`, or a default the running program uses (stored in
// `storage`); nullptr when unknown.
const ConfigValue* lookup(const Job& job, std::string_view path, ConfigValue& storage, bool& defaulted) {
  defaulted = false;
  if (const ConfigValue* node = find_path(job.config, path)) return node;
  if (inside_null_section(job, path)) return nullptr;
  if (job.config_complete) {
    size_t dot = path.find('.');
    if (dot == std::string_view::npos) return nullptr;
    if (const LmDefault* d = find_default(kDumpDefaults, path)) {
      storage = literal_value(d->text, default_where(""));
      defaulted = true;
      return &storage;
    }
    const SchemaField* field = find_schema_field(path.substr(0, dot), path.substr(dot + 1));
    if (!field) return nullptr;
    auto value = literal_default(*field);
    if (!value) return nullptr;
    storage = *value;
    storage.where = default_where("");
    defaulted = true;
    return &storage;
  }
  if (megatron_lm_command_line(job) && megatron_lm_flag_writes(path)) {
    if (const LmDefault* d = find_default(kMegatronLmDefaults, path)) {
      storage = literal_value(d->text, default_where(""));
      defaulted = true;
      return &storage;
    }
  }
  if (recipe_leaves_unset(job, path)) {
    Provenance where = job.recipe_where;
    where.layer = Layer::Recipe;
    where.origin = fmt::format("recipe {} does not set {} (None)", job.recipe->name, last_segment(path));
    storage = make_null(where);
    return &storage;
  }
  return nullptr;
}

std::optional<std::string> normalise_dtype(std::string text) {
  std::string_view t = text;
  if (t.substr(0, 6) == "torch.") t.remove_prefix(6);
  if (t == "fp32" || t == "float32" || t == "float") return "fp32";
  if (t == "bf16" || t == "bfloat16") return "bf16";
  if (t == "fp16" || t == "float16" || t == "half") return "fp16";
  if (t == "fp8" || t == "uint8") return "fp8";
  return std::nullopt;
}

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

Note located_note(const std::string& name, const std::string& shown, const Provenance& where, bool defaulted) {
  Span span = primary_span(where);
  if (!where.origin.empty()) return Note{where.origin, span};
  if (defaulted || !span.valid()) return Note{fmt::format("{} is {} (the default)", name, shown), {}};
  return Note{fmt::format("{} set to {} here", name, shown), span};
}

}  // namespace

bool NameList::contains(std::string_view item) const {
  return items && std::find(items->begin(), items->end(), item) != items->end();
}

bool megatron_lm_command_line(const Job& job) {
  return job.dialect == Dialect::MegatronLM &&
         (job.entry == EntryPoint::MegatronLM || job.kind == InputKind::MegatronLmTestConfig);
}

namespace {

// The node a reader of `path` reads (lookup: the value or the running
// program's default, kept in `storage`), with `out`'s path, name, defaulted
// and where filled; nullptr when unknown.
template <typename Reading>
const ConfigValue* locate(const Job& job, std::string_view path, Reading& out, ConfigValue& storage) {
  out.path = std::string(path);
  out.name = last_segment(path);
  const ConfigValue* node = lookup(job, path, storage, out.defaulted);
  if (node) out.where = node->where;
  return node;
}

}  // namespace

Setting read_flag(const Job& job, std::string_view path) {
  Setting s;
  ConfigValue storage;
  const ConfigValue* node = locate(job, path, s, storage);
  if (!node) return s;
  if (node->is_null()) {
    s.value = false;
  } else {
    s.value = as_bool(node);
  }
  return s;
}

Quantity read_int(const Job& job, std::string_view path) {
  Quantity q;
  ConfigValue storage;
  const ConfigValue* node = locate(job, path, q, storage);
  if (!node) return q;
  q.value = as_int(node);
  if (node->is_null()) q.display = "null";
  return q;
}

Choice read_choice(const Job& job, std::string_view path) {
  Choice c;
  ConfigValue storage;
  const ConfigValue* node = locate(job, path, c, storage);
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
  ConfigValue storage;
  const ConfigValue* node = locate(job, path, list, storage);
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
  ConfigValue storage;
  bool defaulted = false;
  const ConfigValue* node = lookup(job, path, storage, defaulted);
  if (!node) return std::nullopt;
  if (where) *where = node->where;
  return as_number(node);
}

Choice read_dtype(const Job& job, std::string_view path) {
  Choice c;
  ConfigValue storage;
  const ConfigValue* node = locate(job, path, c, storage);
  if (!node) return c;
  if (node->kind == ValueKind::String) {
    c.value = normalise_dtype(node->text);
    c.known = c.value.has_value();
  } else if (node->is_map()) {
    if (auto target = as_string(find_child(*node, "_target_"))) {
      c.value = normalise_dtype(*target);
      c.known = c.value.has_value();
    }
  }
  return c;
}

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

Note note_for(const Choice& choice) {
  return located_note(choice.name, choice.value ? *choice.value : "None", choice.where, choice.defaulted);
}

Note note_for(const NameList& list) {
  std::string shown = list.items ? "[" + join_names(*list.items) + "]" : "None";
  return located_note(list.name, shown, list.where, list.defaulted);
}

Span span_for(const Choice& choice) { return primary_span(choice.where); }
Span span_for(const NameList& list) { return primary_span(list.where); }

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
    Fix fix = advice_fix(value ? fmt::format("pass {}", flag) : fmt::format("drop {}", flag), safety);
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
  }
  return std::string(path);
}

// --- precision ------------------------------------------------------------------

namespace {

// Megatron Bridge's mixed-precision presets (training/mixed_precision.py)
// and the compute dtypes of the performance recipes (perf_recipes/_common.py
// `_perf_precision`: the same presets with grad_reduce_in_fp32 off and, for
// current scaling, no BF16 edge layers).
struct PresetDef {
  std::string_view name;
  bool fp16;  // else bf16
  std::string_view fp8;  // "" = None
  std::string_view fp8_recipe;
  bool fp8_param_gather;
  bool first_last_layers_bf16;
  int layers_at_start;
  int layers_at_end;
  std::string_view fp4;  // "" = None
  bool fp4_param_gather;
  bool grad_reduce_in_fp32;
  bool reuse_grad_buf;
  bool catalog_only;  // a compute-dtype name only the recipe catalog uses
};

constexpr std::array kPresets = {
    PresetDef{"bf16_mixed", false, "", "tensorwise", false, false, 0, 0, "", false, true, false, false},
    PresetDef{"fp16_mixed", true, "", "tensorwise", false, false, 0, 0, "", false, false, false, false},
    PresetDef{"bf16_with_fp8_delayed_scaling_mixed", false, "hybrid", "delayed", true, false, 0, 0, "", false, true,
              false, false},
    PresetDef{"fp16_with_fp8_delayed_scaling_mixed", true, "hybrid", "delayed", true, false, 0, 0, "", false, false,
              false, false},
    PresetDef{"bf16_with_mxfp8_mixed", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, true, true, false},
    PresetDef{"fp16_with_mxfp8_mixed", true, "e4m3", "mxfp8", true, false, 0, 0, "", false, false, true, false},
    PresetDef{"bf16_with_fp8_current_scaling_mixed", false, "hybrid", "tensorwise", true, true, 1, 1, "", false, true,
              false, false},
    PresetDef{"nemotron_h_bf16_with_fp8_current_scaling_mixed", false, "hybrid", "tensorwise", true, true, 2, 2, "",
              false, true, false, false},
    PresetDef{"nanov2_bf16_with_fp8_current_scaling_mixed", false, "hybrid", "blockwise", true, true, 2, 2, "", false,
              true, false, false},
    PresetDef{"fp16_with_fp8_current_scaling_mixed", true, "hybrid", "tensorwise", true, true, 1, 1, "", false, false,
              false, false},
    PresetDef{"bf16_with_fp8_subchannel_scaling_mixed", false, "hybrid", "blockwise", false, false, 0, 0, "", false,
              true, false, false},
    PresetDef{"fp16_with_fp8_subchannel_scaling_mixed", true, "hybrid", "blockwise", false, false, 0, 0, "", false,
              false, false, false},
    PresetDef{"bf16_with_nvfp4_mixed", false, "", "tensorwise", false, false, 0, 0, "e2m1", true, true, false, false},
    PresetDef{"nemotron_3_super_bf16_with_nvfp4_mixed", false, "", "tensorwise", false, true, 0, 14, "e2m1", true,
              true, false, false},
    PresetDef{"bf16", false, "", "tensorwise", false, false, 0, 0, "", false, false, false, true},
    PresetDef{"fp8_cs", false, "hybrid", "tensorwise", true, false, 1, 1, "", false, false, false, true},
    PresetDef{"fp8_ds", false, "hybrid", "delayed", true, false, 0, 0, "", false, false, false, true},
    PresetDef{"fp8_mx", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, false, true, true},
    PresetDef{"nvfp4", false, "", "tensorwise", false, false, 0, 0, "e2m1", true, false, false, true},
    // Recipe-name spellings: the library recipes of these use the named presets.
    PresetDef{"fp8cs", false, "hybrid", "tensorwise", true, true, 1, 1, "", false, true, false, true},
    PresetDef{"fp8mx", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, true, true, true},
    PresetDef{"fp8ds", false, "hybrid", "delayed", true, false, 0, 0, "", false, false, false, true},
};

// MixedPrecisionConfig's own defaults: a mixed_precision section that names
// no preset starts from these.
constexpr PresetDef kMixedPrecisionDefaults{
    "MixedPrecisionConfig", false, "", "tensorwise", false, false, 0, 0, "", false, true, false, false};

const PresetDef* find_preset(std::string name, bool from_catalog) {
  std::replace(name.begin(), name.end(), '-', '_');
  for (const PresetDef& p : kPresets) {
    if (p.name == name && (!p.catalog_only || from_catalog)) return &p;
  }
  return nullptr;
}

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
  const PresetDef* preset = nullptr;
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
  const PresetDef& p = *src.preset;
  Precision out;
  out.bf16 = preset_flag(src, "bf16", !p.fp16 && p.name != kMixedPrecisionDefaults.name);
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
  out.layers_at_start_in_bf16 = read_int(job, "model.num_layers_at_start_in_bf16");
  out.layers_at_end_in_bf16 = read_int(job, "model.num_layers_at_end_in_bf16");
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
    src.preset = find_preset(job.recipe->precision, true);
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
    src.preset = find_preset(node->text, node->where.layer == Layer::Recipe);
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
      src.preset = &kMixedPrecisionDefaults;
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
