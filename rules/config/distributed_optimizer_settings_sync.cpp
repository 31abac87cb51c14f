// Megatron Bridge keeps the distributed-optimizer switches of ddp and
// optimizer in sync by turning both on when either is on.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kDistributedOptimizerSettingsSync;

namespace {

void check_pair(const RuleContext& context, std::string_view field, std::string_view what,
                std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Resolved ddp = resolve(job, fmt::format("ddp.{}", field));
  Resolved optimizer = resolve(job, fmt::format("optimizer.{}", field));
  auto a = truthy(ddp), b = truthy(optimizer);
  if (!a || !b || *a == *b) return;
  const Resolved& off = *a ? optimizer : ddp;
  const Resolved& on = *a ? ddp : optimizer;
  // Turning one side off while the other stays on is undone without a trace.
  bool undone = !off.defaulted && off.known() && written_by_user(off.where()) &&
                !(written_by_user(on.where()) && layer_rank(on.where().layer) >= layer_rank(off.where().layer));
  Diagnostic diag = finding(
      kDistributedOptimizerSettingsSync,
      fmt::format("{} is true but {} is false: Megatron Bridge turns {} on in both (\"{} settings were not in sync "
                  "... Automatically enabling\")",
                  on.path, off.path, what, field == "use_distributed_optimizer" ? "Distributed optimizer"
                                                                                  : "overlap_param_gather"),
      {&off, &on});
  if (undone) diag.severity = Severity::Warning;
  report(out, std::move(diag),
         undone ? fmt::format("to turn it off, set both {} and {} to false", ddp.path, optimizer.path)
                : fmt::format("set {} to true as well", off.path));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  check_pair(context, "use_distributed_optimizer", "the distributed optimizer", out);
  check_pair(context, "overlap_param_gather", "parameter-gather overlap", out);
}

}  // namespace

extern const RuleInfo kDistributedOptimizerSettingsSync = {
    .code = "MB960",
    .name = "distributed-optimizer-settings-sync",
    .group = RuleGroup::Config,
    .severity = Severity::Note,
    .summary = "ddp and optimizer disagree on use_distributed_optimizer or overlap_param_gather; Bridge turns both on",
    .doc = R"md(The distributed optimizer and parameter-gather overlap each have a switch in `ddp` and one in
`optimizer`. Megatron Bridge's `_validate_and_sync_distributed_optimizer_settings`
(`training/config.py`) makes them agree: when either side is true, both become true, with the
warning "Distributed optimizer settings were not in sync: ddp.use_distributed_optimizer=...,
optimizer.use_distributed_optimizer=... Automatically enabling distributed optimizer for both
settings." (likewise for `overlap_param_gather`).

Usually this is harmless (a **note**): set both to the same value to keep the config honest.
It is a **warning** when the false side is what the user wrote last — typically turning the
distributed optimizer off in `ddp` on a recipe that enables it in both: the recipe's `true` in
`optimizer` wins and the switch is silently undone. Turn it off in both sections.)md",
    .bad = {"override.yaml", "ddp:\n  use_distributed_optimizer: false\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "ddp:\n  use_distributed_optimizer: false\noptimizer:\n  use_distributed_optimizer: false\n"},
    .check = check,
    .checks = "BR V15, PS 43b",
};

}  // namespace mblint
