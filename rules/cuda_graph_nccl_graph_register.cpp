// CUDA graphs with the expandable-segments allocator need
// NCCL_GRAPH_REGISTER=0, or NCCL registers graph memory the allocator later
// remaps: illegal memory access.
#include "rules/config_support.h"

namespace mblint {

extern const RuleInfo kCudaGraphNcclGraphRegister;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Resolved impl = resolve(job, "model.cuda_graph_impl");
  if (!impl.known() || impl.value->kind != ValueKind::String) return;
  std::string_view name = impl.value->text;
  // TE-scoped graphs always; local graphs before Blackwell (sm_100).
  bool te = name == "transformer_engine";
  bool local_old_gpu = name == "local" && context.derived.gpu &&
                       (std::string_view(context.derived.gpu->architecture) == "hopper" ||
                        std::string_view(context.derived.gpu->architecture) == "ampere");
  if (!te && !local_old_gpu) return;
  EnvLookup alloc = lookup_env(job, "PYTORCH_CUDA_ALLOC_CONF");
  if (alloc.state != EnvState::Set || !alloc.value ||
      alloc.value->find("expandable_segments:True") == std::string::npos) {
    return;
  }
  EnvLookup graph = lookup_env(job, "NCCL_GRAPH_REGISTER");
  if (graph.state == EnvState::Unknown || (graph.state == EnvState::Set && (!graph.value || *graph.value == "0"))) {
    return;
  }
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Diagnostic diag = make_diagnostic(
      kCudaGraphNcclGraphRegister,
      fmt::format("CUDA graphs (cuda_graph_impl {}) with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True need "
                  "NCCL_GRAPH_REGISTER=0, but it {}: {}",
                  name, graph.state == EnvState::Unset ? "is not set" : fmt::format("is {}", *graph.value),
                  megatron_lm && te ? "Megatron-LM's validate_args stops (\"Setting NCCL_GRAPH_REGISTER=0 to avoid "
                                      "illegal memory access when using CUDA Graph with "
                                      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.\")"
                                    : "NCCL registers graph buffers that the allocator later remaps, and the run "
                                      "dies with an illegal memory access"),
      graph.state == EnvState::Set ? primary_span(graph.where) : primary_span(alloc.where));
  // Notes for the other values involved (not for the one the diagnostic points at).
  for (Note note : {note_for(alloc, "PYTORCH_CUDA_ALLOC_CONF"), note_for(impl)}) {
    if (note.where != diag.where) diag.notes.push_back(std::move(note));
  }
  if (graph.from_config) diag.notes.push_back(note_for(graph, "NCCL_GRAPH_REGISTER"));
  diag.help = "export NCCL_GRAPH_REGISTER=0 (Megatron Bridge's recipes set it together with expandable_segments)";
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kCudaGraphNcclGraphRegister = {
    "MB017",
    "cuda-graph-nccl-graph-register",
    Severity::Error,
    "CUDA graphs with expandable_segments need NCCL_GRAPH_REGISTER=0",
    R"md(With `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the caching allocator maps and
unmaps physical memory behind virtual addresses. NCCL's graph registration
(`NCCL_GRAPH_REGISTER`, on by default) registers the buffers captured in a CUDA graph with the
network; when the allocator later remaps them, replaying the graph touches memory that is no
longer there: an illegal memory access, or silent corruption.

Megatron-LM's `validate_args` refuses the combination for `--cuda-graph-impl
transformer_engine` ("Setting NCCL_GRAPH_REGISTER=0 to avoid illegal memory access when using
CUDA Graph with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."). Megatron Bridge does not
check it; its recipes set `NCCL_GRAPH_REGISTER=0` next to `expandable_segments:True` in
`env_vars` for this reason. NVIDIA's CUDA-graph guide also requires it for `local` graphs before
Blackwell.

The variables are read from the launch script and the config's `env_vars` (the shell wins); a
variable a recipe may set is unknown unless one of those sets it.)md",
    {"launch.sh",
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport NCCL_GRAPH_REGISTER=1\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.cuda_graph_impl=transformer_engine\n",
     "launch.sh --nodes 1"},
    {"launch.sh",
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport NCCL_GRAPH_REGISTER=0\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.cuda_graph_impl=transformer_engine\n",
     "launch.sh --nodes 1"},
    check,
    "MC L2, PS 61",
};

}  // namespace mblint
