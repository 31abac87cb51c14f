// On resume the scheduler state comes either from the config
// (override_opt_param_scheduler) or from the checkpoint
// (use_checkpoint_opt_param_scheduler), not both.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kSchedulerCheckpointConflict;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Setting override_setting = config_bool(context.job, "scheduler.override_opt_param_scheduler");
  Setting use_checkpoint = config_bool(context.job, "scheduler.use_checkpoint_opt_param_scheduler");
  if (!override_setting.value.value_or(false) || !use_checkpoint.value.value_or(false)) return;
  Quantity a = as_quantity(override_setting);
  Quantity b = as_quantity(use_checkpoint);
  const Quantity& primary = most_specific({&a, &b});
  Diagnostic diag = finding_at(kSchedulerCheckpointConflict,
                               "override_opt_param_scheduler and use_checkpoint_opt_param_scheduler are both "
                               "true: the learning-rate schedule cannot come from both the config and the "
                               "checkpoint",
                               primary, {&a, &b});
  diag.help = "keep override_opt_param_scheduler to apply the config's schedule on resume, or "
              "use_checkpoint_opt_param_scheduler to keep the checkpoint's";
  const Quantity& other = &primary == &a ? b : a;
  for (const Quantity* q : {&primary, &other}) {
    Setting s;
    s.name = q->name;
    s.where = q->where;
    diag.fixes.push_back(set_setting_fix(s, false, FixSafety::Unsafe));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kSchedulerCheckpointConflict = {
    .code = "MB613",
    .name = "scheduler-checkpoint-conflict",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "override_opt_param_scheduler and use_checkpoint_opt_param_scheduler exclude each other",
    .doc = R"md(When a run resumes, the learning-rate and weight-decay schedule either follows the config
(`override_opt_param_scheduler`: the config's values replace the checkpoint's) or the
checkpoint (`use_checkpoint_opt_param_scheduler`: the checkpoint's values win). Setting both is
contradictory: Megatron Bridge's `SchedulerConfig.finalize` asserts "both override and
use-checkpoint are set." at start-up, and Megatron-Core's `OptimizerParamScheduler` (which
Megatron-LM uses directly) asserts the same.)md",
    .bad = {"override.yaml",
     "scheduler:\n  override_opt_param_scheduler: true\n  use_checkpoint_opt_param_scheduler: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "scheduler:\n  override_opt_param_scheduler: true\n  use_checkpoint_opt_param_scheduler: false\n"},
    .check = check,
    .checks = "BR sched override",
};

}  // namespace mblint
