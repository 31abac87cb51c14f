// The fsdp_dtensor checkpoint format is Megatron-FSDP's own.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kFsdpDtensorWithoutMegatronFsdp;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved format = resolve(job, "checkpoint.ckpt_format");
  if (!format.known() || format.value->kind != ValueKind::String || format.value->text != "fsdp_dtensor") return;
  Resolved save = resolve(job, "checkpoint.save");
  Resolved load = resolve(job, "checkpoint.load");
  // Bridge checks the format only when the job saves or loads.
  const Resolved* uses = is_on(save) ? &save : is_on(load) ? &load : nullptr;
  if (!uses) return;
  auto ddp = switch_value(job, "ddp.use_megatron_fsdp");
  auto dist = switch_value(job, "dist.use_megatron_fsdp");
  Resolved torch = resolve(job, "dist.use_torch_fsdp2");
  bool megatron_on = ddp.value_or(false) || dist.value_or(false);
  bool megatron_off = ddp == false && dist == false;
  if (megatron_on && !is_on(torch)) return;
  if (!megatron_on && !megatron_off) return;
  Resolved fsdp = resolve(job, "ddp.use_megatron_fsdp");
  Diagnostic diag =
      megatron_on ? finding(kFsdpDtensorWithoutMegatronFsdp,
                            "ckpt_format fsdp_dtensor with Torch FSDP2: Megatron Bridge asserts \"fsdp_dtensor "
                            "checkpoint format only supports Megatron FSDP\"",
                            {&format, &torch, uses})
                  : finding(kFsdpDtensorWithoutMegatronFsdp,
                            "ckpt_format fsdp_dtensor without Megatron-FSDP: Megatron Bridge asserts \"fsdp_dtensor "
                            "checkpoint format only supports Megatron FSDP\" when the job saves or loads",
                            {&format, uses, &fsdp});
  report(out, std::move(diag),
         megatron_on ? "turn dist.use_torch_fsdp2 off" : "use ckpt_format torch_dist, or turn Megatron-FSDP on");
}

}  // namespace

extern const RuleInfo kFsdpDtensorWithoutMegatronFsdp = {
    .code = "MB966",
    .name = "fsdp-dtensor-without-megatron-fsdp",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "checkpoint format fsdp_dtensor without Megatron-FSDP",
    .doc = R"md(`ckpt_format: fsdp_dtensor` writes Megatron-FSDP's sharded DTensor state and nothing else can
produce it. Megatron Bridge's `ConfigContainer.validate()` asserts "fsdp_dtensor checkpoint format
only supports Megatron FSDP" when the job saves or loads a checkpoint (`checkpoint.save` or
`checkpoint.load` set) and Megatron-FSDP is off, or Torch FSDP2 is on. The job stops at start-up.

Megatron Bridge's library recipes save to `nemo_experiments/default/checkpoints` by default, so a
recipe-based job saves unless `checkpoint.save` and `checkpoint.load` are set to null.)md",
    .bad = {"override.yaml", "checkpoint:\n  ckpt_format: fsdp_dtensor\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "checkpoint:\n  ckpt_format: torch_dist\n"},
    .check = check,
    .checks = "BR V21",
};

}  // namespace mblint
