// Which parts of a layer a CUDA graph captures (cuda_graph_modules, formerly
// cuda_graph_scope) must fit the implementation and the model: the MoE
// scopes need experts and cannot overlap, a whole-iteration graph takes no
// per-layer scopes.
#include "rules/support/runtime_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kCudaGraphScope;

namespace {

std::vector<std::string_view> known_impls(const Version& version) {
  std::vector<std::string_view> impls = {"none", "local", "transformer_engine"};
  if (version >= Version{0, 18, 0}) impls.push_back("full_iteration");
  return impls;
}

std::vector<std::string_view> known_modules(const Version& version) {
  std::vector<std::string_view> names = {"attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba",
                                         "full_iteration"};
  if (version >= Version{0, 18, 0}) names.push_back("full_iteration_inference");
  return names;
}

struct Scope {
  const RuleContext& rule;
  const CudaGraphs& graphs;
  std::vector<Diagnostic>& out;
};

void push(Scope& s, std::string message, std::string help, std::vector<Note> notes = {}) {
  Diagnostic diag = make_diagnostic(kCudaGraphScope, std::move(message),
                                    first_span(s.rule.job, {span_for(s.graphs.modules), span_for(s.graphs.impl)}));
  if (diag.where != span_for(s.graphs.impl)) diag.notes.push_back(note_for(s.graphs.impl));
  for (Note& n : notes) diag.notes.push_back(std::move(n));
  diag.help = std::move(help);
  s.out.push_back(std::move(diag));
}

std::optional<bool> all_layers_moe(const Job& job) {
  const ConfigValue* freq = config_node(job, "model.moe_layer_freq");
  if (!freq) return job.config_complete ? std::optional<bool>(true) : std::nullopt;
  if (auto n = as_int(freq)) return *n == 1;
  if (!freq->is_list()) return std::nullopt;
  for (const ConfigValue& item : freq->items) {
    auto v = as_int(&item);
    if (!v) return std::nullopt;
    if (*v == 0) return false;
  }
  return true;
}

void check_names(Scope& s) {
  Version version = s.rule.job.versions.megatron_core;
  std::vector<std::string_view> names = known_modules(version);
  for (const std::string& name : *s.graphs.modules.items) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    push(s, fmt::format("CUDA graph module '{}' is not one Megatron-Core {} knows ({})", name, to_string(version),
                        join_names(names)),
         fmt::format("drop '{}'", name));
  }
}

void check_combinations(Scope& s) {
  const CudaGraphs& g = s.graphs;
  const NameList& m = g.modules;
  if (g.impl.is("transformer_engine") && m.contains("full_iteration")) {
    push(s, "a full_iteration CUDA graph cannot be captured with cuda_graph_impl transformer_engine",
         s.rule.job.versions.megatron_core >= Version{0, 18, 0} ? "use cuda_graph_impl full_iteration"
                                                                : "use cuda_graph_impl local");
  }
  if (g.impl.is("full_iteration")) {
    std::vector<std::string> per_layer;
    for (const std::string& name : *m.items) {
      if (name != "full_iteration") per_layer.push_back(name);
    }
    if (!per_layer.empty()) {
      push(s, fmt::format("cuda_graph_impl full_iteration captures the whole iteration; the graph modules must be "
                          "empty, not [{}]",
                          join_names(per_layer)),
           "remove the graph modules, or use cuda_graph_impl transformer_engine for per-layer graphs");
    }
    return;
  }
  if (m.contains("moe") && m.contains("moe_router")) {
    push(s, "the CUDA graph modules contain both 'moe' and 'moe_router' (the router is part of the MoE layer)",
         "keep 'moe_router' (dropless MoE) or 'moe' (drop-and-pad MoE), not both");
  }
  if (g.impl.is("transformer_engine") && m.contains("moe_preprocess") && !m.contains("moe_router")) {
    push(s, "CUDA graph module 'moe_preprocess' needs 'moe_router' too", "add 'moe_router' to the graph modules");
  }
}

