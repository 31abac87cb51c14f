// A per-layer CUDA graph replays a captured forward and backward; full
// recompute reruns the forward inside the backward, which such a graph
// cannot hold. Only a graph of the whole iteration can. And a recomputed
// MoE layer cannot straddle a graphed router.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kCudaGraphsWithRecompute;

namespace {

void push(const RuleContext& context, std::vector<Diagnostic>& out, const CudaGraphs& graphs, const Choice& granularity,
          std::string message, std::string help, std::vector<Fix> fixes) {
  bool graph_last = rank_of(graphs.impl.where) > rank_of(granularity.where);
  Diagnostic diag = make_diagnostic(kCudaGraphsWithRecompute, std::move(message),
                                    first_span(context.job, {graph_last ? span_for(graphs.impl) : span_for(granularity),
                                                             span_for(graphs.impl)}));
  diag.notes.push_back(graph_last ? note_for(granularity) : note_for(graphs.impl));
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  CudaGraphs graphs = cuda_graphs(job);
  if (!graphs.enabled()) return;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (!granularity.is_set()) return;
  Version version = job.versions.megatron_core;
  const std::string& impl = *graphs.impl.value;
  if (version < Version{0, 15, 0}) {
    // The legacy enable_cuda_graph (local graphs) takes no recompute at all.
    if (!graphs.impl.is("local")) return;
    push(context, out, graphs, granularity,
         fmt::format("CUDA graphs (enable_cuda_graph) do not support activation recompute (recompute_granularity {}) "
                     "in Megatron-Core {}",
                     *granularity.value, to_string(version)),
         "turn recompute off, or CUDA graphs", {text_fix(job, granularity, "null")});
    return;
  }
  if (granularity.is("full")) {
    bool allowed = version >= Version{0, 16, 0} && graphs.full_iteration;
    if (allowed) return;
    std::string whole = version >= Version{0, 18, 0} ? "cuda_graph_impl full_iteration"
                                                     : "cuda_graph_impl local with cuda_graph_scope [full_iteration]";
    push(context, out, graphs, granularity,
         version >= Version{0, 16, 0}
             ? fmt::format("full recompute is only supported with a full-iteration CUDA graph, not with "
                           "cuda_graph_impl {}",
                           impl)
             : fmt::format("CUDA graphs (cuda_graph_impl {}) do not support full recompute in Megatron-Core {}", impl,
                           to_string(version)),
         version >= Version{0, 16, 0}
             ? fmt::format("use selective recompute with these graphs, or {}", whole)
             : "use selective recompute, or turn CUDA graphs off",
         {text_fix(job, granularity, "selective")});
    return;
  }
  if (version < Version{0, 16, 0} || !graphs.impl.is("transformer_engine")) return;
  NameList modules = recompute_modules(job);
  if (granularity.is("selective") && modules.contains("moe") && graphs.modules.contains("moe_router")) {
    Diagnostic diag = make_diagnostic(
        kCudaGraphsWithRecompute,
        "'moe' recompute is not supported with a moe_router CUDA graph (cuda_graph_impl transformer_engine): the "
        "recomputed MoE layer would contain the graphed router",
        first_span(job, {span_for(modules), span_for(granularity)}));
    diag.notes.push_back(note_for(graphs.modules));
    diag.notes.push_back(note_for(graphs.impl));
    report(out, std::move(diag), "recompute 'moe_act' instead of 'moe', or drop moe_router from the graph modules");
  }
}

}  // namespace

extern const RuleInfo kCudaGraphsWithRecompute = {
    .code = "MB812",
    .name = "cuda-graphs-with-recompute",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "full recompute with per-layer CUDA graphs, or 'moe' recompute around a graphed router",
    .doc = R"md(A per-layer CUDA graph captures a layer's forward and backward once and replays them. Full
recompute reruns the forward inside the backward pass, which such a graph cannot contain; only a
graph of the whole iteration can. Megatron-Core's `TransformerConfig.__post_init__` asserts "full
recompute is only supported with full iteration CUDA graph." The rule by release:

* Megatron-Core 0.13 – 0.14: the legacy local graphs (`enable_cuda_graph`) take no recompute at all;
* 0.15: CUDA graphs do not support full recompute;
* 0.16 – 0.17: full recompute needs `cuda_graph_impl: local` with `cuda_graph_scope: [full_iteration]`;
* from 0.18: full recompute needs `cuda_graph_impl: full_iteration` (0.19 still accepts the older
  spelling and converts it).

From 0.16, with `cuda_graph_impl: transformer_engine`, recomputing the whole MoE layer (`moe` in
`recompute_modules`) while the router is graphed (`moe_router` in the graph modules) is rejected
too ("moe recompute is not supported with moe_router CUDA graph").

Megatron Bridge, where `cuda_graph_impl: local` is only for full-iteration graphs, checks this
when the model is built; Megatron-LM in `validate_args`.)md",
    .bad = {"override.yaml",
     "model:\n  cuda_graph_impl: transformer_engine\n  recompute_granularity: full\n  recompute_method: uniform\n"
     "  recompute_num_layers: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  cuda_graph_impl: transformer_engine\n  recompute_granularity: selective\n"},
    .check = check,
    .checks = "MC I11, PS 69",
};

}  // namespace mblint
