// CP > 1 needs seq_length % (2·CP) == 0: each of the CP ranks holds two
// half-chunks of the sequence (the load-balanced causal split).
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kCpSeqLengthDivisibility;

namespace {

// Sequence lengths that also keep sequence parallelism whole ((s/CP) % TP).
int64_t sequence_step(const Derived& d) {
  int64_t cp = *d.context_parallel;
  int64_t step = 2 * cp;
  bool sp = d.sequence_parallel.value.value_or(false) && splits(d.tensor_parallel);
  if (sp) step = lcm64(step, cp * *d.tensor_parallel);
  return step;
}

// The largest CP below the current one that splits the sequence.
int64_t smaller_context_parallel(int64_t seq, int64_t cp) {
  for (int64_t c = cp - 1; c > 1; --c) {
    if (seq % (2 * c) == 0) return c;
  }
  return 1;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& cp = d.context_parallel;
  const Quantity& seq = d.seq_length;
  if (!splits_unevenly(seq, cp, 2)) return;
  Diagnostic diag = finding(
      kCpSeqLengthDivisibility,
      fmt::format("sequence length {} is not divisible by 2*context_parallel_size = {}", *seq, 2 * *cp), {&seq, &cp});
  int64_t valid_seq = nearest_multiple(*seq, sequence_step(d));
  int64_t valid_cp = smaller_context_parallel(*seq, *cp);
  report(out, std::move(diag),
         fmt::format("use seq_length {} (nearest valid), or context_parallel_size {}", valid_seq, valid_cp),
         {set_value_fix(seq, valid_seq), set_value_fix(cp, valid_cp)});
}

}  // namespace

extern const RuleInfo kCpSeqLengthDivisibility = {
    .code = "MB401",
    .name = "cp-seq-length-divisibility",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "with context parallelism the sequence length must be a multiple of 2 x context_parallel_size",
    .doc = R"md(Context parallelism splits every sequence into `2 x CP` chunks and gives each rank two of
them (one from each end, to balance causal attention). Megatron Bridge's `ConfigContainer.validate()`
asserts `seq_length % (2 * context_parallel_size) == 0` when `context_parallel_size > 1`
("Sequence length must be divisible by 2 * context parallel size if context parallel is used");
Megatron-LM's `validate_args` has the same check. The job fails at start-up, after the queue.

The sequence length checked is `model.seq_length`; under `run_recipe.py` it is copied from
`dataset.seq_length` (also what `-sl/--seq_length` sets). The suggested length also keeps
sequence parallelism whole (`(seq_length / CP) % TP == 0`). TransformerEngine's own check at the
first step, "Sequence length per GPU needs to be divisible by 2!", is the same condition for
fixed-length batches.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 4 --nproc-per-node 8 "
     "scripts/training/run_recipe.py \\\n    --recipe llama3_70b_pretrain_config \\\n    dataset.seq_length=8190\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 4 --nproc-per-node 8 "
     "scripts/training/run_recipe.py \\\n    --recipe llama3_70b_pretrain_config \\\n    dataset.seq_length=8192\n"},
    .check = check,
    .checks = "MC D1, MC D2, BR V3, PS 18",
};

}  // namespace mblint
