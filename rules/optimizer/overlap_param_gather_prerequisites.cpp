// Overlapping the parameter all-gather with the forward pass only makes
// sense when parameters are sharded (distributed optimizer or Megatron-FSDP)
// and, in Megatron-LM, when the gradient reduce-scatter is overlapped too.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kOverlapParamGatherPrerequisites;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Setting gather = megatron_lm ? read_flag(job, "ddp.overlap_param_gather")
                               : either_flag(job, "ddp.overlap_param_gather", "optimizer.overlap_param_gather");
  if (!gather.value.value_or(false)) return;
  Setting dist = distributed_optimizer(job);
  Choice optimizer = read_choice(job, "optimizer.optimizer");
  bool layer_wise = optimizer.is("dist_muon");
  if (dist.value && !*dist.value && !layer_wise && (optimizer.known || !megatron_lm)) {
    Diagnostic diag = make_diagnostic(
        kOverlapParamGatherPrerequisites,
        megatron_lm ? "--overlap-param-gather needs the distributed optimizer (or Megatron-FSDP); Megatron-LM rejects "
                      "it without"
                    : "overlap_param_gather without the distributed optimizer: there is no sharded parameter "
                      "all-gather to overlap (Megatron-LM rejects this combination)",
        first_span(job, {span_for(gather)}));
    if (!megatron_lm) diag.severity = Severity::Warning;
    diag.notes.push_back(note_for(dist));
    report(
        out, std::move(diag),
        for_dialect(job, "set use_distributed_optimizer to true, or overlap_param_gather to false",
                    "pass --use-distributed-optimizer, or drop --overlap-param-gather"),
        {flag_fix(job, dist, true), flag_fix(job, gather, false, megatron_lm ? FixSafety::Unsafe : FixSafety::Safe)});
  }
  if (!megatron_lm) return;
  Setting reduce = read_flag(job, "ddp.overlap_grad_reduce");
  if (reduce.value && !*reduce.value) {
    Diagnostic diag = make_diagnostic(kOverlapParamGatherPrerequisites,
                                      "--overlap-param-gather must come with --overlap-grad-reduce; Megatron-LM "
                                      "rejects it alone",
                                      first_span(job, {span_for(gather)}));
    diag.notes.push_back(note_for(reduce));
    report(out, std::move(diag), "pass --overlap-grad-reduce as well", {flag_fix(job, reduce, true)});
  }
}

}  // namespace

extern const RuleInfo kOverlapParamGatherPrerequisites = {
    .code = "MB903",
    .name = "overlap-param-gather-prerequisites",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "overlap_param_gather without the distributed optimizer, or (Megatron-LM) without overlap_grad_reduce",
    .doc = R"md(`overlap_param_gather` hides the all-gather of the sharded parameters behind the next forward
pass. The parameters are sharded only by the distributed optimizer (or Megatron-FSDP, or the
layer-wise `dist_muon` optimizer).

* **Megatron-LM** `validate_args` asserts "--overlap-param-gather only supported with distributed
  optimizer, megatron fsdp, or dist_muon" and "Must use --overlap-param-gather with
  --overlap-grad-reduce" (error).
* **Megatron Bridge** keeps `ddp.overlap_param_gather` and `optimizer.overlap_param_gather` in sync
  (either one turns both on) and does not check the optimizer; without the distributed optimizer
  there is nothing to overlap, so the setting is reported as a warning. With the distributed
  optimizer, Bridge's `CommOverlapConfig` turns both overlaps on by itself when data parallelism is
  larger than 1 (see `comm-overlap-overrides-ddp`), so a missing `overlap_grad_reduce` is no error
  there.)md",
    .bad = {"override.yaml",
     "ddp:\n  use_distributed_optimizer: false\n  overlap_param_gather: true\noptimizer:\n"
     "  use_distributed_optimizer: false\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "ddp:\n  use_distributed_optimizer: true\n  overlap_param_gather: true\n"},
    .check = check,
    .checks = "MC K1, PS 43",
};

}  // namespace mblint
