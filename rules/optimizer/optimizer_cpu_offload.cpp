// Optimizer CPU offload runs part of the optimizer step on the host
// (HybridDeviceOptimizer). It shards with the distributed optimizer and, in
// Megatron-LM, goes through the precision-aware optimizer's code path.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kOptimizerCpuOffload;

namespace {

void push(const RuleContext& context, std::vector<Diagnostic>& out, const Setting& offload, std::string message,
          std::vector<Note> notes, std::string help, std::vector<Fix> fixes) {
  Diagnostic diag =
      make_diagnostic(kOptimizerCpuOffload, std::move(message), first_span(context.job, {span_for(offload)}));
  diag.notes = std::move(notes);
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  Setting offload = read_flag(job, "optimizer.optimizer_cpu_offload");
  if (!offload.value.value_or(false)) return;
  Setting dist = distributed_optimizer(job);
  if (dist.value && !*dist.value) {
    push(context, out, offload, "optimizer_cpu_offload needs the distributed optimizer, but use_distributed_optimizer "
                                "is false",
         {note_for(dist)}, "set use_distributed_optimizer to true", {flag_fix(job, dist, true)});
  }
  Provenance fraction_where;
  if (auto fraction = read_number(job, "optimizer.optimizer_offload_fraction", &fraction_where);
      fraction && (*fraction < 0.0 || *fraction > 1.0)) {
    report(out,
           make_diagnostic(kOptimizerCpuOffload,
                           fmt::format("optimizer_offload_fraction {} is not a fraction between 0 and 1", *fraction),
                           first_span(job, {primary_span(fraction_where), span_for(offload)})),
           "use a value from 0.0 (nothing offloaded) to 1.0 (all optimizer state on the host)");
  }
  if (job.dialect != Dialect::MegatronLM) return;
  Setting aware = read_flag(job, "optimizer.use_precision_aware_optimizer");
  if (aware.value && !*aware.value) {
    push(context, out, offload,
         "--optimizer-cpu-offload must be used with --use-precision-aware-optimizer (the hybrid device optimizer "
         "reuses its code path)",
         {note_for(aware)}, "pass --use-precision-aware-optimizer", {flag_fix(job, aware, true)});
  }
  const Precision& p = effective_precision(context);
  if (p.fp8_param_gather.value.value_or(false) && p.fp8_recipe.is_set() && !p.fp8_recipe.is("delayed")) {
    push(context, out, offload,
         fmt::format("--optimizer-cpu-offload with --fp8-param-gather needs --fp8-recipe delayed, not {}",
                     *p.fp8_recipe.value),
         {note_for(p.fp8_param_gather), note_for(p.fp8_recipe)}, "pass --fp8-recipe delayed, or drop --fp8-param-gather",
         {text_fix(job, p.fp8_recipe, "delayed")});
  }
}

}  // namespace

extern const RuleInfo kOptimizerCpuOffload = {
    .code = "MB902",
    .name = "optimizer-cpu-offload",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "optimizer CPU offload without the distributed optimizer, with a bad fraction, or (Megatron-LM) without the "
    "precision-aware optimizer",
    .doc = R"md(`optimizer.optimizer_cpu_offload` moves `optimizer_offload_fraction` of the optimizer state and
step to the host. It needs:

* the distributed optimizer, which shards the state it offloads (the NVIDIA CPU-offloading notes;
  Megatron Bridge only wires the offloaded optimizer through the distributed optimizer);
* a fraction in [0, 1];
* on **Megatron-LM**, `--use-precision-aware-optimizer` ("The optimizer cpu offload must be used in
  conjunction with `--use-precision-aware-optimizer`") and, with `--fp8-param-gather`,
  `--fp8-recipe delayed` (`validate_args`). Megatron Bridge does not make these two checks.

Unlike activation offloading, it works with pipeline parallelism, recompute and CUDA graphs. The
offloaded step is slow (1.9x to 4.2x step time for 25 % to 100 % in NVIDIA's measurements); that
trade-off is not reported.)md",
    .bad = {"override.yaml",
     "optimizer:\n  optimizer_cpu_offload: true\n  optimizer_offload_fraction: 1.5\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "optimizer:\n  optimizer_cpu_offload: true\n  optimizer_offload_fraction: 0.5\n"},
    .check = check,
    .checks = "MC J10, PS 63",
};

}  // namespace mblint
