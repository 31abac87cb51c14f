// NCCL user-buffer registration allocates from a torch.cuda.MemPool, which
// the expandable-segments allocator mode broke until PyTorch 2.11.
#include "rules/support/config_support.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kExpandableSegmentsWithNcclUb;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Version version = job.versions.megatron_core;
  if (version < Version{0, 14, 0}) return;
  Setting ub = read_flag(job, "ddp.nccl_ub");
  if (!ub.value.value_or(false)) return;
  EnvLookup alloc = lookup_env(job, "PYTORCH_CUDA_ALLOC_CONF");
  if (alloc.state != EnvState::Set || !alloc.value || !has_expandable_segments(*alloc.value)) return;
  bool torch_dependent = version >= Version{0, 18, 0};
  std::string ub_name = for_dialect(job, "ddp.nccl_ub", "--use-nccl-ub");
  Diagnostic diag = make_diagnostic(
      kExpandableSegmentsWithNcclUb,
      torch_dependent ? fmt::format("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True with {}: Megatron-Core rejects "
                                    "the pair unless PyTorch is 2.11 or newer (torch.cuda.MemPool)",
                                    ub_name)
                      : fmt::format("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True is not supported with {} "
                                    "(torch.cuda.MemPool); Megatron-Core rejects the pair",
                                    ub_name),
      first_span(job, {primary_span(alloc.where), span_for(ub)}));
  if (torch_dependent) diag.severity = Severity::Warning;
  diag.notes.push_back(note_for(ub));
  report(out, std::move(diag),
         fmt::format("drop expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF, or {}",
                     for_dialect(job, "set ddp.nccl_ub to false", "drop --use-nccl-ub")),
         {flag_fix(job, ub, false)});
}

}  // namespace

extern const RuleInfo kExpandableSegmentsWithNcclUb = {
    .code = "MB914",
    .name = "expandable-segments-with-nccl-ub",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True together with NCCL user buffers (ddp.nccl_ub)",
    .doc = R"md(`expandable_segments:True` in `PYTORCH_CUDA_ALLOC_CONF` is the usual first fix for memory
fragmentation, and NCCL user-buffer registration (`ddp.nccl_ub`, `--use-nccl-ub`) speeds up
data-parallel collectives. The two do not mix: NCCL buffers come from a `torch.cuda.MemPool`,
which expandable segments broke. Megatron-Core's `DistributedDataParallelConfig` raises
"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True is currently not supported with nccl_ub":

* Megatron-Core 0.14 – 0.17: always (error);
* from 0.18: only with PyTorch older than 2.11. The PyTorch version is not in the files, so this is
  a warning.

The environment is what the launch script exports (and Megatron Bridge's `env_vars`, which only
fill in variables the launch leaves unset).)md",
    .bad = {"launch.sh",
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\ntorchrun --nproc-per-node 2 "
     "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config ddp.nccl_ub=true\n",
     "launch.sh --megatron-core-version 0.17"},
    .good = {.content =
     "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\ntorchrun --nproc-per-node 2 "
     "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config ddp.nccl_ub=false\n"},
    .check = check,
    .checks = "PS 60",
};

}  // namespace mblint
