// Fine-grained activation offloading moves the inputs of chosen submodules
// (offload_modules) to the host. It is built on TransformerEngine's
// offloading hooks and has its own list of module names.
#include "rules/support/runtime_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kFineGrainedActivationOffloading;

namespace {

std::vector<std::string_view> allowed_offload_modules(const Version& version) {
  std::vector<std::string_view> names = {"core_attn", "attn_proj", "expert_fc1", "moe_act",
                                         "attn_norm", "mlp_norm",  "qkv_linear"};
  if (version >= Version{0, 19, 0}) names.insert(names.begin() + 3, "fused_group_mlp");
  return names;
}

struct Context {
  const RuleContext& rule;
  const Setting& enabled;
  std::vector<Diagnostic>& out;
};

void push(Context& c, std::string message, Span where, std::vector<Note> notes, std::string help,
          std::vector<Fix> fixes = {}) {
  Diagnostic diag =
      make_diagnostic(kFineGrainedActivationOffloading, std::move(message), first_span(c.rule.job, {where}));
  for (Note& n : notes) {
    if (!(n.where.valid() && n.where == diag.where)) diag.notes.push_back(std::move(n));
  }
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  c.out.push_back(std::move(diag));
}

void check_setup(Context& c) {
  const Job& job = c.rule.job;
  Choice impl = read_choice(job, "model.transformer_impl");
  if (impl.is_set() && *impl.value != "transformer_engine") {
    push(c, fmt::format("fine-grained activation offloading needs transformer_impl transformer_engine, not {}",
                        *impl.value),
         span_for(c.enabled), {note_for(impl)}, "use transformer_impl transformer_engine",
         {text_fix(job, impl, "transformer_engine")});
  }
  Setting cpu = read_flag(job, "model.cpu_offloading");
  if (cpu.value.value_or(false)) {
    push(c, "fine_grained_activation_offloading cannot be combined with cpu_offloading", span_for(c.enabled),
         {note_for(cpu)}, "turn one of them off", {flag_fix(job, cpu, false)});
  }
}

void check_modules(Context& c, const NameList& modules) {
  const Job& job = c.rule.job;
  if (modules.known && (!modules.items || modules.items->empty())) {
    push(c, "fine_grained_activation_offloading is on but offload_modules is empty: Megatron-Core asserts it names "
            "at least one module",
         span_for(c.enabled), {note_for(modules)}, "list the modules to offload, e.g. offload_modules: [core_attn, attn_proj]");
    return;
  }
  if (!modules.items) return;
  std::vector<std::string_view> allowed = allowed_offload_modules(job.versions.megatron_core);
  for (const std::string& name : *modules.items) {
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    bool later = name == "fused_group_mlp";
    push(c,
         later ? fmt::format("offload_modules: 'fused_group_mlp' needs Megatron-Core 0.19 or later (this is {})",
                             to_string(job.versions.megatron_core))
               : fmt::format("offload_modules: '{}' is not an offloadable module; Megatron-Core {} accepts {}", name,
                             to_string(job.versions.megatron_core), join_names(allowed)),
         span_for(modules), {}, fmt::format("drop '{}' from offload_modules", name));
  }
  if (modules.contains("attn_proj") && !modules.contains("core_attn")) {
    push(c, "offload_modules has 'attn_proj' without 'core_attn': the input of attn_proj is core_attn's output, "
            "which core_attn's backward still needs",
         span_for(modules), {}, "add 'core_attn' to offload_modules, or drop 'attn_proj'");
  }
}

// Megatron-Core 0.19: the whole MoE layer is checkpointed, so offloading
// inside it is redundant and breaks.
void check_moe_recompute(Context& c, const NameList& modules) {
  const Job& job = c.rule.job;
  if (job.versions.megatron_core < Version{0, 19, 0} || !modules.items) return;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  NameList recompute = recompute_modules(job);
  if (!granularity.is("selective") || !recompute.contains("moe")) return;
  std::vector<std::string> inside;
  for (std::string_view m : {"moe_act", "expert_fc1", "fused_group_mlp"}) {
    if (modules.contains(m)) inside.emplace_back(m);
  }
  if (inside.empty()) return;
  push(c,
       fmt::format("offload_modules has {} inside the MoE layer, which 'moe' in recompute_modules already "
                   "recomputes whole",
                   join_names(inside)),
       span_for(modules), {note_for(recompute)},
       "drop 'moe' from recompute_modules, or drop the MoE modules from offload_modules");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.versions.megatron_core < Version{0, 16, 0}) return;
  Setting enabled = read_flag(job, "model.fine_grained_activation_offloading");
  if (!enabled.value.value_or(false)) return;
  Context c{context, enabled, out};
  check_setup(c);
  NameList modules = read_names(job, "model.offload_modules");
  check_modules(c, modules);
  check_moe_recompute(c, modules);
}

}  // namespace

extern const RuleInfo kFineGrainedActivationOffloading = {
    .code = "MB811",
    .name = "fine-grained-activation-offloading",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "fine-grained activation offloading: TransformerEngine only, no cpu_offloading, valid offload_modules",
    .doc = R"md(`fine_grained_activation_offloading` (Megatron-Core 0.16 and later) offloads the inputs of
the submodules listed in `offload_modules`. The job stops at start-up when:

* `transformer_impl` is not `transformer_engine` (Megatron-LM `validate_args` and Megatron Bridge's
  `ConfigContainer.validate()`: "Fine-grained activation offloading is only supported with
  transformer_engine implementation");
* `cpu_offloading` is also on ("fine_grained_activation_offloading cannot be enabled with
  cpu_offloading.");
* `offload_modules` is empty, or names something other than `core_attn`, `attn_proj`,
  `expert_fc1`, `moe_act`, `attn_norm`, `mlp_norm`, `qkv_linear` (and `fused_group_mlp` from
  0.19): "Invalid choices for offload_modules";
* `attn_proj` is offloaded without `core_attn`;
* (0.19) MoE-internal modules are offloaded while `moe` is in `recompute_modules`.

With TransformerEngine 2.10 or later the environment must also set `NVTE_CPU_OFFLOAD_V1=1`; the
TransformerEngine version is not in the files, so that part is not checked.)md",
    .bad = {"override.yaml",
     "model:\n  fine_grained_activation_offloading: true\n  offload_modules: [attn_proj]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  fine_grained_activation_offloading: true\n  offload_modules: [core_attn, attn_proj]\n"},
    .check = check,
    .checks = "MC I10",
};

}  // namespace mblint