void check_model(Scope& s) {
  const Job& job = s.rule.job;
  const NameList& m = s.graphs.modules;
  const Quantity& experts = s.rule.derived.num_moe_experts;
  if (!experts.known()) return;
  if (*experts <= 1) {
    for (std::string_view name : {"moe", "moe_router"}) {
      if (!m.contains(name)) continue;
      push(s, fmt::format("CUDA graph module '{}' needs an MoE model, but this model has no experts", name),
           fmt::format("drop '{}'", name), {note_for(experts)});
    }
    return;
  }
  if (m.contains("mlp") && all_layers_moe(job).value_or(false)) {
    push(s, "CUDA graph module 'mlp' captures dense MLPs, but every layer of this model is an MoE layer",
         "use 'moe_router' (and 'moe_preprocess') for MoE layers", {note_for(experts)});
  }
  if (m.contains("moe")) {
    Setting pad = read_flag(job, "model.moe_pad_expert_input_to_capacity");
    const ConfigValue* factor = config_node(job, "model.moe_expert_capacity_factor");
    bool no_factor = (factor && factor->is_null()) || (!factor && job.config_complete);
    if (no_factor) {
      push(s, "CUDA graph module 'moe' only works for drop-and-pad MoE (moe_expert_capacity_factor with "
              "moe_pad_expert_input_to_capacity); this MoE is dropless",
           "use 'moe_router' for dropless MoE");
    } else if (pad.value && !*pad.value) {
      push(s, "CUDA graph module 'moe' only works for drop-and-pad MoE, but moe_pad_expert_input_to_capacity is false",
           "set moe_pad_expert_input_to_capacity to true, or use 'moe_router'", {note_for(pad)});
    }
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Version version = job.versions.megatron_core;
  if (version < Version{0, 16, 0}) return;
  CudaGraphs graphs = cuda_graphs(job);
  if (!graphs.enabled()) return;
  Scope s{context, graphs, out};
  std::vector<std::string_view> impls = known_impls(version);
  if (std::find(impls.begin(), impls.end(), *graphs.impl.value) == impls.end()) {
    report(out,
           make_diagnostic(kCudaGraphScope,
                           fmt::format("cuda_graph_impl '{}' is not one of {} (Megatron-Core {})", *graphs.impl.value,
                                       join_names(impls), to_string(version)),
                           first_span(job, {span_for(graphs.impl)})),
           graphs.impl.is("full_iteration")
               ? "full_iteration needs Megatron-Core 0.18; before, use cuda_graph_impl local with cuda_graph_scope "
                 "[full_iteration]"
               : "use transformer_engine (per-layer graphs) or none");
    return;
  }
  if (!graphs.modules.items) return;
  check_names(s);
  check_combinations(s);
  check_model(s);
}

}  // namespace

extern const RuleInfo kCudaGraphScope = {
    .code = "MB814",
    .name = "cuda-graph-scope",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "a CUDA-graph implementation or module list Megatron-Core rejects for this model",
    .doc = R"md(`cuda_graph_impl` picks how CUDA graphs are captured (`none`, `local`, `transformer_engine`,
and from Megatron-Core 0.18 `full_iteration`); `cuda_graph_modules` (0.18+, formerly
`cuda_graph_scope`) picks what a per-layer graph captures. Megatron-Core's
`TransformerConfig.__post_init__` (0.16 and later) asserts, before the model is built:

* the implementation is a known one ("Invalid cuda graph implementation");
* a module is one of `attn`, `mlp`, `moe`, `moe_router`, `moe_preprocess`, `mamba` (or the
  deprecated `full_iteration`);
* `full_iteration` is not captured by `transformer_engine`, and `cuda_graph_impl: full_iteration`
  has no per-layer modules ("cuda_graph_modules must be empty when cuda_graph_impl=\"full_iteration\"");
* `moe` and `moe_router` are not both listed; `moe_preprocess` comes with `moe_router` (the local
  implementation adds it itself);
* `moe` / `moe_router` only on MoE models ("moe cuda graph is only supported for MoE"), `mlp` only
  when the model has dense layers, and `moe` only for drop-and-pad MoE.

Megatron Bridge's own rules for `cuda_graph_impl: local` and for `check_for_nan_in_loss` with
full-iteration graphs are separate checks.)md",
    .bad = {"override.yaml",
     "model:\n  cuda_graph_impl: transformer_engine\n  cuda_graph_modules: [attn, moe_router]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  cuda_graph_impl: transformer_engine\n  cuda_graph_modules: [attn, mlp]\n"},
    .check = check,
    .checks = "PS 68",
};

}  // namespace mblint
