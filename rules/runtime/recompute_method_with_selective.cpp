// recompute_method picks which layers full recompute covers; selective
// recompute never reads it. Megatron-LM rejects the combination, Megatron
// Bridge ignores the method.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kRecomputeMethodWithSelective;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  Choice method = read_choice(job, "model.recompute_method");
  if (!granularity.is("selective") || !method.is_set()) return;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  bool method_last = rank_of(method.where) >= rank_of(granularity.where);
  Diagnostic diag = make_diagnostic(
      kRecomputeMethodWithSelective,
      megatron_lm ? fmt::format("recompute_method {} with recompute_granularity selective: Megatron-LM rejects it "
                                "(a method is only for full recompute)",
                                *method.value)
                  : fmt::format("recompute_method {} does nothing with recompute_granularity selective (a method is "
                                "only for full recompute)",
                                *method.value),
      first_span(job, {method_last ? span_for(method) : span_for(granularity)}));
  if (!megatron_lm) diag.severity = Severity::Warning;
  diag.notes.push_back(method_last ? note_for(granularity) : note_for(method));
  report(out, std::move(diag), "remove recompute_method, or use recompute_granularity full with recompute_num_layers",
         {unset_fix(job, method.path, method.where, FixSafety::Safe)});
}

}  // namespace

extern const RuleInfo kRecomputeMethodWithSelective = {
    .code = "MB802",
    .name = "recompute-method-with-selective",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "recompute_method is only for full recompute: Megatron-LM rejects it with selective, Bridge ignores it",
    .doc = R"md(`recompute_method` (`uniform` or `block`) chooses which layers full recompute checkpoints.
Selective recompute checkpoints the submodules in `recompute_modules` in every layer and never
reads the method.

* **Megatron-LM**: `validate_args` asserts "recompute method is not yet supported for selective
  recomputing granularity": the job stops at start-up (error).
* **Megatron Bridge** (and NeMo): nothing checks it; the method is silently ignored (warning),
  and the config says something the run does not do.

Removing the method is safe: it changes nothing about the run.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: selective\n  recompute_method: uniform\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  recompute_method: null\n"},
    .check = check,
    .checks = "MC I4",
};

}  // namespace mblint
