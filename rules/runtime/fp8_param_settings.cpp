// Keeping parameters in FP8 (fp8_param, set together with fp8_param_gather)
// needs FP8 training; Megatron-LM also needs a sharded optimizer to gather
// FP8 parameters into.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp8ParamSettings;

namespace {

void without_fp8(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Setting& param = p.fp8_param.value.value_or(false) ? p.fp8_param : p.fp8_param_gather;
  if (!param.value.value_or(false) || !p.fp8.is_none()) return;
  std::string name = for_dialect(job, param.name, "--fp8-param-gather");
  Diagnostic diag = make_diagnostic(kFp8ParamSettings,
                                    fmt::format("{} keeps parameters in FP8, but fp8 is None (no FP8 training)", name),
                                    first_span(job, {span_for(param), span_for(p.fp8)}));
  diag.notes.push_back(note_for(p.fp8));
  report(out, std::move(diag),
         for_dialect(job, fmt::format("set {} to false, or turn FP8 on (fp8: hybrid)", name),
                     "drop --fp8-param-gather, or pass --fp8-format hybrid"),
         {flag_fix(job, param, false)});
}

// Megatron-LM only: validate_args asserts FP8 parameter gathering has a
// distributed optimizer or FSDP to gather into.
void without_sharding(const RuleContext& context, const Precision& p, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::MegatronLM || !job.trains || !p.fp8_param_gather.value.value_or(false)) return;
  Setting dist_opt = either_flag(job, "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer");
  Setting fsdp2 = read_flag(job, "dist.use_torch_fsdp2");
  Setting mfsdp = either_flag(job, "dist.use_megatron_fsdp", "ddp.use_megatron_fsdp");
  for (const Setting* s : {&dist_opt, &fsdp2, &mfsdp}) {
    if (!s->value || *s->value) return;
  }
  Diagnostic diag = make_diagnostic(kFp8ParamSettings,
                                    "--fp8-param-gather needs the distributed optimizer, torch FSDP2 or Megatron-FSDP; "
                                    "Megatron-LM rejects it without",
                                    first_span(job, {span_for(p.fp8_param_gather)}));
  diag.notes.push_back(note_for(dist_opt));
  report(out, std::move(diag), "pass --use-distributed-optimizer, or drop --fp8-param-gather",
         {flag_fix(job, dist_opt, true), flag_fix(job, p.fp8_param_gather, false)});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Precision& p = effective_precision(context);
  without_fp8(context, p, out);
  without_sharding(context, p, out);
}

}  // namespace

extern const RuleInfo kFp8ParamSettings = {
    .code = "MB819",
    .name = "fp8-param-settings",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "FP8 parameters without FP8 training, or (Megatron-LM) FP8 parameter gather without a sharded optimizer",
    .doc = R"md(`fp8_param` keeps the weights in FP8 (Megatron Bridge keeps it equal to `fp8_param_gather`, which
also all-gathers them in FP8; Megatron-LM's `--fp8-param-gather` sets both).

* Without FP8 training (`fp8` None) Megatron-Core's `TransformerConfig` raises "fp8_param must be
  used together with fp8 mode." (every release). Under Megatron Bridge the values come from
  `mixed_precision` when it is set, e.g. `fp8_param_gather: true` added to `bf16_mixed`.
* **Megatron-LM** also asserts "--fp8-param-gather only supported with distributed optimizer, torch
  fsdp2, megatron fsdp, or inference mode" (`validate_args`). Megatron Bridge's FP8 presets all
  gather FP8 parameters and its recipes use the distributed optimizer; Bridge does not make this
  check.)md",
    .bad = {"override.yaml",
     "mixed_precision:\n  fp8_param_gather: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "mixed_precision:\n  fp8: hybrid\n  fp8_param_gather: true\n"},
    .check = check,
    .checks = "MC J6",
};

}  // namespace mblint
