// The learning-rate decay must span at least one step: max_steps positive
// and not shorter than the run, lr_decay_steps above 0.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kSchedulerStepsInvalid;

namespace {

// scheduler.max_steps: the length the schedules are laid out for when a
// short test run (train_iters) is cut from a longer one.
bool check_max_steps(const Job& job, std::vector<Diagnostic>& out) {
  Field max_steps = read_field(job, "scheduler.max_steps");
  if (!max_steps.set() || !max_steps.number) return false;
  if (*max_steps.number <= 0) {
    report(out,
           finding_at(kSchedulerStepsInvalid,
                      fmt::format("scheduler.max_steps is {}; it must be positive", max_steps.quantity.display),
                      max_steps.quantity, {}),
           "set max_steps to the length of the full run the schedule is laid out for, or to null",
           {set_null_fix(max_steps.quantity)});
    return true;
  }
  Field iters = read_field(job, "train.train_iters");
  if (training_unit(job) != TrainingUnit::Iterations || !iters.set() || !iters.number) return false;
  if (*max_steps.number >= *iters.number) return false;
  Diagnostic diag =
      finding(kSchedulerStepsInvalid,
              fmt::format("scheduler.max_steps {} is shorter than train_iters {}: Megatron Bridge rejects "
                          "a schedule that ends before the run",
                          max_steps.quantity.display, iters.quantity.display),
              {&max_steps.quantity, &iters.quantity});
  diag.help = "set max_steps to at least train_iters (it is the full run's length; train_iters may stop early)";
  if (iters.quantity.value) diag.fixes.push_back(set_value_fix(max_steps.quantity, *iters.quantity.value));
  out.push_back(std::move(diag));
  return true;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  if (check_max_steps(job, out)) return;
  SchedulerSteps steps = scheduler_steps(context);
  if (!steps.decay || *steps.decay > 0 || steps.decay_inputs.empty()) return;
  const Quantity& gbs = context.derived.global_batch_size;
  if (steps.unit == TrainingUnit::Iterations && gbs.known() && *gbs <= 0) return;  // batch-size-not-positive
  const Quantity& source = steps.decay_inputs.front();
  if (source.name == "train_iters" || source.name == "train_samples") {
    if (source.value && *source.value <= 0) return;  // training-length-invalid / the run itself
  }
  const Quantity* primary = &steps.decay_inputs.front();
  for (const Quantity& q : steps.decay_inputs) {
    if (&most_specific({primary, &q}) == &q) primary = &q;
  }
  Diagnostic diag = make_diagnostic(
      kSchedulerStepsInvalid,
      fmt::format("the learning-rate decay spans {} samples ({}); Megatron Bridge needs lr_decay_steps > 0",
                  format_number(*steps.decay), steps.decay_how),
      span_for(*primary));
  for (const Quantity& q : steps.decay_inputs) {
    if (&q != primary && span_for(q).valid()) diag.notes.push_back(note_for(q));
  }
  add_notes(diag, {}, primary);
  report(out, std::move(diag),
         fmt::format("set {} to a positive count, or to null to decay over the whole run", source.name),
         {set_null_fix(source)});
}

}  // namespace

extern const RuleInfo kSchedulerStepsInvalid = {
    .code = "MB610",
    .name = "scheduler-steps-invalid",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "the learning-rate schedule length is not positive, or max_steps is shorter than the run",
    .doc = R"md(Megatron Bridge lays the learning-rate and weight-decay schedules out at start-up
(`SchedulerConfig.finalize`, `ConfigContainer._calculate_scheduler_steps`) and raises when

* `scheduler.max_steps` is 0 or negative ("scheduler.max_steps must be positive");
* `scheduler.max_steps` is below `train.train_iters` ("scheduler.max_steps (...) must be greater
  than or equal to train.train_iters (...)"): `max_steps` is meant for a short run cut from a
  longer one, so it keeps the full run's schedule;
* the decay spans no samples: `lr_decay_steps = lr_decay_iters x global_batch_size` (or
  `max_steps x ...`, or `train_iters x ...` when neither is set; in samples: `lr_decay_samples`,
  else `train_samples`) is 0 or less ("lr_decay_steps must be > 0, got ...").)md",
    .bad = {"override.yaml", "train:\n  train_iters: 1000\nscheduler:\n  max_steps: 500\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  train_iters: 1000\nscheduler:\n  max_steps: 5000\n"},
    .check = check,
    .checks = "BR sched max_steps, BR sched decay steps",
};

}  // namespace mblint
