// Saving a distributed optimizer in the legacy checkpoint format gathers the
// sharded state on data-parallel rank 0 through Gloo (CPU) process groups.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kGlooGroupsRequired;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Setting gloo = read_flag(job, "dist.use_gloo_process_groups");
  if (!gloo.value || *gloo.value) return;
  Setting dist = distributed_optimizer(job);
  if (!dist.value.value_or(false)) return;
  Choice format = read_choice(job, "checkpoint.ckpt_format");
  if (!format.is_set()) return;
  bool legacy = job.dialect == Dialect::MegatronLM ? *format.value == "torch"
                                                   : *format.value != "torch_dist" && *format.value != "fsdp_dtensor";
  if (!legacy) return;
  Diagnostic diag = make_diagnostic(
      kGlooGroupsRequired,
      fmt::format("checkpoint format {} with the distributed optimizer needs Gloo process groups, but "
                  "use_gloo_process_groups is false",
                  *format.value),
      first_span(job, {rank_of(format.where) > rank_of(gloo.where) ? span_for(format) : span_for(gloo)}));
  diag.notes.push_back(rank_of(format.where) > rank_of(gloo.where) ? note_for(gloo) : note_for(format));
  diag.notes.push_back(note_for(dist));
  report(out, std::move(diag), "use ckpt_format torch_dist (distributed checkpointing), or keep Gloo process groups",
         {text_fix(job, format, "torch_dist"), flag_fix(job, gloo, true)});
}

}  // namespace

extern const RuleInfo kGlooGroupsRequired = {
    .code = "MB907",
    .name = "gloo-groups-required",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "the distributed optimizer with a legacy checkpoint format needs Gloo process groups",
    .doc = R"md(A legacy (non-distributed) checkpoint of the distributed optimizer collects the whole sharded
optimizer state in the CPU memory of data-parallel rank 0, over Gloo process groups. With
`use_gloo_process_groups: false` (`--disable-gloo-process-groups`) and the distributed optimizer:

* **Megatron-LM** asserts distributed checkpointing (any `--ckpt-format` but `torch`);
* **Megatron Bridge**'s `ConfigContainer.validate()` asserts "Legacy checkpointing requires
  ckpt_format='torch_dist' or 'fsdp_dtensor'".

The job stops at start-up.)md",
    .bad = {"override.yaml",
     "dist:\n  use_gloo_process_groups: false\ncheckpoint:\n  ckpt_format: torch\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "dist:\n  use_gloo_process_groups: false\ncheckpoint:\n  ckpt_format: torch_dist\n"},
    .check = check,
    .checks = "MC K5",
};

}  // namespace mblint
