// With sequence parallelism each tensor-parallel rank holds seq/(CP·TP)
// tokens: (seq/CP) % TP must be 0.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kCpSequenceParallelDivisibility;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& cp = d.context_parallel;
  const Quantity& seq = d.seq_length;
  const Setting& sp = d.sequence_parallel;
  if (!sp.value || !*sp.value) return;
  if (!tp.known() || !cp.known() || !seq.known() || *tp <= 1 || *cp <= 0 || *seq <= 0) return;
  if (*seq % *cp != 0) return;  // the split along CP is already broken: cp-seq-length-divisibility
  int64_t per_rank = *seq / *cp;
  if (per_rank % *tp == 0) return;
  std::string split = *cp > 1 ? fmt::format("{} / context_parallel_size {} = {} tokens per rank", *seq, *cp, per_rank)
                             : fmt::format("sequence length {}", *seq);
  Diagnostic diag = finding(
      kCpSequenceParallelDivisibility,
      fmt::format("with sequence parallelism, {} is not divisible by tensor_model_parallel_size {}", split, *tp),
      {&seq, &tp, &cp});
  diag.notes.push_back(note_for(sp));
  int64_t step = lcm64(*cp > 1 ? 2 * *cp : 1, *cp * *tp);
  int64_t valid = nearest_multiple(*seq, step);
  report(out, std::move(diag), fmt::format("use seq_length {} (nearest valid)", valid), {set_value_fix(seq, valid)});
}

}  // namespace

extern const RuleInfo kCpSequenceParallelDivisibility = {
    .code = "MB402",
    .name = "cp-sequence-parallel-divisibility",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "with sequence parallelism, seq_length / context_parallel_size must be divisible by tensor parallel",
    .doc = R"md(Sequence parallelism scatters each rank's part of the sequence (`seq_length / CP` tokens)
across the tensor-parallel group. Megatron-Core's `_split_along_first_dim` asserts "First
dimension of the tensor should be divisible by tensor parallel size" at the first forward pass,
and the pipeline's point-to-point buffers are sized `seq // CP // TP` (floored), so a
remainder also breaks pipeline communication. The job fails after start-up, at the first step.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 8\n  sequence_parallel: true\n  context_parallel_size: 2\n"
     "  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: null\n"
     "dataset:\n  seq_length: 8196\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --set model.seq_length=8196 --nodes 4 "
     "--gpus-per-node 8"},
    .good = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 8\n  sequence_parallel: true\n  context_parallel_size: 2\n"
     "  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: null\n"
     "dataset:\n  seq_length: 8192\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --set model.seq_length=8192 --nodes 4 "
     "--gpus-per-node 8"},
    .check = check,
    .checks = "MC C5, MC C6, MC D10",
};

}  // namespace mblint
