// Data-parallel replicas each keep the whole optimizer state.
#include "rules/support/memory_support.h"

#include <algorithm>

#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kDistributedOptimizerOff;

namespace {

// Below this saving the note would be noise on small jobs.
constexpr double kMinimumSavingGiB = 1.0;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (!d.data_parallel.known() || *d.data_parallel * d.context_parallel.value.value_or(1) <= 1) return;
  // Unknown (Megatron-DeepSpeed's ZeRO, a value mblint cannot read) may be on.
  if (read_flag(job, "ddp.use_distributed_optimizer").value.value_or(true) ||
      read_flag(job, "optimizer.use_distributed_optimizer").value.value_or(true) ||
      read_flag(job, "ddp.use_megatron_fsdp").value.value_or(false) ||
      read_flag(job, "dist.use_megatron_fsdp").value.value_or(false)) {
    return;
  }
  const auto& e = job_estimate(context);
  if (!e) return;
  double limit = e->capacity > 0 ? context.thresholds.memory_headroom * e->capacity : 0;
  auto remedies = memory_remedies(context, *e, limit);
  auto it = std::find_if(remedies.begin(), remedies.end(), [](const MemoryRemedy& r) {
    return r.what.rfind("enable", 0) == 0 && r.changes.size() == 2;  // the optimizer change alone
  });
  if (it == remedies.end() || it->saving < kMinimumSavingGiB) return;
  Setting flag = read_flag(job, "ddp.use_distributed_optimizer");
  Diagnostic diag = make_diagnostic(
      kDistributedOptimizerOff,
      fmt::format("the distributed optimizer is off with data-parallel size {}: every replica keeps the whole "
                  "optimizer state; sharding it would save {:.1f} GiB per GPU ({:.1f} -> {:.1f} GiB)",
                  *d.data_parallel * d.context_parallel.value.value_or(1), it->saving, e->total, it->estimate.total),
      first_span(job, {span_for(flag), span_for(d.data_parallel), memory_span(context)}));
  diag.notes.push_back(note_for(d.data_parallel));
  diag.help = fmt::format("{} (Adam's fp32 master weights and moments are split over DP x CP; the cost is a "
                          "reduce-scatter and all-gather in place of the all-reduce)",
                          it->fix.description);
  diag.fixes.push_back(it->fix);
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kDistributedOptimizerOff = {
    .code = "MB982",
    .name = "distributed-optimizer-off",
    .group = RuleGroup::Memory,
    .severity = Severity::Note,
    .summary = "data parallelism without the distributed optimizer: each replica keeps the whole optimizer state",
    .doc = R"md(Without the distributed optimizer every data-parallel rank holds the fp32 master weights and both
Adam moments of its model shard: 12 of the 18 bytes per parameter
(`docs/user-guide/features/dist_optimizer.md`: 18 B vs 6 + 12/d). With
`ddp.use_distributed_optimizer` (Megatron-LM `--use-distributed-optimizer`) they are sharded over
the DP·CP ranks, at the cost of a reduce-scatter plus all-gather instead of one all-reduce (the same
bytes on the wire). The note states the saving, re-estimated on the changed job; it stays silent
when the saving is under 1 GiB.)md",
    .bad = {"model_config.yaml",
     "MODEL_ARGS:\n  --num-layers: 24\n  --hidden-size: 2048\n  --num-attention-heads: 16\n  --seq-length: 2048\n"
     "  --max-position-embeddings: 2048\n  --micro-batch-size: 1\n  --global-batch-size: 64\n  --bf16: true\n",
     "model_config.yaml --nodes 1 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "MODEL_ARGS:\n  --num-layers: 24\n  --hidden-size: 2048\n  --num-attention-heads: 16\n  --seq-length: 2048\n"
     "  --max-position-embeddings: 2048\n  --micro-batch-size: 1\n  --global-batch-size: 64\n"
     "  --use-distributed-optimizer: true\n  --bf16: true\n"},
    .check = check,
    .checks = "MC 2.K, MC 4.1",
};

}  // namespace mblint
