// sequence_parallel with TP = 1 does nothing where Megatron Bridge (>= 0.4)
// and Megatron-LM turn it off at start-up; older Bridge releases hand it to
// Megatron-Core, which raises.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kSequenceParallelWithoutTp;

namespace {

// Megatron Bridge 0.4.0 added the switch-off to its TransformerConfig.finalize().
constexpr Version kBridgeSwitchesOff{0, 4, 0};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Setting& sp = d.sequence_parallel;
  const Quantity& tp = d.tensor_parallel;
  if (!sp.value || !*sp.value || !tp.known() || *tp != 1) return;
  // Point at whichever of the two the user wrote last: `-tp 1` on a recipe
  // that turns sequence parallelism on is the change that made it a no-op.
  bool tp_later = span_for(tp).valid() && layer_rank(tp.where.layer) > layer_rank(sp.where.layer);
  Span where = span_for(sp).valid() && !tp_later ? span_for(sp) : span_for(tp);
  // Megatron Bridge's finalize() (from 0.4) and Megatron-LM's validate_args
  // switch it off; NeMo 1.x hands the config to Megatron-Core through the same path.
  const Job& job = context.job;
  bool raises = job.dialect == Dialect::Bridge && job.versions.bridge < kBridgeSwitchesOff;
  std::string_view program = job.dialect == Dialect::MegatronLM ? "Megatron-LM"
                             : job.dialect == Dialect::NeMo     ? "NeMo (through Megatron-Core)"
                                                                : "Megatron Bridge";
  std::string message =
      raises ? fmt::format("sequence_parallel is true but tensor_model_parallel_size is 1: Megatron Bridge {} passes it "
                           "to Megatron-Core, which raises ValueError (\"Cannot use sequence parallelism without "
                           "tensor parallelism\") when the model config is finalized",
                           to_string(job.versions.bridge))
             : fmt::format("sequence_parallel is true but tensor_model_parallel_size is 1: {} silently turns sequence "
                           "parallelism off",
                           program);
  Diagnostic diag = make_diagnostic(kSequenceParallelWithoutTp, std::move(message), where);
  if (raises) diag.severity = Severity::Error;
  add_notes(diag, {&tp}, tp_later ? &tp : nullptr);
  if (sp.where.layer == Layer::Recipe || tp_later) diag.notes.push_back(note_for(sp));
  report(out, std::move(diag),
         "set sequence_parallel to false, or use tensor_model_parallel_size > 1 if you meant to shard "
         "activations",
         {set_setting_fix(sp, false, FixSafety::Safe)});
}

}  // namespace

extern const RuleInfo kSequenceParallelWithoutTp = {
    .code = "MB301",
    .name = "sequence-parallel-without-tp",
    .group = RuleGroup::Sequence,
    .severity = Severity::Warning,
    .summary = "sequence parallelism needs tensor parallelism; with TP = 1 it is silently disabled (an error before Bridge 0.4)",
    .doc = R"md(Sequence parallelism shards the layer-norm and dropout activations across the tensor-parallel
group. With `tensor_model_parallel_size = 1` there is no group to shard across.

* **Megatron Bridge 0.4 and newer**: the model's `finalize()`
  (`src/megatron/bridge/models/transformer_config.py`, v0.4.0) sets `sequence_parallel = False`
  without an error before it runs Megatron-Core's checks (a **warning**: the config says something
  the run does not do, and activation-memory estimates made from it are wrong).
* **Megatron Bridge before 0.4** (`--bridge-version 0.3.1`): `finalize()` (v0.3.1
  `models/transformer_config.py:83-92`) only fills `pipeline_dtype` and calls Megatron-Core's
  `ModelParallelConfig.__post_init__`, which raises `ValueError("Cannot use sequence parallelism
  without tensor parallelism")` (`megatron/core/model_parallel_config.py`): an **error**.
* **Megatron-LM**: `validate_args` prints "Disabling sequence parallelism because tensor model
  parallelism is disabled" and turns it off (`megatron/training/arguments.py`, every release from
  core_v0.12.0): a warning.

The fix (set it to false) is safe: it changes nothing about the run that starts.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 1\n  sequence_parallel: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n"},
    .check = check,
    .checks = "MC C1, PS 9",
};

}  // namespace mblint
