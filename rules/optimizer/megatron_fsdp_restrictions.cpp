// Megatron-FSDP shards parameters, gradients and optimizer state with its
// own buffers: it checkpoints only in its own format and (Megatron-LM) runs
// only Adam or SGD.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMegatronFsdpRestrictions;

namespace {

// Bridge checks the format only when the job saves or loads a checkpoint.
std::optional<bool> uses_checkpoints(const Job& job) {
  if (job.dialect == Dialect::MegatronLM) return true;
  Choice save = read_choice(job, "checkpoint.save");
  Choice load = read_choice(job, "checkpoint.load");
  if (save.is_set() || load.is_set()) return true;
  if (save.known && load.known) return false;
  return std::nullopt;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Setting fsdp = megatron_fsdp(job);
  if (!fsdp.value.value_or(false)) return;
  // Megatron Bridge's experimental FSDP v2 has a contract of its own.
  Quantity version = config_int(job, "ddp.megatron_fsdp_version");
  if (version.known() && *version == 2) return;
  Choice format = read_choice(job, "checkpoint.ckpt_format");
  if (format.is_set() && *format.value != "fsdp_dtensor" && uses_checkpoints(job).value_or(false)) {
    bool format_written = span_for(format).valid() && !format.defaulted;
    Diagnostic diag = make_diagnostic(
        kMegatronFsdpRestrictions,
        fmt::format("Megatron-FSDP requires the fsdp_dtensor checkpoint format, not {}", *format.value),
        first_span(job, {format_written ? span_for(format) : span_for(fsdp)}));
    diag.notes.push_back(format_written ? note_for(fsdp) : note_for(format));
    report(out, std::move(diag),
           for_dialect(job, "set checkpoint.ckpt_format to fsdp_dtensor", "pass --ckpt-format fsdp_dtensor"),
           {text_fix(job, format, "fsdp_dtensor")});
  }
  if (job.dialect != Dialect::MegatronLM) return;
  Choice optimizer = read_choice(job, "optimizer.optimizer");
  if (optimizer.is_set() && *optimizer.value != "adam" && *optimizer.value != "sgd") {
    Diagnostic diag = make_diagnostic(
        kMegatronFsdpRestrictions,
        fmt::format("Megatron-FSDP does not support the {} optimizer (only adam and sgd)", *optimizer.value),
        first_span(job, {span_for(optimizer), span_for(fsdp)}));
    diag.notes.push_back(note_for(fsdp));
    report(out, std::move(diag), "use --optimizer adam, or drop --use-megatron-fsdp",
           {text_fix(job, optimizer, "adam")});
  }
}

}  // namespace

extern const RuleInfo kMegatronFsdpRestrictions = {
    .code = "MB906",
    .name = "megatron-fsdp-restrictions",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "Megatron-FSDP with a checkpoint format other than fsdp_dtensor, or (Megatron-LM) an optimizer other than adam/sgd",
    .doc = R"md(Megatron-FSDP (`use_megatron_fsdp` in `dist` or `ddp`, `--use-megatron-fsdp`) keeps its own
sharded buffers. It switches the distributed optimizer on by itself (a message, not an error).

* Its checkpoints are written only in the `fsdp_dtensor` format. Megatron-LM asserts "Megatron-FSDP
  requires the `fsdp_dtensor` checkpointing format." (the Megatron-LM default is `torch_dist`);
  Megatron Bridge asserts "Megatron-FSDP requires the fsdp_dtensor checkpointing format!" when the
  job saves or loads (`checkpoint.save` / `checkpoint.load`).
* Megatron-LM also asserts the optimizer is `adam` or `sgd` ("Megatron-FSDP does not support the ...
  optimizer yet").

Megatron Bridge's experimental FSDP v2 (`ddp.megatron_fsdp_version: 2`), single grouped MoE weights,
meta-device initialisation, `CUDA_DEVICE_MAX_CONNECTIONS=1` and the other Bridge-only FSDP checks
are reported by their own rules.)md",
    .bad = {"override.yaml",
     "ddp:\n  use_megatron_fsdp: true\ncheckpoint:\n  save: /checkpoints/run1\n  ckpt_format: torch_dist\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "ddp:\n  use_megatron_fsdp: true\ncheckpoint:\n  save: /checkpoints/run1\n  ckpt_format: fsdp_dtensor\n"},
    .check = check,
    .checks = "MC K4",
};

}  // namespace mblint
