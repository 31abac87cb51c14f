// Megatron-LM sizes the position range by --max-position-embeddings and
// asserts that every sequence fits in it.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMaxPositionEmbeddingsBelowSeqLength;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!megatron_lm_validates_flags(job)) return;
  Quantity positions = config_int(job, "model.max_position_embeddings");
  if (!positions.known()) return;
  // --seq-length (or --encoder-seq-length standing in for it), then T5's decoder.
  for (const char* path : {"model.seq_length", "model.decoder_seq_length"}) {
    Quantity seq = config_int(job, path);
    if (!seq.known() || *positions >= *seq) continue;
    Diagnostic diag = finding_at(
        kMaxPositionEmbeddingsBelowSeqLength,
        fmt::format("max_position_embeddings {} is below {} {}: {} stops in validate_args (\"max_position_embeddings "
                    "({}) must be greater than or equal to {} ({})\")",
                    *positions, seq.name, *seq, job.megatron_lm_script, *positions, seq.name, *seq),
        positions, {&positions, &seq});
    report(out, std::move(diag), fmt::format("pass --max-position-embeddings {} (or more)", *seq),
           {int_fix(job, positions, *seq)});
    return;
  }
}

}  // namespace

extern const RuleInfo kMaxPositionEmbeddingsBelowSeqLength = {
    .code = "MB213",
    .name = "max-position-embeddings-below-seq-length",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "Megatron-LM: --max-position-embeddings must be at least --seq-length (and --decoder-seq-length)",
    .doc = R"md(Megatron-LM's `validate_args` asserts `max_position_embeddings >= seq_length` ("max_position_embeddings
(…) must be greater than or equal to seq_length (…)"), and likewise for T5's `--decoder-seq-length`
(`megatron/training/arguments.py`, core_v0.6 to 2a75ac12c54b); `--encoder-seq-length` stands in
for `--seq-length` when that is absent. The check holds for every position embedding type, rotary
included, so a longer-context run that raises `--seq-length` alone stops at start-up.

Only Megatron-LM's own scripts and functional-test configs are checked; Megatron Bridge's GPT
providers have no `max_position_embeddings` (they take `seq_length`).)md",
    .bad = {"train.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
            "  --num-attention-heads 32 --seq-length 8192 --max-position-embeddings 4096 \\\n"
            "  --micro-batch-size 1 --global-batch-size 256\n",
            "train.sh"},
    .good = {.content = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
                        "  --num-attention-heads 32 --seq-length 8192 --max-position-embeddings 8192 \\\n"
                        "  --micro-batch-size 1 --global-batch-size 256\n"},
    .check = check,
    .checks = "MC B10",
};

}  // namespace mblint
