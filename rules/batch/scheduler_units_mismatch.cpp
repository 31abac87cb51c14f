// The learning-rate schedule is counted in the training's unit: iteration
// fields for train_iters, sample fields for train_samples, never both, and
// lr_warmup_fraction instead of (not with) a warm-up count.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kSchedulerUnitsMismatch;

namespace {

struct Schedule {
  Field decay_iters, warmup_iters, wsd_iters;
  Field decay_samples, warmup_samples, wsd_samples;
  Field fraction, max_steps;
};

Schedule read_schedule(const Job& job) {
  return {read_field(job, "scheduler.lr_decay_iters"),     read_field(job, "scheduler.lr_warmup_iters"),
          read_field(job, "scheduler.lr_wsd_decay_iters"), read_field(job, "scheduler.lr_decay_samples"),
          read_field(job, "scheduler.lr_warmup_samples"),  read_field(job, "scheduler.lr_wsd_decay_samples"),
          read_field(job, "scheduler.lr_warmup_fraction"), read_field(job, "scheduler.max_steps")};
}

// Set to something other than its "unset" value (None, or 0 for warm-up counts).
bool given(const Field& f) {
  bool count = f.quantity.name == "lr_warmup_iters" || f.quantity.name == "lr_warmup_samples";
  return count ? f.set_to_other_than(0) : f.set();
}

void mismatch(const Field& offending, const Quantity* reason, std::string message, std::string help,
              std::vector<Diagnostic>& out) {
  Diagnostic diag = finding_at(kSchedulerUnitsMismatch, std::move(message), offending.quantity, {});
  if (reason && (span_for(*reason).valid() || !reason->how.empty())) diag.notes.push_back(note_for(*reason));
  report(
      out, std::move(diag), std::move(help),
      {offending.quantity.name.find("warmup_") != std::string::npos && offending.quantity.name != "lr_warmup_fraction"
           ? set_value_fix(offending.quantity, 0)
           : set_null_fix(offending.quantity)});
}

// Each field of the wrong unit, against the field that fixes the unit.
bool check_unit(const Schedule& s, const Field& iters, const Field& samples, bool megatron_lm,
                std::vector<Diagnostic>& out) {
  bool sample_based = megatron_lm ? samples.set() && samples.number.value_or(1) != 0 : samples.set();
  bool iteration_based = megatron_lm ? iters.set() && iters.number.value_or(1) != 0 : samples.unset();
  size_t before = out.size();
  const char* program = megatron_lm ? "Megatron-LM" : "Megatron Bridge";
  if (sample_based) {
    std::vector<std::pair<const Field*, const char*>> wrong = {{&s.decay_iters, "lr_decay_samples"},
                                                               {&s.warmup_iters, "lr_warmup_samples"}};
    if (!megatron_lm) wrong.push_back({&s.max_steps, "train_samples alone"});
    for (auto [field, instead] : wrong) {
      if (!given(*field)) continue;
      mismatch(*field, &samples.quantity,
               fmt::format("{} is an iteration count but training is sample-based (train_samples is set): {} rejects "
                           "it",
                           field->quantity.name, program),
               fmt::format("use {} instead", instead), out);
    }
  } else if (iteration_based) {
    for (auto [field, instead] : {std::pair{&s.decay_samples, "lr_decay_iters"},
                                  std::pair{&s.warmup_samples, "lr_warmup_iters"}}) {
      if (!given(*field)) continue;
      const Quantity& reason = megatron_lm ? iters.quantity : samples.quantity;
      mismatch(*field, &reason,
               fmt::format("{} is a sample count but training is iteration-based (train_samples is not set): {} "
                           "rejects it",
                           field->quantity.name, program),
               fmt::format("use {} instead", instead), out);
    }
  }
  return out.size() > before;
}

// SchedulerConfig.finalize: no iteration and sample fields together, even
// before the training unit is known.
void check_mixed(const Schedule& s, std::vector<Diagnostic>& out) {
  const Field* iteration = nullptr;
  const Field* sample = nullptr;
  for (const Field* f : {&s.decay_iters, &s.warmup_iters, &s.wsd_iters}) {
    if (!iteration && given(*f)) iteration = f;
  }
  for (const Field* f : {&s.decay_samples, &s.warmup_samples, &s.wsd_samples}) {
    if (!sample && given(*f)) sample = f;
  }
  if (!iteration || !sample) return;
  const Field& offending = &most_specific({&iteration->quantity, &sample->quantity}) == &sample->quantity ? *sample
                                                                                                          : *iteration;
  const Field& other = &offending == sample ? *iteration : *sample;
  mismatch(offending, &other.quantity,
           fmt::format("{} and {} mix iteration-based and sample-based scheduler fields: Megatron Bridge rejects the "
                       "scheduler config",
                       iteration->quantity.name, sample->quantity.name),
           "count the whole schedule in the training's unit: *_iters with train_iters, *_samples with train_samples",
           out);
}

void check_fraction(const Schedule& s, std::vector<Diagnostic>& out) {
  if (!s.fraction.set()) return;
  for (const Field* count : {&s.warmup_iters, &s.warmup_samples}) {
    if (!given(*count)) continue;
    Diagnostic diag = make_diagnostic(
        kSchedulerUnitsMismatch,
        fmt::format("lr_warmup_fraction {} and {} {} both give the warm-up: only one may be set",
                    s.fraction.quantity.display, count->quantity.name, count->quantity.display),
        span_for(most_specific({&s.fraction.quantity, &count->quantity})));
    const Quantity& primary = most_specific({&s.fraction.quantity, &count->quantity});
    add_notes(diag, {&s.fraction.quantity, &count->quantity}, &primary);
    report(out, std::move(diag), fmt::format("set {} to 0, or lr_warmup_fraction to null", count->quantity.name),
           {set_value_fix(count->quantity, 0), set_null_fix(s.fraction.quantity)});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect == Dialect::NeMo) return;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Schedule s = read_schedule(job);
  Field iters = read_field(job, "train.train_iters");
  Field samples = read_field(job, "train.train_samples");
  bool unit_problem = check_unit(s, iters, samples, megatron_lm, out);
  if (!megatron_lm && !unit_problem) check_mixed(s, out);
  check_fraction(s, out);
}

}  // namespace

