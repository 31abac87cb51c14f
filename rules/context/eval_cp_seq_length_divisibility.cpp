// Evaluation may run with its own context-parallel size; the sequence must
// split for it as it does for training (2 x CP chunks, and whole
// sequence-parallel shards).
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kEvalCpSeqLengthDivisibility;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Quantity eval_cp = config_int(job, "dist.eval_context_parallel_size");
  if (!splits(eval_cp)) return;
  // The training size is checked by cp-seq-length-divisibility and
  // cp-sequence-parallel-divisibility.
  if (d.context_parallel.known() && *d.context_parallel == *eval_cp) return;
  Quantity seq = config_int(job, "dataset.seq_length");
  if (!seq.known()) seq = d.seq_length;
  if (!seq.known() || *seq <= 0) return;
  auto sp = sequence_parallel_runs(d);
  if (!sp) return;
  int64_t multiple = 2 * *eval_cp;
  if (*sp) multiple = lcm64(multiple, *eval_cp * *d.tensor_parallel);
  if (*seq % multiple == 0) return;
  std::string why = *sp ? fmt::format("lcm(2 x {}, {} x tensor_model_parallel_size {})", *eval_cp, *eval_cp,
                                      *d.tensor_parallel)
                        : fmt::format("2 x {}", *eval_cp);
  Diagnostic diag = finding(
      kEvalCpSeqLengthDivisibility,
      fmt::format("sequence length {} is not divisible by {} = {}, which evaluation with eval_context_parallel_size "
                  "{} needs",
                  *seq, why, multiple, *eval_cp),
      {&eval_cp, &seq});
  if (*sp) add_notes(diag, {&d.tensor_parallel}, nullptr);
  int64_t valid_seq = nearest_multiple(*seq, lcm64(multiple, d.context_parallel.known()
                                                                 ? 2 * *d.context_parallel
                                                                 : 1));
  report(out, std::move(diag),
         fmt::format("use seq_length {} (nearest valid for training and evaluation), or an "
                     "eval_context_parallel_size that divides it",
                     valid_seq),
         {set_value_fix(seq, valid_seq)});
}

}  // namespace

extern const RuleInfo kEvalCpSeqLengthDivisibility = {
    .code = "MB413",
    .name = "eval-cp-seq-length-divisibility",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "with eval_context_parallel_size, seq_length must be divisible by 2 x eval CP (and eval CP x TP with SP)",
    .doc = R"md(`dist.eval_context_parallel_size` lets Megatron Bridge evaluate with a different context-parallel
size than it trains with. Evaluation splits each sequence the same way training does: into
`2 x CP` chunks for the load-balanced causal split, and with sequence parallelism each chunk again
across the tensor-parallel ranks. Megatron Bridge computes the collate padding multiple from both
sizes, `lcm(2 x CP, CP x TP if sequence parallel)` over training and evaluation CP, and
`ConfigContainer.validate()` rejects HF, Energon and mock-VLM fine-tuning datasets whose
`seq_length` is not a multiple ("...seq_length must be divisible by the CP/SP collate padding
multiple (n)."); other datasets fail in TransformerEngine at the first evaluation ("Sequence
length per GPU needs to be divisible by 2!").

The training context-parallel size is covered by `cp-seq-length-divisibility` and
`cp-sequence-parallel-divisibility`; this rule checks the evaluation size when it differs.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 2\n  seq_length: 8196\ndataset:\n  seq_length: 8196\ndist:\n"
     "  eval_context_parallel_size: 4\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .good = {.content =
     "model:\n  context_parallel_size: 2\n  seq_length: 8200\ndataset:\n  seq_length: 8200\ndist:\n"
     "  eval_context_parallel_size: 4\n"},
    .check = check,
    .checks = "BR V5",
};

}  // namespace mblint
