// The global batch is split into microbatches over the data-parallel ranks:
// GBS % (MBS·DP) must be 0.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kGlobalBatchDivisibility;

namespace {

// The data-parallel size is unknown (the allocation or the layout is): the
// batch still has to split into whole micro-batches, whatever DP is.
void check_without_data_parallel(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& gbs = d.global_batch_size;
  const Quantity& mbs = d.micro_batch_size;
  if (*gbs % *mbs == 0) return;
  Diagnostic diag =
      finding(kGlobalBatchDivisibility,
              fmt::format("global_batch_size {} is not divisible by micro_batch_size {}, so not by micro_batch_size x "
                          "data-parallel size whatever the data-parallel size is (not known here)",
                          *gbs, *mbs),
              {&gbs, &mbs});
  int64_t valid = nearest_multiple(*gbs, *mbs);
  report(out, std::move(diag),
         fmt::format("use a global_batch_size that is a multiple of micro_batch_size x data-parallel size, "
                     "e.g. {}",
                     valid));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& gbs = d.global_batch_size;
  const Quantity& mbs = d.micro_batch_size;
  const Quantity& dp = d.batch_data_parallel;
  if (!gbs.known() || !mbs.known() || *gbs <= 0 || *mbs <= 0) return;
  if (const ConfigValue* decrease = find_path(context.job.config, "train.decrease_batch_size_if_needed");
      decrease && as_bool(decrease).value_or(false)) {
    return;  // Megatron rounds the batch down instead of failing
  }
  if (!dp.known()) {
    check_without_data_parallel(context, out);
    return;
  }
  if (*dp <= 0) return;
  int64_t step = *mbs * *dp;
  if (*gbs % step == 0) return;
  std::string why = *gbs < step ? fmt::format(" (fewer samples than micro_batch_size x data-parallel ranks)") : "";
  Diagnostic diag =
      finding(kGlobalBatchDivisibility,
              fmt::format("global_batch_size {} is not divisible by micro_batch_size {} x data-parallel size {} = {}{}",
                          *gbs, *mbs, *dp, step, why),
              {&gbs, &mbs});
  diag.notes.push_back(Note{fmt::format("data-parallel size {} = {}", *dp, dp.how), span_for(d.world_size)});
  if (!span_for(d.world_size).valid()) add_notes(diag, {&d.nodes, &d.gpus_per_node}, nullptr);
  int64_t valid = nearest_multiple(*gbs, step);
  report(out, std::move(diag), fmt::format("use global_batch_size {} (nearest multiple of {})", valid, step),
         {set_value_fix(gbs, valid)});
}

}  // namespace

extern const RuleInfo kGlobalBatchDivisibility = {
    .code = "MB601",
    .name = "global-batch-divisibility",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "the global batch must split into whole microbatches on every data-parallel rank",
    .doc = R"md(Each step processes `global_batch_size` samples as `GBS / (MBS x DP)` microbatches on each of
the DP data-parallel ranks, where `DP = world size / (TP x PP x CP)`. With Megatron-LM's
`--tensor-parallel-num-weight-shards` (Megatron-Core 0.19) each of the GTP weight-shard ranks takes
its own micro-batch too, so the divisor is `MBS x DP x GTP` with `DP = world size / (TP x PP x CP x
GTP)` (core_v0.19.0 `megatron/training/global_vars.py` passes `data_parallel_size x
gtp_weight_remat_size` to the microbatch calculator). Megatron-Core's
microbatch calculator asserts "global batch size (G) is not divisible by micro batch size (m)
times data parallel size (d)" at initialization (unless `decrease_batch_size_if_needed`, which
silently rounds the batch down). A recipe moved to more GPUs hits this: NVIDIA's 256-GPU
NemotronH 56B BF16 recipes keep the 64-GPU batch of 192 with DP 128.)md",
    .bad = {"override.yaml",
     "train:\n  global_batch_size: 102\n  micro_batch_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "train:\n  global_batch_size: 128\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "MC F3",
};

}  // namespace mblint
