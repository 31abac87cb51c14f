// The pipeline groups can use NCCL (the default) or UCC; UCC overlaps its
// transfers only when CUDA may run more than one connection.
#include "rules/support/config_support.h"
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kPipelineCommBackendInvalid;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  TextSetting backend = config_text(context.job, "model.pipeline_model_parallel_comm_backend");
  if (!backend.value) return;
  if (*backend.value != "nccl" && *backend.value != "ucc") {
    Diagnostic diag = make_diagnostic(
        kPipelineCommBackendInvalid,
        fmt::format("pipeline_model_parallel_comm_backend '{}' is not supported: use 'nccl' or 'ucc' (or null for "
                    "the default)",
                    *backend.value),
        primary_span(backend.where));
    diag.help = "set pipeline_model_parallel_comm_backend to null (NCCL), 'nccl' or 'ucc'";
    if (auto edit = replace_value(backend.where, "nccl")) {
      Fix fix{"set pipeline_model_parallel_comm_backend to nccl", FixSafety::Unsafe, {*edit}};
      fix.changes.push_back({backend.path, "nccl"});  // for the re-check
      diag.fixes.push_back(std::move(fix));
    }
    out.push_back(std::move(diag));
    return;
  }
  if (*backend.value != "ucc") return;
  EnvLookup connections = lookup_env(context.job, "CUDA_DEVICE_MAX_CONNECTIONS");
  if (connections.state != EnvState::Set || !connections.value || *connections.value != "1") return;
  Diagnostic diag = make_diagnostic(
      kPipelineCommBackendInvalid,
      "pipeline_model_parallel_comm_backend 'ucc' needs CUDA_DEVICE_MAX_CONNECTIONS > 1, but it is set to 1: "
      "Megatron-Core rejects UCC because its transfers would be serialized",
      primary_span(backend.where));
  diag.notes.push_back(Note{fmt::format("CUDA_DEVICE_MAX_CONNECTIONS=1 set here ({})",
                                        connections.from_config ? "env_vars.CUDA_DEVICE_MAX_CONNECTIONS"
                                                                : "the environment"),
                            primary_span(connections.where)});
  diag.help = "use the NCCL backend (null), or do not set CUDA_DEVICE_MAX_CONNECTIONS=1 for this run";
  if (auto edit = replace_value(backend.where, "nccl")) {
    Fix fix{"set pipeline_model_parallel_comm_backend to nccl", FixSafety::Unsafe, {*edit}};
    fix.changes.push_back({backend.path, "nccl"});  // for the re-check
    diag.fixes.push_back(std::move(fix));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kPipelineCommBackendInvalid = {
    .code = "MB107",
    .name = "pipeline-comm-backend-invalid",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "the pipeline communication backend must be nccl or ucc, and ucc needs CUDA_DEVICE_MAX_CONNECTIONS > 1",
    .doc = R"md(`model.pipeline_model_parallel_comm_backend` (Megatron-LM
`--pipeline-model-parallel-comm-backend`) picks the backend of the pipeline-parallel process
groups: null (NCCL), `nccl` or `ucc`. UCC uses no GPU SMs and can help with exposed pipeline
communication, but only when CUDA runs its transfers on several connections.

Megatron-Core's `initialize_model_parallel` asserts at start-up: "\"x\" backend for PP
communication is currently not supported" for any other backend, and "UCC-backend requires
CUDA_DEVICE_MAX_CONNECTIONS > 1" when the environment sets `CUDA_DEVICE_MAX_CONNECTIONS=1` (which
tensor and context parallelism want on Hopper and earlier GPUs). The variable is read from the
launch script's environment and from Megatron Bridge's `env_vars`.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=1\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\ntorchrun --nproc-per-node 2 "
     "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n"
     "    model.pipeline_model_parallel_comm_backend=ucc\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=1\nexport CUDA_DEVICE_MAX_CONNECTIONS=8\ntorchrun --nproc-per-node 2 "
     "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n"
     "    model.pipeline_model_parallel_comm_backend=ucc\n"},
    .check = check,
    .checks = "MC A13",
};

}  // namespace mblint
