// With TP > 1 the layer norms and dropouts hold full activations on every
// tensor-parallel rank unless sequence parallelism shards them; it costs no
// extra communication. Advice for dense models (MoE requires it: MB302).
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kTpWithoutSequenceParallel;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Setting& sp = d.sequence_parallel;
  if (!splits(tp) || !sp.value || *sp.value) return;
  if (!d.num_moe_experts.known() || *d.num_moe_experts != 0) return;
  if (chosen_by_recipe({&tp.where, &sp.where})) return;  // NVIDIA's tuned choice
  std::string length;
  if (d.seq_length.known()) {
    int64_t seq = *d.seq_length;
    length = seq >= 2048 ? fmt::format(" ({}-token sequences make those activations large)", seq)
                         : fmt::format(" (sequence length {})", seq);
  }
  Span where = span_for(sp).valid() && layer_rank(sp.where.layer) >= layer_rank(tp.where.layer) ? span_for(sp)
                                                                                                : span_for(tp);
  Diagnostic diag = make_diagnostic(
      kTpWithoutSequenceParallel,
      fmt::format("tensor_model_parallel_size {} without sequence parallelism: every tensor-parallel rank keeps the "
                  "full activations of the layer norms and dropouts{}; sequence parallelism splits them {} ways at no "
                  "extra communication",
                  *tp, length, *tp),
      where);
  add_notes(diag, {&tp}, where == span_for(tp) ? &tp : nullptr);
  if (where != span_for(sp)) diag.notes.push_back(note_for(sp));
  report(
      out, std::move(diag),
      context.job.dialect == Dialect::MegatronLM ? "pass --sequence-parallel" : "set model.sequence_parallel to true",
      {set_setting_fix(sp, true, FixSafety::Unsafe)});
}

}  // namespace

extern const RuleInfo kTpWithoutSequenceParallel = {
    .code = "MB305",
    .name = "tp-without-sequence-parallel",
    .group = RuleGroup::Sequence,
    .severity = Severity::Note,
    .summary = "with tensor parallelism, sequence parallelism saves activation memory for free",
    .doc = R"md(Tensor parallelism splits the attention and MLP GEMMs, but the layer norms and dropouts between
them still see the whole sequence on every tensor-parallel rank. Sequence parallelism splits
those along the sequence; it replaces each all-reduce by a reduce-scatter plus an all-gather of
the same volume, so it costs no extra communication and lowers activation memory by roughly the
TP factor for those parts. NVIDIA's guidance (the `parallelism-strategies` skill and the recipe
recommender) turns it on whenever TP > 1, and it is what tensor-parallel communication overlap
needs. Longer sequences (2K tokens and up) gain the most.

This is advice for dense models. MoE models with TP > 1 must use it (`moe-tp-requires-sequence-parallel`).
Megatron-LM leaves it off unless `--sequence-parallel` is given. A recipe's own combination is
left alone.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: false\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  sequence_parallel: true\n"},
    .check = check,
    .checks = "PS 10, PS 22",
};

}  // namespace mblint
