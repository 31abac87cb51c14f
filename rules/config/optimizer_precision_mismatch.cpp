// Megatron Bridge's _validate_mixed_precision_consistency: the optimizer
// runs in one 16-bit mode, and the precision-aware optimizer must run in the
// model's.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kOptimizerPrecisionMismatch;

namespace {

// The value after MixedPrecisionConfig.setup(): mixed_precision's when it
// pins the field, else what the section says.
Resolved effective(const Job& job, std::string_view section, std::string_view field) {
  if (auto mixed = mixed_precision_value(job, field)) {
    Resolved r;
    r.path = fmt::format("{}.{}", section, field);
    r.value = *mixed;
    if (r.value->where.origin.empty() && r.value->where.layer != Layer::Recipe) {
      r.value->where.origin = fmt::format("mixed_precision sets {} = {} here", field, to_display(*mixed));
    }
    return r;
  }
  return resolve(job, fmt::format("{}.{}", section, field));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved opt_bf16 = effective(job, "optimizer", "bf16");
  Resolved opt_fp16 = effective(job, "optimizer", "fp16");
  if (is_on(opt_bf16) && is_on(opt_fp16)) {
    report(out,
           finding(kOptimizerPrecisionMismatch,
                   "optimizer.bf16 and optimizer.fp16 are both true: Megatron Bridge asserts \"Optimizer "
                   "config cannot have both bf16=True and fp16=True\"",
                   {&opt_bf16, &opt_fp16}),
           "keep one of them (bf16 for bf16 training)");
    return;
  }
  Resolved aware = resolve(job, "optimizer.use_precision_aware_optimizer");
  if (!is_on(aware)) return;
  Resolved model_bf16 = effective(job, "model", "bf16");
  Resolved model_fp16 = effective(job, "model", "fp16");
  // The same assert for either 16-bit mode; the first that fails is reported.
  struct Mode {
    std::string_view dtype;
    const Resolved* model;
    const Resolved* optimizer;
  };
  for (const Mode& m : {Mode{"bf16", &model_bf16, &opt_bf16}, Mode{"fp16", &model_fp16, &opt_fp16}}) {
    if (!is_on(*m.model) || !is_off(*m.optimizer)) continue;
    report(out,
           finding(kOptimizerPrecisionMismatch,
                   fmt::format("model.{0} is true but optimizer.{0} is false with use_precision_aware_optimizer: "
                               "Megatron Bridge asserts \"optimizer.{0}=True must be set when model.{0}=True and "
                               "use_precision_aware_optimizer=True.\"",
                               m.dtype),
                   {m.optimizer, m.model, &aware}),
           fmt::format("set optimizer.{} to true", m.dtype));
    return;
  }
  if (is_off(model_bf16) && is_off(model_fp16) && (is_on(opt_bf16) || is_on(opt_fp16))) {
    const Resolved& on = is_on(opt_bf16) ? opt_bf16 : opt_fp16;
    report(out,
           finding(kOptimizerPrecisionMismatch,
                   fmt::format(
                       "the model trains in fp32 but {} is true with use_precision_aware_optimizer: Megatron Bridge "
                       "asserts \"optimizer.bf16 and optimizer.fp16 must both be False when model is using fp32 "
                       "precision\"",
                       on.path),
                   {&on, &model_bf16, &model_fp16, &aware}),
           fmt::format("set {} to false, or train the model in that precision", on.path));
  }
}

}  // namespace

extern const RuleInfo kOptimizerPrecisionMismatch = {
    .code = "MB961",
    .name = "optimizer-precision-mismatch",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "optimizer.bf16 and optimizer.fp16 both on, or the precision-aware optimizer in another precision than the model",
    .doc = R"md(Megatron Bridge's `_validate_mixed_precision_consistency` (`training/config.py`, run by
`ConfigContainer.validate()` at start-up) asserts:

* "Optimizer config cannot have both bf16=True and fp16=True. Please set only one precision mode."
  (the model-side twin is reported by `fp16-and-bf16`);
* with `optimizer.use_precision_aware_optimizer`, the optimizer's precision follows the model's:
  "optimizer.bf16=True must be set when model.bf16=True and use_precision_aware_optimizer=True.",
  the same for fp16, and both false for an fp32 model.

The values checked are those after `mixed_precision` is applied: a preset or
`MixedPrecisionConfig` copies `bf16`/`fp16` onto both the model and the optimizer, so these
mismatches arise with `mixed_precision: null` or from a `mixed_precision` section that sets both.)md",
    .bad = {"override.yaml",
     "mixed_precision: null\nmodel:\n  bf16: true\noptimizer:\n  bf16: false\n  use_precision_aware_optimizer: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "mixed_precision: null\nmodel:\n  bf16: true\noptimizer:\n  bf16: true\n  use_precision_aware_optimizer: true\n"},
    .check = check,
    .checks = "BR V16",
};

}  // namespace mblint
