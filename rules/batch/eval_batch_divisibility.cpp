// Evaluation batches are split like training batches: the eval global batch
// must be a multiple of the eval micro batch x the eval data-parallel size.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kEvalBatchDivisibility;

namespace {

// An eval setting, or the training value it defaults to when null. Recipes
// never set the eval batch sizes, so absent from a recipe-based job means
// the default too.
Quantity eval_or_train(const Job& job, std::string_view path, const Quantity& train) {
  Quantity q = config_int(job, path);
  if (q.known()) return q;
  const ConfigValue* node = config_node(job, path);
  bool unset = (node && node->is_null()) || (!node && (q.defaulted || job.recipe || job.config_complete));
  if (!unset || !train.known()) return Quantity{};
  Quantity from_train = train;
  from_train.how = fmt::format("{} is unset: it takes {} ({})", q.name, train.name, *train.value);
  from_train.name = q.name;
  from_train.path = q.path;
  return from_train;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Quantity gbs = eval_or_train(job, "validation.eval_global_batch_size", d.global_batch_size);
  Quantity mbs = eval_or_train(job, "validation.eval_micro_batch_size", d.micro_batch_size);
  Quantity eval_cp = config_int(job, "dist.eval_context_parallel_size");
  Quantity dp = d.batch_data_parallel;
  const Quantity& w = d.world_size;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  if (eval_cp.known() && *eval_cp > 0 && job.dialect == Dialect::Bridge) {
    if (!w.known() || !tp.known() || !pp.known() || *tp <= 0 || *pp <= 0) return;
    int64_t model = *tp * *pp * *eval_cp;
    if (*w % model != 0) {
      const Quantity& primary = most_specific({&eval_cp, &tp, &pp});
      report(
          out,
          finding_at(kEvalBatchDivisibility,
                     fmt::format("world size {} is not divisible by the evaluation model-parallel size TP {} x PP {} x "
                                 "eval_context_parallel_size {} = {}",
                                 *w, *tp, *pp, *eval_cp, model),
                     primary, {&eval_cp, &tp, &pp, &w}),
          "use an eval_context_parallel_size that divides world size / (TP x PP)");
      return;
    }
    dp = Quantity{};
    dp.name = "eval data-parallel size";
    dp.value = *w / model;
    dp.how = fmt::format("world size {} / (TP {} x PP {} x eval CP {})", *w, *tp, *pp, *eval_cp);
  } else {
    dp.name = "data-parallel size";
  }
  if (!gbs.known() || !mbs.known() || !dp.known() || *gbs <= 0 || *mbs <= 0 || *dp <= 0) return;
  int64_t step = *mbs * *dp;
  if (*gbs % step == 0) return;
  // Identical to the training split: global-batch-divisibility reports it,
  // unless decrease_batch_size_if_needed hides it there (not for eval).
  bool decrease = config_bool(job, "train.decrease_batch_size_if_needed").value.value_or(false);
  bool same_as_train = gbs.value == d.global_batch_size.value && mbs.value == d.micro_batch_size.value &&
                       dp.value == d.batch_data_parallel.value;
  if (same_as_train && !decrease) return;
  const Quantity& primary = most_specific({&gbs, &mbs, &eval_cp});
  Diagnostic diag = make_diagnostic(
      kEvalBatchDivisibility,
      fmt::format("eval_global_batch_size {} is not divisible by eval_micro_batch_size {} x {} {} = {}", *gbs, *mbs,
                  dp.name, *dp, step),
      span_for(primary));
  if (!primary.how.empty()) diag.notes.push_back(Note{primary.how, span_for(primary)});
  add_notes(diag, {&gbs, &mbs, &eval_cp}, &primary);
  diag.notes.push_back(Note{fmt::format("{} {} = {}", dp.name, *dp, dp.how), span_for(d.world_size)});
  int64_t valid = nearest_multiple(*gbs, step);
  diag.help = fmt::format("use eval_global_batch_size {} (nearest multiple of {})", valid, step);
  Quantity target = gbs;
  target.name = "eval_global_batch_size";
  if (!gbs.how.empty()) target.where = Provenance{};  // it is the training value: write the eval field instead
  diag.fixes.push_back(set_value_fix(target, valid));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kEvalBatchDivisibility = {
    .code = "MB605",
    .name = "eval-batch-divisibility",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "the evaluation batch must split into whole micro batches on every data-parallel rank",
    .doc = R"md(Validation runs `eval_global_batch_size / (eval_micro_batch_size x eval DP)` microbatches per
rank. Both sizes default to the training ones (`train.global_batch_size`,
`train.micro_batch_size`). Megatron Bridge's `ConfigContainer.validate()` asserts
"eval_global_batch_size (G) must be divisible by eval_micro_batch_size * eval_data_parallel_size
..." at start-up; Megatron-LM's `validate_args` has the same check. `decrease_batch_size_if_needed`
only rounds the training batch, never the evaluation one.

With `dist.eval_context_parallel_size` Bridge evaluates with another context-parallel size, so
the evaluation data-parallel size is `world size / (TP x PP x eval CP)`; the world size must be
divisible by that product ("world size (W) is not divisible by eval model parallel size (N)").

When the evaluation values equal the training ones the training check (`global-batch-divisibility`)
reports the problem instead.)md",
    .bad = {"override.yaml", "validation:\n  eval_global_batch_size: 30\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "validation:\n  eval_global_batch_size: 32\n"},
    .check = check,
    .checks = "MC F5, BR V9, PS 80",
};

}  // namespace mblint
