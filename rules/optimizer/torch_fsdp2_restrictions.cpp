// PyTorch FSDP2 (use_torch_fsdp2) shards parameters itself and supports
// only plain data parallelism around tensor/context parallelism.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kTorchFsdp2Restrictions;

namespace {

struct Finding {
  std::string message;
  Note note;
  std::string help;
  std::vector<Fix> fixes;
};

void collect_common(const RuleContext& context, std::vector<Finding>& found) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (splits(d.pipeline_parallel)) {
    found.push_back({fmt::format("torch FSDP2 does not support pipeline parallelism (pipeline_model_parallel_size {})",
                                 *d.pipeline_parallel),
                     note_for(d.pipeline_parallel), "use pipeline_model_parallel_size 1, or Megatron-FSDP",
                     {set_value_fix(d.pipeline_parallel, 1)}});
  }
  if (splits(d.expert_parallel)) {
    found.push_back({fmt::format("torch FSDP2 does not support expert parallelism (expert_model_parallel_size {})",
                                 *d.expert_parallel),
                     note_for(d.expert_parallel), "use expert_model_parallel_size 1, or Megatron-FSDP",
                     {set_value_fix(d.expert_parallel, 1)}});
  }
  Setting dist = either_flag(job, "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer");
  if (dist.value.value_or(false)) {
    // Bridge reads both switches: the fix turns off each one that is on
    // (Megatron-LM's one flag writes both).
    std::vector<Fix> parts;
    for (std::string_view path : {"ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"}) {
      Setting s = read_flag(job, path);
      if (s.value.value_or(false)) parts.push_back(flag_fix(job, s, false));
    }
    Fix fix = job.dialect == Dialect::MegatronLM || parts.size() < 2
                  ? flag_fix(job, dist, false)
                  : combined_fix("set ddp.use_distributed_optimizer and optimizer.use_distributed_optimizer to false",
                                 parts);
    found.push_back({"torch FSDP2 does not work with Megatron's distributed optimizer (FSDP2 shards the optimizer "
                     "state itself)",
                     note_for(dist), "set use_distributed_optimizer to false", {fix}});
  }
  const Precision& p = effective_precision(context);
  if (p.fp16.value.value_or(false)) {
    found.push_back({"torch FSDP2 does not support fp16 training", note_for(p.fp16), "train in bf16", {}});
  }
}

// Megatron-LM's validate_args asserts three more.
void collect_megatron_lm(const RuleContext& context, std::vector<Finding>& found) {
  const Job& job = context.job;
  Setting fusion = read_flag(job, "model.gradient_accumulation_fusion");
  if (fusion.value.value_or(false)) {
    found.push_back({"--use-torch-fsdp2 is not supported with gradient accumulation fusion (on by default)",
                     note_for(fusion), "pass --no-gradient-accumulation-fusion", {flag_fix(job, fusion, false)}});
  }
  Choice format = read_choice(job, "checkpoint.ckpt_format");
  if (format.is_set() && *format.value != "torch_dist" && *format.value != "torch_dcp") {
    found.push_back({fmt::format("--use-torch-fsdp2 requires --ckpt-format torch_dist or torch_dcp, not {}",
                                 *format.value),
                     note_for(format), "pass --ckpt-format torch_dcp", {text_fix(job, format, "torch_dcp")}});
  }
  Setting tied = read_flag(job, "model.share_embeddings_and_output_weights");
  if (tied.value.value_or(false)) {
    found.push_back({"--use-torch-fsdp2 requires --untie-embeddings-and-output-weights", note_for(tied),
                     "pass --untie-embeddings-and-output-weights", {}});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Setting fsdp2 = read_flag(job, "dist.use_torch_fsdp2");
  if (!fsdp2.value.value_or(false)) return;
  std::vector<Finding> found;
  collect_common(context, found);
  if (job.dialect == Dialect::MegatronLM) collect_megatron_lm(context, found);
  for (Finding& f : found) {
    Diagnostic diag = make_diagnostic(kTorchFsdp2Restrictions, std::move(f.message), first_span(job, {span_for(fsdp2)}));
    if (f.note.where.valid() || !f.note.message.empty()) diag.notes.push_back(std::move(f.note));
    diag.help = std::move(f.help);
    diag.fixes = std::move(f.fixes);
    diag.fixes.push_back(flag_fix(job, fsdp2, false));
    out.push_back(std::move(diag));
  }
}

}  // namespace

extern const RuleInfo kTorchFsdp2Restrictions = {
    .code = "MB905",
    .name = "torch-fsdp2-restrictions",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "torch FSDP2 with pipeline or expert parallelism, the distributed optimizer, fp16 (and Megatron-LM's extra limits)",
    .doc = R"md(`dist.use_torch_fsdp2` (`--use-torch-fsdp2`) wraps the model in PyTorch's FSDP2, which shards
parameters, gradients and optimizer state by itself.

* **Megatron-LM** `validate_args` asserts that there is no pipeline parallelism ("--use-torch-fsdp2
  is not supported with pipeline parallelism"), no expert parallelism, no distributed optimizer
  ("... not supported with MCore's distributed optimizer"), no gradient-accumulation fusion (on by
  default: pass `--no-gradient-accumulation-fusion`), `--ckpt-format torch_dist` or `torch_dcp`,
  untied embeddings and no fp16.
* **Megatron Bridge** does not check these before start-up; NVIDIA's Megatron-FSDP notes report
  FSDP2 failing at run time with pipeline or expert parallelism, the distributed optimizer and fp16.
  Those four are reported for Bridge too.

FSDP2 also refuses `CUDA_DEVICE_MAX_CONNECTIONS=1`, which the environment rules report.)md",
    .bad = {"override.yaml",
     "dist:\n  use_torch_fsdp2: true\nddp:\n  use_distributed_optimizer: false\noptimizer:\n"
     "  use_distributed_optimizer: false\nmodel:\n  pipeline_model_parallel_size: 2\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "dist:\n  use_torch_fsdp2: true\nddp:\n  use_distributed_optimizer: false\noptimizer:\n"
     "  use_distributed_optimizer: false\n"},
    .check = check,
    .checks = "MC K3",
};

}  // namespace mblint
