// distribute_saved_activations splits the checkpointed input of full
// recompute across the tensor-parallel group. Megatron-LM rejects it
// without TP, without full recompute and without a method, where Megatron
// Bridge silently does nothing with it. (Its conflict with sequence
// parallelism is distribute-saved-activations-with-sequence-parallel.)
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kDistributeSavedActivations;

namespace {

void push(const RuleContext& context, std::vector<Diagnostic>& out, const Setting& distribute, std::string message,
          Severity severity, std::vector<Note> notes, std::string help, std::vector<Fix> fixes) {
  Diagnostic diag = make_diagnostic(kDistributeSavedActivations, std::move(message),
                                    first_span(context.job, {span_for(distribute)}));
  diag.severity = severity;
  diag.notes = std::move(notes);
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Setting distribute = read_flag(job, "model.distribute_saved_activations");
  if (!distribute.value.value_or(false)) return;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  Choice method = read_choice(job, "model.recompute_method");
  const Quantity& tp = d.tensor_parallel;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Severity unsupported = megatron_lm ? Severity::Error : Severity::Warning;
  std::string consequence = megatron_lm ? "Megatron-LM rejects it" : "it does nothing";
  if (tp.known() && *tp <= 1) {
    push(context, out, distribute,
         fmt::format("distribute_saved_activations with tensor_model_parallel_size {}: there is no tensor-parallel "
                     "group to distribute across; {}",
                     *tp, consequence),
         unsupported, {note_for(tp)}, "set distribute_saved_activations to false",
         {flag_fix(job, distribute, false, FixSafety::Safe)});
    return;
  }
  if (granularity.known && !granularity.is("full")) {
    push(context, out, distribute,
         fmt::format("distribute_saved_activations only applies to full recompute, but recompute_granularity is {}; {}",
                     granularity.value ? *granularity.value : "None", consequence),
         unsupported, {note_for(granularity)}, "set distribute_saved_activations to false, or use full recompute",
         {flag_fix(job, distribute, false, FixSafety::Safe)});
    return;
  }
  if (megatron_lm && granularity.is("full") && method.is_none()) {
    push(context, out, distribute,
         "distribute_saved_activations needs a recompute_method (uniform or block); Megatron-LM rejects it", unsupported,
         {note_for(method)}, "pass --recompute-method uniform", {text_fix(job, method, "uniform")});
  }
}

}  // namespace

extern const RuleInfo kDistributeSavedActivations = {
    .code = "MB804",
    .name = "distribute-saved-activations",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "distribute_saved_activations without TP > 1 or full recompute: rejected by Megatron-LM, a no-op under Bridge",
    .doc = R"md(`distribute_saved_activations` splits the input that full recompute keeps for each checkpointed
group across the tensor-parallel ranks, to save memory. It needs something to split across and
something to split:

* **Megatron-LM** `validate_args` asserts TP > 1 ("can distribute recomputed activations only
  across tensor model parallel groups"), full granularity ("distributed recompute activations is
  only application to full recompute granularity") and a recompute method ("for distributed
  recompute activations to work you need to use a recompute method"): the job stops at start-up.
* **Megatron Bridge** does not make those checks: with TP = 1 the split is across one rank and
  with selective recompute (or none) the setting is never read, so it silently does nothing
  (warning; turning it off is safe). A missing method with full recompute is rejected by
  Megatron-Core for every program (`recompute-settings`).

Its conflict with sequence parallelism, which Megatron-Core rejects everywhere, is reported by
`distribute-saved-activations-with-sequence-parallel`.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: selective\n  distribute_saved_activations: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  distribute_saved_activations: false\n"},
    .check = check,
    .checks = "MC I3",
};

}  // namespace mblint
