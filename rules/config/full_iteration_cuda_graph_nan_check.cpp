// A full-iteration CUDA graph replays the whole step; the rerun state
// machine's NaN check cannot run inside it.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kFullIterationCudaGraphNanCheck;

namespace {

bool names_full_iteration(const ConfigValue* value) {
  if (!value) return false;
  if (value->kind == ValueKind::String) return value->text == "full_iteration";
  for (const ConfigValue& item : value->items) {
    if (item.kind == ValueKind::String && item.text == "full_iteration") return true;
  }
  return false;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved impl = resolve(job, "model.cuda_graph_impl");
  if (!impl.known() || impl.value->kind != ValueKind::String) return;
  bool full = impl.value->text == "full_iteration";
  Resolved scope = resolve(job, "model.cuda_graph_modules");
  if (!names_full_iteration(scope.known() ? &*scope.value : nullptr)) scope = resolve(job, "model.cuda_graph_scope");
  if (impl.value->text == "local" && scope.known() && names_full_iteration(&*scope.value)) full = true;
  if (!full) return;
  Resolved nan_check = resolve(job, "rerun_state_machine.check_for_nan_in_loss");
  if (!is_on(nan_check)) return;
  Diagnostic diag =
      impl.value->text == "local"
          ? finding(kFullIterationCudaGraphNanCheck,
                    "a full-iteration CUDA graph with rerun_state_machine.check_for_nan_in_loss: Megatron Bridge "
                    "asserts \"check_for_nan_in_loss must be disabled when using full_iteration CUDA graph\"",
                    {&nan_check, &impl, &scope})
          : finding(kFullIterationCudaGraphNanCheck,
                    "a full-iteration CUDA graph with rerun_state_machine.check_for_nan_in_loss: Megatron Bridge "
                    "asserts \"check_for_nan_in_loss must be disabled when using full_iteration CUDA graph\"",
                    {&nan_check, &impl});
  report(out, std::move(diag), "set rerun_state_machine.check_for_nan_in_loss to false (it defaults to true)");
}

}  // namespace

extern const RuleInfo kFullIterationCudaGraphNanCheck = {
    .code = "MB972",
    .name = "full-iteration-cuda-graph-nan-check",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a full-iteration CUDA graph needs rerun_state_machine.check_for_nan_in_loss false",
    .doc = R"md(A full-iteration CUDA graph (`cuda_graph_impl: full_iteration`, or `local` with the
`full_iteration` scope) captures the whole training step, forward, backward and optimizer, and
replays it; the loss never comes back to Python in between, so the rerun state machine cannot
inspect it for NaNs. Megatron Bridge's `ConfigContainer.validate()` asserts "check_for_nan_in_loss
must be disabled when using full_iteration CUDA graph. Set
rerun_state_machine.check_for_nan_in_loss=False." — and the check is **on by default**. Megatron
Bridge's performance recipes turn it off.)md",
    .bad = {"override.yaml", "model:\n  cuda_graph_impl: local\n  cuda_graph_scope: full_iteration\n"
                      "rerun_state_machine:\n  check_for_nan_in_loss: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  cuda_graph_impl: local\n  cuda_graph_scope: full_iteration\n"
                      "rerun_state_machine:\n  check_for_nan_in_loss: false\n"},
    .check = check,
    .checks = "BR V28",
};

}  // namespace mblint
