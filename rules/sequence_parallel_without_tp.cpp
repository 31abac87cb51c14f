// sequence_parallel with TP = 1 does nothing: Megatron Bridge and
// Megatron-LM turn it off at start-up.
#include "rules/rule_support.h"

namespace mblint {

extern const RuleInfo kSequenceParallelWithoutTp;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Setting& sp = d.sequence_parallel;
  const Quantity& tp = d.tensor_parallel;
  if (!sp.value || !*sp.value || !tp.known() || *tp != 1) return;
  // Point at whichever of the two the user wrote last: `-tp 1` on a recipe
  // that turns sequence parallelism on is the change that made it a no-op.
  bool tp_later = span_for(tp).valid() && layer_rank(tp.where.layer) > layer_rank(sp.where.layer);
  Span where = span_for(sp).valid() && !tp_later ? span_for(sp) : span_for(tp);
  // Megatron Bridge's finalize() and Megatron-LM's validate_args both switch
  // it off; NeMo 1.x hands the config to Megatron-Core through the same path.
  std::string_view program = context.job.dialect == Dialect::MegatronLM ? "Megatron-LM"
                             : context.job.dialect == Dialect::NeMo     ? "NeMo (through Megatron-Core)"
                                                                        : "Megatron Bridge";
  Diagnostic diag = make_diagnostic(
      kSequenceParallelWithoutTp,
      fmt::format("sequence_parallel is true but tensor_model_parallel_size is 1: {} silently turns sequence "
                  "parallelism off",
                  program),
      where);
  add_notes(diag, {&tp}, tp_later ? &tp : nullptr);
  if (sp.where.layer == Layer::Recipe || tp_later) diag.notes.push_back(note_for(sp));
  diag.help = "set sequence_parallel to false, or use tensor_model_parallel_size > 1 if you meant to shard "
              "activations";
  diag.fixes.push_back(set_setting_fix(sp, false, FixSafety::Safe));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kSequenceParallelWithoutTp = {
    "MB301",
    "sequence-parallel-without-tp",
    Severity::Warning,
    "sequence parallelism needs tensor parallelism; with TP = 1 it is silently disabled",
    R"md(Sequence parallelism shards the layer-norm and dropout activations across the tensor-parallel
group. With `tensor_model_parallel_size = 1` there is no group to shard across: Megatron Bridge's
model `finalize()` sets `sequence_parallel = False` without an error, and Megatron-LM prints
"Disabling sequence parallelism because tensor model parallelism is disabled". The run works,
but the config says something it does not do, and activation-memory estimates made from it are
wrong. (Megatron-Core used directly raises "Cannot use sequence parallelism without tensor
parallelism".)

The fix (set it to false) is safe: it changes nothing about the run.)md",
    {"override.yaml",
     "model:\n  tensor_model_parallel_size: 1\n  sequence_parallel: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    check,
    "MC C1, PS 9",
};

}  // namespace mblint
