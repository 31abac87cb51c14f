// Megatron-LM runs optimizers other than Adam and SGD (Muon, SOAP, Lion)
// with a layer-wise distributed optimizer of their own: it swaps
// --use-distributed-optimizer for it and rejects FSDP and the torch_dcp /
// fsdp_dtensor checkpoint formats.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kEmergingOptimizerDistributed;

namespace {

void push(const RuleContext& context, std::vector<Diagnostic>& out, const Choice& optimizer, Severity severity,
          std::string message, Note note, std::string help) {
  Diagnostic diag =
      make_diagnostic(kEmergingOptimizerDistributed, std::move(message), first_span(context.job, {span_for(optimizer)}));
  diag.severity = severity;
  diag.notes.push_back(std::move(note));
  report(out, std::move(diag), std::move(help));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  if (job.dialect != Dialect::MegatronLM || job.versions.megatron_core < Version{0, 18, 0}) return;
  Choice optimizer = read_choice(job, "optimizer.optimizer");
  if (!optimizer.is_set() || *optimizer.value == "adam" || *optimizer.value == "sgd") return;
  const std::string& name = *optimizer.value;
  Setting dist = read_flag(job, "ddp.use_distributed_optimizer");
  if (dist.value.value_or(false)) {
    push(context, out, optimizer, Severity::Warning,
         fmt::format("--optimizer {} with --use-distributed-optimizer: Megatron-LM swaps in the layer-wise "
                     "distributed optimizer, which shards whole layers rather than a flat buffer",
                     name),
         note_for(dist), "drop --use-distributed-optimizer to say what runs (the layer-wise optimizer is chosen anyway)");
  }
  // (Megatron-FSDP rejects such an optimizer earlier: megatron-fsdp-restrictions.)
  Setting fsdp2 = read_flag(job, "dist.use_torch_fsdp2");
  if (fsdp2.value.value_or(false)) {
    push(context, out, optimizer, Severity::Error, fmt::format("--optimizer {} does not support torch FSDP2", name),
         note_for(fsdp2), "use --optimizer adam with FSDP2, or drop --use-torch-fsdp2");
  }
  Choice format = read_choice(job, "checkpoint.ckpt_format");
  if (format.is_set() && *format.value != "torch" && *format.value != "torch_dist") {
    push(context, out, optimizer, Severity::Error,
         fmt::format("--optimizer {} supports only the torch and torch_dist checkpoint formats, not {}", name,
                     *format.value),
         note_for(format), "pass --ckpt-format torch_dist");
  }
}

}  // namespace

extern const RuleInfo kEmergingOptimizerDistributed = {
    .code = "MB908",
    .name = "emerging-optimizer-distributed",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "Megatron-LM with Muon/SOAP/Lion: the distributed optimizer is swapped, FSDP2 and other checkpoint formats rejected",
    .doc = R"md(From Megatron-Core 0.18, Megatron-LM's `validate_args` treats every optimizer other than `adam`
and `sgd` (`muon`, `soap`, `lion`, ...) as an "emerging" optimizer:

* `--use-distributed-optimizer` is silently replaced by the layer-wise distributed optimizer
  (warning: the run shards differently from what the flag says);
* torch FSDP2 is rejected ("Emerging optimizer does not support Torch-FSDP2 for now."; Megatron-FSDP
  rejects such an optimizer even earlier, see `megatron-fsdp-restrictions`);
* checkpoint formats other than `torch` and `torch_dist` are rejected ("Emerging optimizer supports
  torch and torch_dist checkpoint format.").

Megatron Bridge chooses the layer-wise optimizer from the optimizer's name (`dist_muon`) instead
and makes none of these checks, so the rule is silent there.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --optimizer muon --use-distributed-optimizer "
     "--ckpt-format fsdp_dtensor\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --optimizer muon --ckpt-format torch_dist\n"},
    .check = check,
    .checks = "MC K6",
};

}  // namespace mblint
