// delay_wgrad_compute postpones the experts' weight-gradient GEMMs into the
// EP A2A overlap schedule; it has no schedule to join without that overlap.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kDelayWgradWithoutEpOverlap;

namespace {

using namespace moe;

const Version kNeedsOverlapFrom{0, 14, 0};

void check_ep_overlap(const Job& job, const Switch& delay, std::vector<Diagnostic>& out) {
  Switch overlap = overlap_switch(job, "overlap_moe_expert_parallel_comm");
  if (overlap.value != false) return;
  // Megatron-Core asserts from 0.14; Megatron Bridge's CommOverlapConfig asserts
  // for comm_overlap.delay_wgrad_compute (reading the model's value before it resets it).
  bool bridge_asserts = job.dialect == Dialect::Bridge && delay.from.path == "comm_overlap.delay_wgrad_compute" &&
                        read_field(job, "model.overlap_moe_expert_parallel_comm").boolean() != true;
  if (job.versions.megatron_core < kNeedsOverlapFrom && !bridge_asserts) return;
  report(out,
         diagnostic_at(
             kDelayWgradWithoutEpOverlap,
             fmt::format("delay_wgrad_compute is on but overlap_moe_expert_parallel_comm is off: {}",
                         bridge_asserts
                             ? "Megatron Bridge's CommOverlapConfig asserts \"overlap_moe_expert_parallel_comm is "
                               "required for delay_wgrad_compute\""
                             : "Megatron-Core asserts \"overlap_moe_expert_parallel_comm must be enabled when "
                               "enabling delay_wgrad_compute\""),
             {&delay.from, &overlap.from}),
         job.dialect == Dialect::MegatronLM
             ? "add --overlap-moe-expert-parallel-comm, or drop --delay-wgrad-compute"
             : "turn on comm_overlap.overlap_moe_expert_parallel_comm, or set delay_wgrad_compute to false",
         {set_field_fix(overlap.from, "true"), set_field_fix(delay.from, "false")});
}

// Megatron-LM's validate_args adds its own conditions.
void check_megatron_lm(const Job& job, const Switch& delay, std::vector<Diagnostic>& out) {
  if (!runs_validate_args(job)) return;
  Field impl = read_field(job, "model.transformer_impl");
  if (auto name = impl.text(); name && *name != "transformer_engine") {
    report(out,
           diagnostic_at(
               kDelayWgradWithoutEpOverlap,
               fmt::format(
                   "delay_wgrad_compute with transformer_impl {}: validate_args asserts \"Delaying wgrad compute is "
                   "only supported with transformer_engine implementation\"",
                   *name),
               {&delay.from, &impl}),
           "use --transformer-impl transformer_engine, or drop --delay-wgrad-compute",
           {set_field_fix(impl, "transformer_engine")});
  }
  Field overlap_grad = read_field(job, "ddp.overlap_grad_reduce");
  if (job.versions.megatron_core < kNeedsOverlapFrom && overlap_grad.boolean() == true) {
    report(out,
           diagnostic_at(
               kDelayWgradWithoutEpOverlap,
               fmt::format("delay_wgrad_compute with overlap_grad_reduce on Megatron-Core {}: validate_args asserts "
                           "\"delay_wgrad_compute is not supported with overlap_grad_reduce\" (allowed from 0.14)",
                           to_string(job.versions.megatron_core)),
               {&delay.from, &overlap_grad}),
           "drop --overlap-grad-reduce or --delay-wgrad-compute, or use Megatron-Core 0.14 or newer",
           {set_field_fix(overlap_grad, "false")});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Switch delay = overlap_switch(context.job, "delay_wgrad_compute");
  if (delay.value != true) return;
  check_ep_overlap(context.job, delay, out);
  check_megatron_lm(context.job, delay, out);
}

}  // namespace

extern const RuleInfo kDelayWgradWithoutEpOverlap = {
    .code = "MB724",
    .name = "delay-wgrad-without-ep-overlap",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "delay_wgrad_compute needs the expert-parallel communication overlap",
    .doc = R"md(`delay_wgrad_compute` defers the experts' weight-gradient GEMMs so they can fill the gaps of
the EP A2A overlap schedule (`overlap_moe_expert_parallel_comm`). Without that overlap there is no
schedule to defer into:

* Megatron-Core asserts "overlap_moe_expert_parallel_comm must be enabled when enabling
  delay_wgrad_compute" when the model config is finalized (from 0.14);
* Megatron Bridge's `CommOverlapConfig` asserts "overlap_moe_expert_parallel_comm is required for
  delay_wgrad_compute" for `comm_overlap.delay_wgrad_compute` in every release mblint models.

Megatron-LM's `validate_args` also requires `--transformer-impl transformer_engine`, and up to
Megatron-Core 0.13 rejected `--delay-wgrad-compute` together with `--overlap-grad-reduce` (later
releases only require Transformer Engine 2.7/2.8 for that pair). The Transformer Engine requirements
(2.7 with `overlap_grad_reduce` or gradient-accumulation fusion, 2.10/2.12 with CUDA graphs) depend on
the installed version and are not checked. The performance scripts' `--moe_a2a_overlap true` turns on
both switches together.)md",
    .bad = {"override.yaml",
     "comm_overlap:\n  overlap_moe_expert_parallel_comm: false\n  delay_wgrad_compute: true\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n  delay_wgrad_compute: true\n"},
    .check = check,
    .checks = "MC K10, PS 53",
};

}  // namespace mblint
