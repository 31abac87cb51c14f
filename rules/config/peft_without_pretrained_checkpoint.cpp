// PEFT trains adapters on top of pretrained weights, which must be named.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kPeftWithoutPretrainedCheckpoint;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  const ConfigValue* peft = find_path(job.config, "peft");
  if (!peft || peft->is_null() || peft->is_unknown()) return;
  // Only a PEFT section the user wrote: the PEFT recipes leave the
  // checkpoint for the user to pass, and are right to.
  if (!written_by_user(peft->where)) return;
  Resolved checkpoint = resolve(job, "checkpoint.pretrained_checkpoint");
  if (!checkpoint.known() || !checkpoint.value->is_null()) return;
  if (!job.config_complete && !written_by_user(checkpoint.where())) return;
  Resolved section;
  section.path = "peft";
  section.value = *peft;
  // Point at the `peft:` key rather than the start of its block.
  if (peft->where.key.valid() && !peft->where.statement.valid()) section.value->where.statement = peft->where.key;
  Diagnostic diag = finding(kPeftWithoutPretrainedCheckpoint,
                            "peft is set but checkpoint.pretrained_checkpoint is null: Megatron Bridge asserts "
                            "\"PEFT requires a pretrained checkpoint path\"",
                            {&checkpoint, &section});
  if (!diag.where.valid()) diag.where = first_span(*peft);
  report(out, std::move(diag),
         "set checkpoint.pretrained_checkpoint to the converted Megatron checkpoint of the base model");
}

}  // namespace

extern const RuleInfo kPeftWithoutPretrainedCheckpoint = {
    .code = "MB969",
    .name = "peft-without-pretrained-checkpoint",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "PEFT without checkpoint.pretrained_checkpoint",
    .doc = R"md(LoRA and the other PEFT methods train small adapters on frozen base weights, which come from
`checkpoint.pretrained_checkpoint`. Megatron Bridge's `ConfigContainer.validate()` asserts "PEFT
requires a pretrained checkpoint path" when `peft` is set and the path is null; the job stops at
start-up.

Megatron Bridge's PEFT recipes leave the path empty for the user to fill in (usually with
`--pretrained_checkpoint` or `checkpoint.pretrained_checkpoint=...`), so a recipe alone is not
reported. mblint reports a `peft` section the user wrote together with a
`pretrained_checkpoint` the user set to null, and dumps. Whether the path exists is checked by
`CheckpointConfig.finalize()` at run time and cannot be seen from the files.)md",
    .bad = {"override.yaml", "peft:\n  dim: 8\n  alpha: 16\ncheckpoint:\n  pretrained_checkpoint: null\n",
     "override.yaml --recipe llama32_1b_peft_config --nodes 1 --gpus-per-node 1"},
    .good = {.content = "peft:\n  dim: 8\n  alpha: 16\ncheckpoint:\n  pretrained_checkpoint: /models/llama32_1b\n"},
    .check = check,
    .checks = "BR V25",
};

}  // namespace mblint
