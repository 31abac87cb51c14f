// recompute_modules only means something with selective recompute, and a
// module only when the model has it: 'mlp' is the dense MLP, 'moe' /
// 'moe_act' / 'shared_experts' the MoE layer. Otherwise the list is read and
// nothing is recomputed: the memory the user planned for is not saved.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kRecomputeModulesIgnored;

namespace {

// Set in a file mblint read (the launch script too), not by the catalog,
// a default or Bridge's rewrites.
bool set_in_read_file(const Provenance& where) {
  return primary_span(where).valid() && where.layer != Layer::Recipe && where.layer != Layer::SchemaDefault &&
         where.layer != Layer::Rewrite;
}

// Every layer is an MoE layer: moe_layer_freq 1 or a pattern without 0.
std::optional<bool> all_layers_moe(const Job& job) {
  const ConfigValue* freq = config_node(job, "model.moe_layer_freq");
  if (!freq) return job.config_complete ? std::optional<bool>(true) : std::nullopt;
  if (auto n = as_int(freq)) return *n == 1;
  if (freq->is_list()) {
    for (const ConfigValue& item : freq->items) {
      auto v = as_int(&item);
      if (!v) return std::nullopt;
      if (*v == 0) return false;
    }
    return true;
  }
  return std::nullopt;
}

void ignored_list(const RuleContext& context, const Choice& granularity, const NameList& modules,
                  std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Diagnostic diag = make_diagnostic(
      kRecomputeModulesIgnored,
      fmt::format("recompute_modules [{}] is ignored: only selective recompute reads it, and recompute_granularity is "
                  "{}",
                  join_names(*modules.items), granularity.value ? *granularity.value : "None"),
      first_span(job, {span_for(modules)}));
  diag.notes.push_back(note_for(granularity));
  diag.help = granularity.value ? "remove recompute_modules (full recompute checkpoints whole layers)"
                                : "set recompute_granularity to selective, or remove recompute_modules";
  if (!granularity.value) diag.fixes.push_back(text_fix(job, granularity, "selective"));
  diag.fixes.push_back(unset_fix(job, modules.path, modules.where, FixSafety::Safe));
  out.push_back(std::move(diag));
}

void missing_module(const RuleContext& context, const NameList& modules, const std::string& module,
                    const std::string& why, const Quantity& experts, std::vector<Diagnostic>& out) {
  Diagnostic diag = make_diagnostic(
      kRecomputeModulesIgnored,
      fmt::format("recompute_modules has '{}', but {}: it recomputes nothing", module, why),
      first_span(context.job, {span_for(modules)}));
  add_notes(diag, {&experts}, nullptr);
  report(out, std::move(diag),
         fmt::format("drop '{}' from recompute_modules{}", module,
                     module == "mlp" ? " (recompute 'moe' or 'moe_act' for MoE layers)" : ""));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  NameList modules = read_names(job, "model.recompute_modules");
  if (!granularity.known || !modules.items || modules.items->empty()) return;
  if (!granularity.is("selective")) {
    if (set_in_read_file(modules.where)) ignored_list(context, granularity, modules, out);
    return;
  }
  const Quantity& experts = context.derived.num_moe_experts;
  if (!experts.known()) return;
  if (*experts == 0) {
    for (std::string_view m : {"moe", "moe_act", "shared_experts"}) {
      if (modules.contains(m)) missing_module(context, modules, std::string(m), "the model has no experts", experts, out);
    }
    return;
  }
  if (modules.contains("mlp") && all_layers_moe(job).value_or(false)) {
    missing_module(context, modules, "mlp", "every layer of this model is an MoE layer (there is no dense MLP)",
                   experts, out);
  }
}

}  // namespace

extern const RuleInfo kRecomputeModulesIgnored = {
    .code = "MB808",
    .name = "recompute-modules-ignored",
    .group = RuleGroup::Runtime,
    .severity = Severity::Warning,
    .summary = "recompute_modules that recompute nothing: not selective recompute, or a module the model does not have",
    .doc = R"md(`recompute_modules` is read only with `recompute_granularity: selective`; full recompute
checkpoints whole layers and no recompute keeps every activation. Megatron-Core does not complain
when the list is set with another granularity: it is silently ignored and the memory it was meant
to save is not saved.

With selective recompute, a module the model does not have also recomputes nothing: `mlp` is the
dense MLP, absent when every layer is an MoE layer (`moe_layer_freq: 1`), and `moe`, `moe_act`,
`shared_experts` need experts. The run works, with more activation memory than planned.
Removing such entries is safe.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: null\n  recompute_modules: [core_attn, mlp]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn, mlp]\n"},
    .check = check,
    .checks = "PS 66",
};

}  // namespace mblint
