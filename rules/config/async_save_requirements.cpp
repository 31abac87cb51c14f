// Asynchronous checkpoint saving works only with the distributed formats,
// needs a save directory and the persistent checkpoint worker.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kAsyncSaveRequirements;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved async = resolve(job, "checkpoint.async_save");
  if (!is_on(async)) return;
  Resolved save = resolve(job, "checkpoint.save");
  if (save.known() && save.value->is_null()) {
    report(out,
           finding(kAsyncSaveRequirements,
                   "checkpoint.async_save without checkpoint.save: CheckpointConfig.finalize() asserts \"async_save is "
                   "enabled, but save is not set. Set save to a valid path.\"",
                   {&save, &async}),
           "set checkpoint.save, or turn async_save off");
  }
  Resolved worker = resolve(job, "checkpoint.use_persistent_ckpt_worker");
  if (is_off(worker)) {
    report(out,
           finding(kAsyncSaveRequirements,
                   "checkpoint.async_save with use_persistent_ckpt_worker false: CheckpointConfig.finalize() asserts "
                   "\"async_save requires use_persistent_ckpt_worker=True.\"",
                   {&worker, &async}),
           "set checkpoint.use_persistent_ckpt_worker to true");
  }
  Resolved format = resolve(job, "checkpoint.ckpt_format");
  if (format.known() && format.value->kind == ValueKind::String && format.value->text != "torch_dist" &&
      format.value->text != "fsdp_dtensor") {
    report(
        out,
        finding(kAsyncSaveRequirements,
                fmt::format("checkpoint.async_save with ckpt_format {}: Megatron Bridge asserts \"async_save is only "
                            "supported with ckpt_format='torch_dist','fsdp_dtensor'\"",
                            format.value->text),
                {&format, &async}),
        "use ckpt_format torch_dist, or turn async_save off");
  }
}

}  // namespace

extern const RuleInfo kAsyncSaveRequirements = {
    .code = "MB967",
    .name = "async-save-requirements",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "async_save needs a save directory, the persistent checkpoint worker and a distributed checkpoint format",
    .doc = R"md(`checkpoint.async_save` writes checkpoints in a background process. Megatron Bridge checks at
start-up:

* `CheckpointConfig.finalize()`: "async_save is enabled, but save is not set. Set save to a valid
  path." and "async_save requires use_persistent_ckpt_worker=True." (the worker is on by default);
* `ConfigContainer.validate()`: "async_save is only supported with
  ckpt_format='torch_dist','fsdp_dtensor'" — the legacy `torch` and `torch_dcp` formats cannot be
  written asynchronously.

Megatron Bridge's library recipes save to `nemo_experiments/default/checkpoints` in `torch_dist` by
default; its performance recipes set `save: null`.)md",
    .bad = {"override.yaml", "checkpoint:\n  async_save: true\n  ckpt_format: torch\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "checkpoint:\n  async_save: true\n  ckpt_format: torch_dist\n"},
    .check = check,
    .checks = "BR V22, BR ckpt",
};

}  // namespace mblint
