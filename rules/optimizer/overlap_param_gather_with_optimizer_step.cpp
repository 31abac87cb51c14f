// overlap_param_gather_with_optimizer_step starts the first parameter
// all-gather inside the optimizer step. It rides on the distributed
// optimizer's param-gather overlap and the interleaved schedule, and cannot
// share the gradient buffer with MXFP8 parameter gathering.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kOverlapParamGatherWithOptimizerStep;

namespace {

// The effective setting: with a comm_overlap section and the distributed
// optimizer, Bridge's CommOverlapConfig sets it (False unless
// comm_overlap.overlap_param_gather_with_optimizer_step says otherwise).
Setting with_step(const Job& job) {
  Setting optimizer = read_flag(job, "optimizer.overlap_param_gather_with_optimizer_step");
  std::optional<bool> rewritten = comm_overlap_sets_dp_overlap(job);
  if (rewritten == false) return optimizer;
  if (!rewritten) {
    optimizer.value.reset();
    return optimizer;
  }
  const ConfigValue* node = config_node(job, "comm_overlap.overlap_param_gather_with_optimizer_step");
  if (node && !node->is_null()) return read_flag(job, "comm_overlap.overlap_param_gather_with_optimizer_step");
  optimizer.value = false;
  return optimizer;
}

void push(const RuleContext& context, std::vector<Diagnostic>& out, const Setting& step, std::string message,
          std::vector<Note> notes, std::string help, std::vector<Fix> fixes) {
  Diagnostic diag = make_diagnostic(kOverlapParamGatherWithOptimizerStep, std::move(message),
                                    first_span(context.job, {span_for(step)}));
  diag.notes = std::move(notes);
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

void megatron_lm_checks(const RuleContext& context, const Setting& step, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Setting dist = distributed_optimizer(job);
  if (dist.value && !*dist.value) {
    push(context, out, step, "--overlap-param-gather-with-optimizer-step needs the distributed optimizer",
         {note_for(dist)}, "pass --use-distributed-optimizer", {flag_fix(job, dist, true)});
  }
  Setting gather = read_flag(job, "ddp.overlap_param_gather");
  if (gather.value && !*gather.value) {
    // --overlap-param-gather needs --overlap-grad-reduce in turn: the fix passes both where that is missing.
    Setting reduce = read_flag(job, "ddp.overlap_grad_reduce");
    std::vector<Fix> parts{flag_fix(job, gather, true)};
    if (reduce.value && !*reduce.value) parts.push_back(flag_fix(job, reduce, true));
    Fix fix = parts.size() == 1 ? parts.front() : combined_fix("pass --overlap-param-gather --overlap-grad-reduce", parts);
    push(context, out, step, "--overlap-param-gather-with-optimizer-step needs --overlap-param-gather",
         {note_for(gather)}, "pass --overlap-param-gather (and --overlap-grad-reduce)", {fix});
  }
  const Quantity& vpp = context.derived.virtual_pipeline;
  if (vpp.known() && *vpp == 0) {
    push(context, out, step,
         "--overlap-param-gather-with-optimizer-step only works with the interleaved pipeline schedule (virtual "
         "pipeline stages)",
         {note_for(vpp)}, "set virtual pipeline stages (--num-virtual-stages-per-pipeline-rank), or drop the flag", {});
  }
  Choice format = read_choice(job, "checkpoint.ckpt_format");
  if (format.is_set() && *format.value != "torch") {
    push(context, out, step,
         fmt::format("--overlap-param-gather-with-optimizer-step is not supported with distributed checkpointing "
                     "(--ckpt-format {}); Megatron-LM rejects it",
                     *format.value),
         {note_for(format)}, "drop --overlap-param-gather-with-optimizer-step", {});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Setting step = with_step(job);
  if (!step.value.value_or(false)) return;
  if (job.versions.megatron_core >= Version{0, 19, 0} && !megatron_fsdp(job).value.value_or(false)) {
    const Precision& p = effective_precision(context);
    Setting reuse = p.reuse_grad_buf_for_mxfp8_param_ag;
    if (job.dialect == Dialect::MegatronLM) reuse = read_flag(job, "optimizer.reuse_grad_buf_for_mxfp8_param_ag");
    if (reuse.value.value_or(false)) {
      push(context, out, step,
           "overlap_param_gather_with_optimizer_step is not supported with reuse_grad_buf_for_mxfp8_param_ag (MXFP8 "
           "parameter gathering through the gradient buffer)",
           {note_for(reuse)}, "set overlap_param_gather_with_optimizer_step to false for MXFP8 runs",
           {flag_fix(job, step, false)});
    }
  }
  if (job.dialect == Dialect::MegatronLM) megatron_lm_checks(context, step, out);
}

}  // namespace

extern const RuleInfo kOverlapParamGatherWithOptimizerStep = {
    .code = "MB904",
    .name = "overlap-param-gather-with-optimizer-step",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "overlap_param_gather_with_optimizer_step with MXFP8 buffer reuse, or (Megatron-LM) without its prerequisites",
    .doc = R"md(`overlap_param_gather_with_optimizer_step` starts the first parameter all-gather of the next
step inside the optimizer step.

* Megatron-Core 0.19's `OptimizerConfig` raises "overlap_param_gather_with_optimizer_step is not
  supported with reuse_grad_buf_for_mxfp8_param_ag." The MXFP8 presets of Megatron Bridge set that
  reuse (NVIDIA's performance scripts leave the overlap off for `fp8_mx` for this reason);
  Megatron-FSDP turns the reuse off.
* **Megatron-LM** `validate_args` also asserts the distributed optimizer, `--overlap-param-gather`,
  the interleaved schedule (virtual pipeline stages: "only supported with interleaved pipeline
  parallelism") and the legacy `torch` checkpoint format ("not supported with distributed
  checkpointing yet"; every other `--ckpt-format`, including the default `torch_dist`, counts as
  distributed).
* **Megatron Bridge** does not make those four checks. With a `comm_overlap` section and the
  distributed optimizer, its `CommOverlapConfig` sets the value (false unless
  `comm_overlap.overlap_param_gather_with_optimizer_step` is set), which is what is checked.)md",
    .bad = {"override.yaml",
     "mixed_precision: bf16_with_mxfp8_mixed\ncomm_overlap:\n  overlap_param_gather_with_optimizer_step: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "mixed_precision: bf16_with_fp8_current_scaling_mixed\ncomm_overlap:\n"
     "  overlap_param_gather_with_optimizer_step: true\n"},
    .check = check,
    .checks = "MC K2",
};

}  // namespace mblint
