// Tensor-parallel communication overlap pipelines the all-gather and
// reduce-scatter of sequence parallelism with the GEMMs: without sequence
// parallelism there is nothing to overlap.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kTpCommOverlapWithoutSequenceParallel;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  if (job.dialect == Dialect::NeMo) return;
  Setting overlap = config_bool(job, megatron_lm ? "model.tp_comm_overlap" : "comm_overlap.tp_comm_overlap");
  if (!overlap.value || !*overlap.value) return;
  const Quantity& tp = d.tensor_parallel;
  const Setting& sp = d.sequence_parallel;
  if (!tp.known() || !sp.value) return;
  bool tp_off = *tp < 2;
  if (!tp_off && *sp.value) return;
  // A recipe that asks for the overlap where its own TP or sequence
  // parallelism already drops it (NVIDIA's Qwen3-30B-A3B recipe at TP 1): the
  // recipe's choice, not this job's; report the job's own change instead.
  if (!megatron_lm && overlap.where.layer == Layer::Recipe && job.recipe) {
    const RecipeInt& recipe_tp = job.recipe->tensor_model_parallel_size;
    bool recipe_drops_it = tp_off ? recipe_tp.certain && (!recipe_tp.set || recipe_tp.value < 2)
                                  : job.recipe->sequence_parallel != 1;
    if (recipe_drops_it) return;
  }
  std::string why = tp_off ? fmt::format("tensor_model_parallel_size is {}", *tp)
                           : std::string("sequence_parallel is false");
  std::string message =
      megatron_lm
          ? fmt::format("--tp-comm-overlap needs sequence parallelism, but {}: Megatron-LM asserts \"Tensor parallel "
                        "communication/GEMM overlap can happen only when sequence parallelism is enabled\"",
                        tp_off ? why + " (sequence parallelism is turned off)" : why)
          : fmt::format("comm_overlap.tp_comm_overlap is true but {}: Megatron Bridge silently disables "
                        "tensor-parallel communication overlap",
                        why);
  Diagnostic diag = make_diagnostic(kTpCommOverlapWithoutSequenceParallel, std::move(message),
                                    span_for(overlap).valid() ? span_for(overlap) : span_for(tp));
  if (megatron_lm) diag.severity = Severity::Error;
  if (tp_off) {
    add_notes(diag, {&tp}, nullptr);
    diag.help = "remove the tensor-parallel overlap (it needs tensor_model_parallel_size >= 2 and sequence_parallel)";
    diag.fixes.push_back(set_setting_fix(overlap, false, megatron_lm ? FixSafety::Unsafe : FixSafety::Safe));
  } else {
    diag.notes.push_back(note_for(sp));
    diag.help = megatron_lm ? "pass --sequence-parallel, or drop --tp-comm-overlap"
                            : "set sequence_parallel to true, or turn the tensor-parallel overlap off";
    diag.fixes.push_back(set_setting_fix(sp, true, FixSafety::Unsafe));
    diag.fixes.push_back(set_setting_fix(overlap, false, megatron_lm ? FixSafety::Unsafe : FixSafety::Safe));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kTpCommOverlapWithoutSequenceParallel = {
    .code = "MB303",
    .name = "tp-comm-overlap-without-sequence-parallel",
    .group = RuleGroup::Sequence,
    .severity = Severity::Warning,
    .summary = "tensor-parallel communication overlap needs sequence parallelism (and TP >= 2)",
    .doc = R"md(Tensor-parallel communication overlap (TransformerEngine userbuffers) splits the all-gather and
reduce-scatter that sequence parallelism puts around each tensor-parallel GEMM and runs them
under the GEMM. Without sequence parallelism those collectives do not exist. The programs react
differently:

* Megatron-LM's `validate_args` asserts "Tensor parallel communication/GEMM overlap can happen only
  when sequence parallelism is enabled" for `--tp-comm-overlap` (after it has turned sequence
  parallelism off at TP = 1): the job stops at start-up (an **error**).
* Megatron Bridge's `CommOverlapConfig.setup()` logs "Disabling tensor parallel communication
  overlap due to sequence_parallel=False" (or "TP size < 2") and runs without it: the overlap
  the config asks for silently does not happen (a **warning**). There, turning the flag off is a
  safe fix. A recipe that asks for the overlap where its own TP or sequence parallelism already drops
  it (NVIDIA's Qwen3-30B-A3B recipe on 16 H100s, TP 1) is not reported; a job that drops the
  overlap of a recipe that has it working (lowering TP, turning sequence parallelism off) is.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: false\n"
     "comm_overlap:\n  tp_comm_overlap: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n"
     "comm_overlap:\n  tp_comm_overlap: true\n"},
    .check = check,
    .checks = "MC C2, PS 42",
};

}  // namespace mblint