extern const RuleInfo kSchedulerUnitsMismatch = {
    .code = "MB609",
    .name = "scheduler-units-mismatch",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "learning-rate schedule fields in the wrong unit, mixed units, or two warm-up settings",
    .doc = R"md(The learning-rate schedule is counted in the unit the training length is given in. Megatron
Bridge checks at start-up (`SchedulerConfig.finalize`, `_validate_training_scheduler_compatibility`):

* with `train.train_samples` (sample-based): no `lr_decay_iters`, no non-zero
  `lr_warmup_iters`, no `max_steps` ("Use lr_decay_samples for sample-based training, not
  lr_decay_iters", "scheduler.max_steps is only supported for iteration-based training");
* otherwise (iteration-based): no `lr_decay_samples`, no non-zero `lr_warmup_samples` ("Use
  lr_decay_iters for iteration-based training, not lr_decay_samples");
* never iteration and sample fields together ("Cannot mix iteration-based and sample-based
  scheduler fields");
* `lr_warmup_fraction` excludes a non-zero `lr_warmup_iters` / `lr_warmup_samples` ("Cannot
  specify lr_warmup_fraction=... with lr_warmup_iters=...").

Switching a recipe to `train_samples` therefore also means switching its scheduler: the recipes
set `lr_warmup_iters` (500 for pretraining, 50 for fine-tuning). Megatron-LM's `validate_args`
makes the same unit checks ("expected iteration-based learning rate decay", "can only specify
one of lr-warmup-fraction and lr-warmup-iters").)md",
    .bad = {"override.yaml", "scheduler:\n  lr_decay_samples: 1000000\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "scheduler:\n  lr_decay_iters: 1000\n"},
    .check = check,
    .checks = "BR sched units, BR sched warmup fraction",
};

}  // namespace mblint
