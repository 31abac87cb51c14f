// CUDA graphs with the expandable-segments allocator need
// NCCL_GRAPH_REGISTER=0, or NCCL registers graph memory the allocator later
// remaps: illegal memory access.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kCudaGraphNcclGraphRegister;

namespace {

constexpr std::string_view kAssertText =
    "(\"Setting NCCL_GRAPH_REGISTER=0 to avoid illegal memory access when using CUDA Graph with "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.\")";

// Who stops the run, per release: Megatron-LM's validate_args (TE graphs,
// core_v0.19.0), TECudaGraphHelper.__init__ (TE graphs, core_v0.16.0) and
// the local CudaGraphManager (before Blackwell, core_v0.16.0 to 0.18.0).
// Otherwise nothing checks it and the replay fails.
std::string consequence(const Job& job, bool te) {
  const Version& core = job.versions.megatron_core;
  std::string version = to_string(core);
  if (te && job.dialect == Dialect::MegatronLM && core >= Version{0, 19, 0}) {
    return fmt::format("Megatron-LM's validate_args stops {}", kAssertText);
  }
  if (te && core >= Version{0, 16, 0}) {
    return fmt::format("Megatron-Core {}'s TECudaGraphHelper asserts when it is set up at the start of training {}",
                       version, kAssertText);
  }
  if (!te && core >= Version{0, 16, 0} && core < Version{0, 19, 0}) {
    return fmt::format("Megatron-Core {}'s CudaGraphManager asserts before Blackwell {}", version, kAssertText);
  }
  return fmt::format("Megatron-Core {} does not check it; NCCL registers graph buffers that the allocator later "
                     "remaps, and the run dies with an illegal memory access",
                     version);
}

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
  EnvLookup alloc = lookup_launch_env(job, "PYTORCH_CUDA_ALLOC_CONF");
  if (alloc.state != EnvState::Set || !alloc.value ||
      alloc.value->find("expandable_segments:True") == std::string::npos) {
    return;
  }
  EnvLookup graph = lookup_launch_env(job, "NCCL_GRAPH_REGISTER");
  if (graph.state == EnvState::Unknown || (graph.state == EnvState::Set && (!graph.value || *graph.value == "0"))) {
    return;
  }
  Diagnostic diag = make_diagnostic(
      kCudaGraphNcclGraphRegister,
      fmt::format("CUDA graphs (cuda_graph_impl {}) with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True need "
                  "NCCL_GRAPH_REGISTER=0, but it {}: {}",
                  name, graph.state == EnvState::Unset ? "is not set" : fmt::format("is {}", *graph.value),
                  consequence(job, te)),
      graph.state == EnvState::Set ? primary_span(graph.where) : primary_span(alloc.where));
  // Notes for the other values involved (not for the one the diagnostic points at).
  for (Note note : {note_for(alloc, "PYTORCH_CUDA_ALLOC_CONF"), note_for(impl)}) {
    if (note.where != diag.where) diag.notes.push_back(std::move(note));
  }
  if (graph.from_config) diag.notes.push_back(note_for(graph, "NCCL_GRAPH_REGISTER"));
  report(out, std::move(diag),
         "export NCCL_GRAPH_REGISTER=0 (Megatron Bridge's recipes set it together with expandable_segments)");
}

}  // namespace

extern const RuleInfo kCudaGraphNcclGraphRegister = {
    .code = "MB017",
    .name = "cuda-graph-nccl-graph-register",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "CUDA graphs with expandable_segments need NCCL_GRAPH_REGISTER=0",
    .doc = R"md(With `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the caching allocator maps and
unmaps physical memory behind virtual addresses. NCCL's graph registration
(`NCCL_GRAPH_REGISTER`, on by default) registers the buffers captured in a CUDA graph with the
network; when the allocator later remaps them, replaying the graph touches memory that is no
longer there: an illegal memory access, or silent corruption.

Where the run stops (`megatron/core/transformer/cuda_graphs.py`, `megatron/training/arguments.py`):

* `cuda_graph_impl: transformer_engine`: from Megatron-Core 0.16, `TECudaGraphHelper.__init__`
  asserts it ("Setting NCCL_GRAPH_REGISTER=0 to avoid illegal memory access when using CUDA Graph
  with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."); both Megatron Bridge (`training/train.py`
  builds the helper) and Megatron-LM set the graphs up through it, and Megatron-LM's `validate_args`
  repeats the check from core_v0.19.0.
* `cuda_graph_impl: local` before Blackwell: the `CudaGraphManager` asserts the same in
  core_v0.16.0 to core_v0.18.0; core_v0.19.0 dropped that check, but NVIDIA's CUDA-graph guide still
  requires the setting.
* Older releases check nothing: the replay dies with an illegal memory access.

Megatron Bridge's recipes set `NCCL_GRAPH_REGISTER=0` next to `expandable_segments:True` in
`env_vars` for this reason.

The variables are read from the launch script and the config's `env_vars` (the shell wins); a
variable a recipe may set is unknown unless one of those sets it.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport NCCL_GRAPH_REGISTER=1\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.cuda_graph_impl=transformer_engine\n",
     "launch.sh --nodes 1"},
    .good = {.content =
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport NCCL_GRAPH_REGISTER=0\n"
     "torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config \\\n    model.cuda_graph_impl=transformer_engine\n"},
    .check = check,
    .checks = "MC L2, PS 61",
};

}  // namespace mblint
