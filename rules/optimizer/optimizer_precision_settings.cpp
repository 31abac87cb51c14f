// Lower-precision optimizer state (main grads, main params, Adam moments)
// exists only in TransformerEngine's precision-aware FusedAdam, which in
// turn needs Adam and the distributed optimizer.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kOptimizerPrecisionSettings;

namespace {

constexpr std::string_view kDtypes[] = {"optimizer.main_grads_dtype", "optimizer.main_params_dtype",
                                        "optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype"};

void dtypes_without_precision_aware(const RuleContext& context, const Setting& aware, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  for (std::string_view path : kDtypes) {
    Choice dtype = read_dtype(job, path);
    if (!dtype.is_set() || *dtype.value == "fp32") continue;
    Diagnostic diag = make_diagnostic(
        kOptimizerPrecisionSettings,
        fmt::format("{} {} needs the precision-aware optimizer, but use_precision_aware_optimizer is false ({} can "
                    "only be fp32 without it)",
                    dtype.name, *dtype.value, dtype.name),
        first_span(job, {span_for(dtype)}));
    diag.notes.push_back(note_for(aware));
    report(out, std::move(diag),
           for_dialect(job,
                       fmt::format("set use_precision_aware_optimizer to true (Adam with the distributed "
                                   "optimizer), or {} to fp32",
                                   dtype.name),
                       fmt::format("pass --use-precision-aware-optimizer (Adam with the distributed optimizer), "
                                   "or {} fp32",
                                   setting_name(job, dtype.path))),
           {flag_fix(job, aware, true), text_fix(job, dtype, "fp32")});
  }
}

void precision_aware_requirements(const RuleContext& context, const Setting& aware, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Choice optimizer = read_choice(job, "optimizer.optimizer");
  if (optimizer.is_set() && *optimizer.value != "adam") {
    Diagnostic diag = make_diagnostic(
        kOptimizerPrecisionSettings,
        fmt::format("use_precision_aware_optimizer only works with optimizer adam, not {}", *optimizer.value),
        first_span(job, {span_for(aware), span_for(optimizer)}));
    diag.notes.push_back(note_for(optimizer));
    report(out, std::move(diag),
           for_dialect(job, "set use_precision_aware_optimizer to false, or use optimizer adam",
                       "drop --use-precision-aware-optimizer, or pass --optimizer adam"),
           {flag_fix(job, aware, false)});
  }
  Setting dist = distributed_optimizer(job);
  if (dist.value && !*dist.value) {
    Diagnostic diag = make_diagnostic(
        kOptimizerPrecisionSettings,
        "use_precision_aware_optimizer only works with the distributed optimizer, but use_distributed_optimizer is "
        "false",
        first_span(job, {span_for(aware)}));
    diag.notes.push_back(note_for(dist));
    report(out, std::move(diag),
           for_dialect(job, "set use_distributed_optimizer to true, or use_precision_aware_optimizer to false",
                       "pass --use-distributed-optimizer, or drop --use-precision-aware-optimizer"),
           {flag_fix(job, dist, true), flag_fix(job, aware, false)});
  }
}

// Megatron-LM, bf16: --accumulate-allreduce-grads-in-fp32 keeps fp32 main
// grads; a lower main-grads dtype contradicts it.
void accumulate_in_fp32(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::MegatronLM) return;
  Setting bf16 = read_flag(job, "model.bf16");
  const ConfigValue* accumulate = config_node(job, "ddp.grad_reduce_in_fp32");
  Choice grads = read_dtype(job, "optimizer.main_grads_dtype");
  if (!bf16.value.value_or(false) || !accumulate || !as_bool(accumulate).value_or(false)) return;
  if (!grads.is_set() || *grads.value == "fp32") return;
  Diagnostic diag = make_diagnostic(
      kOptimizerPrecisionSettings,
      fmt::format("--main-grads-dtype {} contradicts --accumulate-allreduce-grads-in-fp32: Megatron-LM requires fp32 "
                  "main grads with it",
                  *grads.value),
      first_span(job, {span_for(grads)}));
  diag.notes.push_back(Note{"--accumulate-allreduce-grads-in-fp32 given here", primary_span(accumulate->where)});
  report(out, std::move(diag), "drop --accumulate-allreduce-grads-in-fp32, or use --main-grads-dtype fp32",
         {text_fix(job, grads, "fp32")});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  Setting aware = read_flag(context.job, "optimizer.use_precision_aware_optimizer");
  if (aware.value && !*aware.value) dtypes_without_precision_aware(context, aware, out);
  if (aware.value.value_or(false)) precision_aware_requirements(context, aware, out);
  accumulate_in_fp32(context, out);
}

}  // namespace

extern const RuleInfo kOptimizerPrecisionSettings = {
    .code = "MB901",
    .name = "optimizer-precision-settings",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "optimizer state dtypes other than fp32 need the precision-aware optimizer (Adam + distributed optimizer)",
    .doc = R"md(`OptimizerConfig` lets the optimizer keep main gradients, main parameters and the Adam moments
(`main_grads_dtype`, `main_params_dtype`, `exp_avg_dtype`, `exp_avg_sq_dtype`) in bf16, fp16 or fp8,
which only TransformerEngine's FusedAdam can do. Megatron-Core's `OptimizerConfig.__post_init__`
(every release) asserts:

* without `use_precision_aware_optimizer`, every one of them is fp32 ("main_grads_dtype can only be
  fp32 when not using precision-aware optimizer", ...);
* with it, the optimizer is Adam ("--use-precision-aware-optimizer only supported with adam") and the
  distributed optimizer is on ("... only supported with distributed optimizer"; Megatron Bridge turns
  it on in both `ddp` and `optimizer` when either says so, and Megatron-FSDP turns it on).

Megatron-LM also asserts, for bf16, that `--accumulate-allreduce-grads-in-fp32` comes with fp32 main
grads ("--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is set"); it
turns that switch on by itself when main grads are fp32, which is no error.)md",
    .bad = {"config.yaml",
     "_target_: megatron.bridge.training.config.ConfigContainer\noptimizer:\n"
     "  use_precision_aware_optimizer: false\n  exp_avg_dtype: {_target_: torch.bfloat16, _call_: false}\n",
     "config.yaml"},
    .good = {.content =
     "_target_: megatron.bridge.training.config.ConfigContainer\noptimizer:\n"
     "  use_precision_aware_optimizer: true\n  use_distributed_optimizer: true\n"
     "  exp_avg_dtype: {_target_: torch.bfloat16, _call_: false}\n"},
    .check = check,
    .checks = "MC J2, MC J10",
};

}  // namespace mblint
