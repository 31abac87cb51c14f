// MoE layers with TP > 1 need sequence parallelism during training.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kMoeTpRequiresSequenceParallel;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& experts = d.num_moe_experts;
  const Setting& sp = d.sequence_parallel;
  if (!context.job.trains) return;  // the check is in the training forward pass only
  if (!splits(tp) || !experts.known() || *experts <= 0) return;
  if (!sp.value || *sp.value) return;
  bool sp_written = span_for(sp).valid() && layer_rank(sp.where.layer) >= layer_rank(tp.where.layer);
  Span where = sp_written || !span_for(tp).valid() ? span_for(sp) : span_for(tp);
  Diagnostic diag = make_diagnostic(
      kMoeTpRequiresSequenceParallel,
      fmt::format("MoE model with tensor_model_parallel_size {} and sequence_parallel false: Megatron-Core stops "
                  "at the first training step",
                  *tp),
      where);
  add_notes(diag, {&tp, &experts}, where == span_for(tp) ? &tp : nullptr);
  if (!sp_written && span_for(sp).valid()) diag.notes.push_back(note_for(sp));
  report(out, std::move(diag), "set sequence_parallel to true (or tensor_model_parallel_size 1)",
         {set_setting_fix(sp, true, FixSafety::Unsafe), set_value_fix(tp, 1)});
}

}  // namespace

extern const RuleInfo kMoeTpRequiresSequenceParallel = {
    .code = "MB302",
    .name = "moe-tp-requires-sequence-parallel",
    .group = RuleGroup::Sequence,
    .severity = Severity::Error,
    .summary = "an MoE model with tensor parallelism must enable sequence parallelism",
    .doc = R"md(Megatron-Core's `MoELayer.forward` raises a ValueError during training when tensor parallelism
is on (TP > 1) and sequence parallelism is off — whatever the expert-parallel size. The job
starts, loads data and fails at the first step. (`ModelParallelConfig` only warns when EP > 1
and TP > 1 without SP; the layer is stricter.) NVIDIA's MoE recipes pair TP = 1 with
`sequence_parallel = False` and TP > 1 with `sequence_parallel = True`.

Megatron Bridge's `Qwen3VLMoEModelProvider` (the Qwen3-VL MoE models) turns sequence parallelism on
itself when TP > 1 (`finalize`, `models/qwen_vl/qwen3_vl_provider.py`, every release from v0.2.0):
mblint applies that rewrite when it resolves the job, so such a job is not reported.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  sequence_parallel: false\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content = "model:\n  tensor_model_parallel_size: 2\n  sequence_parallel: true\n"},
    .check = check,
    .checks = "MC C3, MC C4, PS 11",
};

}  // namespace mblint
