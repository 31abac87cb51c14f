// Options that only make sense with, or only without, the EP A2A overlap.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kEpOverlapOptionConflict;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Switch overlap = overlap_switch(job, "overlap_moe_expert_parallel_comm");
  Field dispatch_wgrad = read_field(job, "model.overlap_dispatch_backward_with_experts_wgrad");
  if (dispatch_wgrad.boolean() == true) {
    if (overlap.value == true) {
      report(out,
             diagnostic_at(kEpOverlapOptionConflict,
                           "overlap_dispatch_backward_with_experts_wgrad and overlap_moe_expert_parallel_comm are both "
                           "on: Megatron-Core "
                           "asserts \"overlap_moe_expert_parallel_comm must be disabled when enabling "
                           "overlap_dispatch_backward_with_experts_wgrad.\"",
                           {&dispatch_wgrad, &overlap.from}),
             "keep one of the two overlaps", {set_field_fix(dispatch_wgrad, "false")});
    }
    Switch delay = overlap_switch(job, "delay_wgrad_compute");
    if (delay.value == true) {
      report(out,
             diagnostic_at(kEpOverlapOptionConflict,
                           "overlap_dispatch_backward_with_experts_wgrad and delay_wgrad_compute are both on: "
                           "Megatron-Core asserts they "
                           "\"are mutually exclusive; use only one\"",
                           {&dispatch_wgrad, &delay.from}),
             "keep one of the two", {set_field_fix(dispatch_wgrad, "false"), set_field_fix(delay.from, "false")});
    }
  }
  Field early_release = read_field(job, "model.ep_overlap_early_attn_memory_release");
  if (early_release.boolean() == true && overlap.value == false) {
    report(
        out,
        diagnostic_at(
            kEpOverlapOptionConflict,
            "ep_overlap_early_attn_memory_release is on but overlap_moe_expert_parallel_comm is off: Megatron-Core "
            "asserts "
            "\"overlap_moe_expert_parallel_comm must be enabled when enabling ep_overlap_early_attn_memory_release\"",
            {&early_release, &overlap.from}),
        "set ep_overlap_early_attn_memory_release to false, or turn on the EP overlap",
        {set_field_fix(early_release, "false")});
  }
}

}  // namespace

extern const RuleInfo kEpOverlapOptionConflict = {
    .code = "MB725",
    .name = "ep-overlap-option-conflict",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "an expert-overlap option that conflicts with, or needs, the EP A2A overlap",
    .doc = R"md(Three MoE overlap options depend on `overlap_moe_expert_parallel_comm` (the EP A2A overlap).
Megatron-Core's `TransformerConfig.__post_init__` asserts, when the model config is finalized:

* `overlap_dispatch_backward_with_experts_wgrad` (overlap the backward dispatch with the experts'
  weight gradients) excludes the EP A2A overlap ("overlap_moe_expert_parallel_comm must be disabled
  when enabling overlap_dispatch_backward_with_experts_wgrad.") and `delay_wgrad_compute` ("...are
  mutually exclusive; use only one");
* `ep_overlap_early_attn_memory_release` needs the EP A2A overlap.

`overlap_dispatch_backward_with_experts_wgrad` also needs Transformer Engine 2.3 or newer, which is
not in the files.)md",
    .bad = {"override.yaml",
     "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\nmodel:\n  overlap_dispatch_backward_with_experts_wgrad: true\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "comm_overlap:\n  overlap_moe_expert_parallel_comm: false\nmodel:\n  overlap_dispatch_backward_with_experts_wgrad: true\n"},
    .check = check,
    .checks = "MC K11",
};

}  // namespace mblint
