// Megatron Bridge runs cuda_graph_impl "local" only as a full-iteration
// graph; per-layer scopes need the Transformer Engine implementation.
#include <algorithm>

#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kLocalCudaGraphScope;

namespace {

// Names in a scope value: a string or a list of strings; nullopt when unknown.
std::optional<std::vector<std::string>> names(const Resolved& r) {
  if (!r.known()) return std::nullopt;
  std::vector<std::string> out;
  const ConfigValue& v = *r.value;
  if (v.is_null()) return out;
  if (v.kind == ValueKind::String) {
    out.push_back(v.text);
    return out;
  }
  if (!v.is_list()) return std::nullopt;
  for (const ConfigValue& item : v.items) {
    if (item.kind != ValueKind::String) return std::nullopt;
    out.push_back(item.text);
  }
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved impl = resolve(job, "model.cuda_graph_impl");
  if (!impl.known() || impl.value->kind != ValueKind::String || impl.value->text != "local") return;
  Resolved modules = resolve(job, "model.cuda_graph_modules");
  Resolved scope = resolve(job, "model.cuda_graph_scope");
  Resolved inference = resolve(job, "model.inference_cuda_graph_scope");
  auto module_names = names(modules);
  auto scope_names = names(scope);
  // No recipe sets the inference scope; recipes that set cuda_graph_modules set
  // cuda_graph_scope with it, so a scope the user wrote decides.
  if (!module_names && scope_names && scope.known() && written_by_user(scope.where()) &&
      !find_path(job.config, "model.cuda_graph_modules")) {
    module_names = std::vector<std::string>{};
  }
  if (!module_names || !scope_names) return;
  if (contains(*module_names, "full_iteration") || contains(*scope_names, "full_iteration")) return;
  // An inference graph of whole layers or blocks is the other thing local graphs do.
  auto inference_names = names(inference);
  if (!inference_names && !find_path(job.config, "model.inference_cuda_graph_scope")) {
    inference_names = std::vector<std::string>{};
  }
  if (!inference_names) return;
  std::vector<std::string> graph = !module_names->empty() ? *module_names : *scope_names;
  if (graph.empty() && (contains(*inference_names, "layer") || contains(*inference_names, "block"))) return;
  std::string listed;
  for (const std::string& name : graph) listed += (listed.empty() ? "" : ", ") + name;
  const Resolved& where = !module_names->empty() ? modules : scope;
  report(
      out,
      finding(kLocalCudaGraphScope,
              fmt::format("cuda_graph_impl local{}: Megatron Bridge supports model.cuda_graph_impl=\"local\" only for "
                          "full-iteration CUDA graphs",
                          listed.empty() ? std::string(" without the full_iteration scope")
                                         : fmt::format(" with scopes {}", listed)),
              {&impl, &where}),
      listed.empty() ? "add the full_iteration scope, or use cuda_graph_impl transformer_engine"
                     : "use cuda_graph_impl transformer_engine for per-layer scopes such as attn or mlp");
}

}  // namespace

extern const RuleInfo kLocalCudaGraphScope = {
    .code = "MB973",
    .name = "local-cuda-graph-scope",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "cuda_graph_impl local without the full_iteration scope (Megatron Bridge captures per-layer graphs with TE only)",
    .doc = R"md(Megatron-Core's `local` CUDA-graph implementation can capture whole iterations or individual
layers. Megatron Bridge supports it only for full-iteration graphs: `validate_cuda_graph_configuration`
(`utils/cuda_graph.py`, called from `ConfigContainer.validate()`) raises "Megatron Bridge supports
model.cuda_graph_impl="local" only for full-iteration CUDA graphs with scopes ['attn']. Use
model.cuda_graph_impl="transformer_engine" for scoped CUDA graph capture such as "attn" or
"mlp"." unless `full_iteration` is among `cuda_graph_modules`/`cuda_graph_scope` (or the graph is a
local inference graph of whole layers). The job stops at start-up. The scope lists must be known
(written in a file, an override or a dump) for the rule to decide.)md",
    .bad = {"override.yaml", "model:\n  cuda_graph_impl: local\n  cuda_graph_scope: [attn]\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "model:\n  cuda_graph_impl: transformer_engine\n  cuda_graph_scope: [attn]\n"},
    .check = check,
    .checks = "BR V29",
};

}  // namespace mblint
