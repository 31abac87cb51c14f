// A warm-up as long as the decay leaves no decay: Megatron Bridge caps the
// warm-up one step short of the decay length and carries on.
#include "rules/support/batch_support.h"

#include <algorithm>
#include <cmath>

namespace mblint {

extern const RuleInfo kLrWarmupExceedsDecay;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (context.job.dialect != Dialect::Bridge) return;
  SchedulerSteps steps = scheduler_steps(context);
  if (!steps.decay || !steps.warmup || *steps.decay <= 0 || *steps.warmup < *steps.decay) return;
  if (steps.warmup_inputs.empty()) return;
  std::vector<const Quantity*> inputs;
  for (const Quantity& q : steps.warmup_inputs) inputs.push_back(&q);
  for (const Quantity& q : steps.decay_inputs) inputs.push_back(&q);
  const Quantity* primary = inputs.front();  // the warm-up setting itself, unless something later was written
  for (const Quantity* q : inputs) {
    if (span_for(*q).valid() && layer_rank(q->where.layer) > layer_rank(primary->where.layer)) primary = q;
  }
  if (!span_for(*primary).valid()) primary = inputs.front();
  Diagnostic diag = make_diagnostic(
      kLrWarmupExceedsDecay,
      fmt::format("the learning-rate warm-up ({} samples: {}) is not shorter than the decay ({} samples: {}): "
                  "Megatron Bridge caps the warm-up at {} and the learning rate barely decays",
                  format_number(*steps.warmup), steps.warmup_how, format_number(*steps.decay), steps.decay_how,
                  format_number(*steps.decay - 1)),
      span_for(*primary));
  for (const Quantity* q : inputs) {
    if (q == primary || !span_for(*q).valid()) continue;
    bool duplicate = std::any_of(diag.notes.begin(), diag.notes.end(),
                                 [&](const Note& n) { return n.where == span_for(*q) && n.message == note_for(*q).message; });
    if (!duplicate) diag.notes.push_back(note_for(*q));
  }
  add_notes(diag, {}, primary);
  const Quantity& warmup = steps.warmup_inputs.front();
  if (warmup.name == "lr_warmup_fraction") {
    diag.help = "use an lr_warmup_fraction well below 1 (e.g. 0.01)";
  } else {
    double per_unit = steps.unit == TrainingUnit::Iterations && context.derived.global_batch_size.known()
                          ? static_cast<double>(*context.derived.global_batch_size)
                          : 1.0;
    auto suggestion = static_cast<int64_t>(std::max(1.0, std::floor(*steps.decay / per_unit / 10)));
    diag.help = fmt::format("shorten {} (e.g. {}, a tenth of the decay), or lengthen the run / the decay", warmup.name,
                            suggestion);
    diag.fixes.push_back(set_value_fix(warmup, suggestion));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kLrWarmupExceedsDecay = {
    .code = "MB611",
    .name = "lr-warmup-exceeds-decay",
    .group = RuleGroup::Batch,
    .severity = Severity::Warning,
    .summary = "the learning-rate warm-up is as long as the decay (Megatron Bridge caps it silently)",
    .doc = R"md(Megatron-Core's learning-rate scheduler asserts the warm-up is shorter than the decay
(`OptimizerParamScheduler`: `lr_warmup_steps < lr_decay_steps`). Megatron Bridge
computes both in samples at start-up (`lr_warmup_steps = lr_warmup_iters x global_batch_size`,
or `lr_warmup_fraction x lr_decay_steps`; `lr_decay_steps = lr_decay_iters x
global_batch_size`, with `lr_decay_iters` defaulting to `max_steps` or `train_iters`) and, when
the warm-up is not shorter, only warns "lr_warmup_steps (...) >= lr_decay_steps (...); capping
lr_warmup_steps to ..." and carries on. The learning rate then climbs for the whole run and
never decays: typically a short smoke run (`train_iters: 100`) on a recipe tuned for a long one
(`lr_warmup_iters: 500`). (Megatron-LM does not cap: its scheduler asserts.)

mblint needs the warm-up and decay lengths to be known: the recipes' `lr_warmup_iters` is not in
its catalog, so write it next to a shortened `train_iters`.)md",
    .bad = {"override.yaml", "train:\n  train_iters: 100\nscheduler:\n  lr_warmup_iters: 500\n  lr_decay_iters: null\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  train_iters: 100\nscheduler:\n  lr_warmup_iters: 10\n  lr_decay_iters: null\n"},
    .check = check,
    .checks = "BR sched warmup >= decay, PS 94",
};

}  // namespace mblint
