// The weight-decay schedule goes from start_weight_decay to
// end_weight_decay: both set, the start not negative, the end not below it,
// and equal for the constant style.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kWeightDecayScheduleInvalid;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  Field start = read_field(job, "scheduler.start_weight_decay");
  Field end = read_field(job, "scheduler.end_weight_decay");
  if (start.unset() || (start.set() && end.unset())) {
    const Field& missing = start.unset() ? start : end;
    // Only a null that is written: a trimmed dump that leaves the field out
    // says nothing about it.
    if (!config_node(job, missing.quantity.path)) return;
    report(out,
           finding_at(kWeightDecayScheduleInvalid,
                      fmt::format("{} is null: Megatron-Core's parameter scheduler compares it with {} and "
                                  "fails at start-up",
                                  missing.quantity.name, start.unset() ? "0" : "start_weight_decay"),
                      missing.quantity, {}),
           "set start_weight_decay and end_weight_decay (equal for a constant weight decay, e.g. "
           "0.1 and 0.1)");
    return;
  }
  if (!start.set() || !start.number) return;
  if (*start.number < 0) {
    report(out,
           finding_at(kWeightDecayScheduleInvalid,
                      fmt::format("start_weight_decay is {}; it must not be negative", start.quantity.display),
                      start.quantity, {}),
           "use a weight decay of 0 or more");
    return;
  }
  if (!end.set() || !end.number) return;
  const Quantity& primary = most_specific({&start.quantity, &end.quantity});
  if (*end.number < *start.number) {
    report(out,
           finding_at(kWeightDecayScheduleInvalid,
                      fmt::format("end_weight_decay {} is below start_weight_decay {}: Megatron Bridge asserts "
                                  "the weight decay does not shrink",
                                  end.quantity.display, start.quantity.display),
                      primary, {&start.quantity, &end.quantity}),
           "set end_weight_decay to at least start_weight_decay");
    return;
  }
  TextSetting style = config_text(job, "scheduler.weight_decay_incr_style");
  if (style.value == "constant" && *end.number != *start.number) {
    Quantity style_q = quantity_at(style.path, std::nullopt, style.where);
    style_q.display = *style.value;
    report(out,
           finding_at(kWeightDecayScheduleInvalid,
                      fmt::format("weight_decay_incr_style is constant but start_weight_decay {} and "
                                  "end_weight_decay {} differ: Megatron-Core asserts they are equal at the "
                                  "first step",
                                  start.quantity.display, end.quantity.display),
                      primary, {&start.quantity, &end.quantity, &style_q}),
           "make them equal, or use weight_decay_incr_style linear or cosine to move between them");
  }
}

}  // namespace

extern const RuleInfo kWeightDecayScheduleInvalid = {
    .code = "MB612",
    .name = "weight-decay-schedule-invalid",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "start/end weight decay missing, negative, shrinking, or unequal under the constant style",
    .doc = R"md(Megatron Bridge hands `scheduler.start_weight_decay` and `scheduler.end_weight_decay` to
Megatron-Core's `OptimizerParamScheduler`, which moves the weight decay from the first to the
second over the run (`weight_decay_incr_style`: constant, linear, cosine). At start-up
`SchedulerConfig.finalize` asserts "start_weight_decay should be positive" (not negative) and
`end_weight_decay >= start_weight_decay`; the scheduler asserts the same, so a null value fails
with a type error. With the constant style the two must be equal (asserted when the scheduler
first computes the weight decay). NVIDIA's recipes set both (0.033 and 0.033, constant); an
override that changes only one of them breaks that.)md",
    .bad = {"override.yaml", "scheduler:\n  start_weight_decay: 0.1\n  end_weight_decay: 0.05\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "scheduler:\n  start_weight_decay: 0.1\n  end_weight_decay: 0.1\n"},
    .check = check,
    .checks = "BR sched weight decay",
};

}  // namespace mblint
