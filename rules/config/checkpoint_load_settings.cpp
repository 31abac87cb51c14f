// CheckpointConfig.finalize(): loading options that contradict each other.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kCheckpointLoadSettings;

namespace {

// The pairs CheckpointConfig.finalize() refuses together.
constexpr BothOn kMainParamsWithOptimizer = {
    .first = "checkpoint.load_main_params_from_ckpt",
    .second = "checkpoint.load_optim",
    .message =
        "load_main_params_from_ckpt with load_optim: CheckpointConfig.finalize() asserts "
        "\"load_main_params_from_ckpt must be used with load_optim=False\"",
    .help = "set checkpoint.load_optim to false (it defaults to true)",
};
constexpr BothOn kReshardableMemEfficient = {
    .first = "checkpoint.distrib_optim_fully_reshardable_mem_efficient",
    .second = "checkpoint.dist_ckpt_optim_fully_reshardable",
    .message =
        "dist_ckpt_optim_fully_reshardable with distrib_optim_fully_reshardable_mem_efficient: "
        "CheckpointConfig.finalize() asserts \"distrib_optim_fully_reshardable_mem_efficient requires "
        "use_gloo_process_groups\"",
    .help = "turn distrib_optim_fully_reshardable_mem_efficient off",
};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  check_both_on(job, kCheckpointLoadSettings, kMainParamsWithOptimizer, out);
  Resolved step = resolve(job, "checkpoint.ckpt_step");
  Resolved load = resolve(job, "checkpoint.load");
  if (step.known() && !step.value->is_null() && load.known() && load.value->is_null()) {
    report(out,
           finding(kCheckpointLoadSettings,
                   fmt::format("checkpoint.ckpt_step {} without checkpoint.load: CheckpointConfig.finalize() raises "
                               "\"ckpt_step={} specified but checkpoint.load is None\"",
                               display(step), display(step)),
                   {&step, &load}),
           "set checkpoint.load to the base checkpoint directory");
  }
  check_both_on(job, kCheckpointLoadSettings, kReshardableMemEfficient, out);
}

}  // namespace

extern const RuleInfo kCheckpointLoadSettings = {
    .code = "MB975",
    .name = "checkpoint-load-settings",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "checkpoint options CheckpointConfig.finalize() rejects: main params with optimizer state, ckpt_step without load",
    .doc = R"md(Megatron Bridge's `CheckpointConfig.finalize()` (run at start-up by `ConfigContainer.validate()`)
asserts:

* "load_main_params_from_ckpt must be used with load_optim=False" — loading fp32 main parameters
  from the checkpoint replaces the optimizer's copy, so the optimizer state is not loaded with it;
  `load_optim` defaults to true;
* "ckpt_step=N specified but checkpoint.load is None. Please set checkpoint.load to the base
  checkpoint directory." — the step picks an iteration inside the load directory;
* `dist_ckpt_optim_fully_reshardable` with `distrib_optim_fully_reshardable_mem_efficient` fails
  ("distrib_optim_fully_reshardable_mem_efficient requires use_gloo_process_groups").

The async-save and HF-export conditions of the same method are reported by
`async-save-requirements` and `hf-checkpoint-export`; whether `pretrained_checkpoint` exists is a
file-system question mblint does not answer.)md",
    .bad = {"override.yaml", "checkpoint:\n  load_main_params_from_ckpt: true\n  load_optim: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "checkpoint:\n  load_main_params_from_ckpt: true\n  load_optim: false\n"},
    .check = check,
    .checks = "BR ckpt",
};

}  // namespace mblint
