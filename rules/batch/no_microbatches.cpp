// decrease_batch_size_if_needed rounds the global batch down to a multiple of
// micro_batch_size x DP: below one such multiple it rounds to nothing.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kNoMicrobatches;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& gbs = d.global_batch_size;
  const Quantity& mbs = d.micro_batch_size;
  const Quantity& dp = d.batch_data_parallel;
  Setting decrease = config_bool(context.job, "train.decrease_batch_size_if_needed");
  if (!decrease.value || !*decrease.value) return;  // without it global-batch-divisibility reports
  if (config_text(context.job, "train.step_batch_size_schedule").value) return;  // the schedule refuses it itself
  if (!gbs.known() || !mbs.known() || !dp.known() || *gbs <= 0 || *mbs <= 0 || *dp <= 0) return;
  int64_t step = *mbs * *dp;
  if (*gbs >= step) return;
  Diagnostic diag =
      finding(kNoMicrobatches,
              fmt::format("global_batch_size {} is smaller than micro_batch_size {} x data-parallel size {} = {}: "
                          "decrease_batch_size_if_needed rounds it down to 0 microbatches",
                          *gbs, *mbs, *dp, step),
              {&gbs, &mbs});
  diag.notes.push_back(note_for(decrease));
  diag.notes.push_back(Note{fmt::format("data-parallel size {} = {}", *dp, dp.how), span_for(d.world_size)});
  report(out, std::move(diag),
         fmt::format("use global_batch_size {} or a multiple of it{}", step,
                     *mbs > 1 ? ", or a smaller micro_batch_size" : ""),
         {set_value_fix(gbs, step)});
}

}  // namespace

extern const RuleInfo kNoMicrobatches = {
    .code = "MB604",
    .name = "no-microbatches",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "the global batch rounds down to zero microbatches",
    .doc = R"md(With `decrease_batch_size_if_needed` Megatron-Core's constant microbatch calculator does not
fail on a global batch that is not a multiple of `micro_batch_size x DP`: it rounds the batch
down to one. A global batch smaller than `micro_batch_size x DP` rounds down to 0, and the
calculator then asserts "number of microbatches should be at least 1, got 0" at start-up. This
happens when a small test batch is moved to more GPUs. (Without the option
`global-batch-divisibility` reports the batch.))md",
    .bad = {"override.yaml",
     "train:\n  global_batch_size: 3\n  micro_batch_size: 1\n  decrease_batch_size_if_needed: true\n"
     "validation:\n  eval_global_batch_size: 4\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "train:\n  global_batch_size: 6\n  micro_batch_size: 1\n  decrease_batch_size_if_needed: true\n"
     "validation:\n  eval_global_batch_size: 4\n"},
    .check = check,
    .checks = "MC F4",
};

}  // namespace mblint
