// Shared experts: a positive intermediate size, and their overlap with the
// token dispatch only on the alltoall or flex dispatcher.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeSharedExpertOverlapInvalid;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field shared = read_field(job, "model.moe_shared_expert_intermediate_size");
  std::optional<int64_t> size = shared.integer();
  if (!size) return;
  if (*size <= 0) {
    report(out,
           diagnostic_at(
               kMoeSharedExpertOverlapInvalid,
               fmt::format(
                   "moe_shared_expert_intermediate_size is {}: Megatron-Core raises ValueError (it must be a positive "
                   "size, or None for no shared experts) when the model config is finalized",
                   *size),
               {&shared}),
           "use null for no shared experts, or the shared experts' total intermediate size",
           {set_field_fix(shared, "null")});
    return;
  }
  Field overlap = read_field(job, "model.moe_shared_expert_overlap");
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  std::optional<std::string> type = dispatcher.text();
  if (overlap.boolean() != true || !type || *type == "alltoall" || *type == "flex") return;
  report(
      out,
      diagnostic_at(
          kMoeSharedExpertOverlapInvalid,
          fmt::format("moe_shared_expert_overlap is true with the {} token dispatcher: Megatron-Core raises ValueError "
                      "(\"moe_shared_expert_overlap only works with alltoall or flex token dispatcher.\")",
                      *type),
          {&overlap, &dispatcher, &shared}),
      "use moe_token_dispatcher_type alltoall (or flex), or set moe_shared_expert_overlap to false",
      {set_field_fix(dispatcher, "alltoall"), set_field_fix(overlap, "false")});
}

}  // namespace

extern const RuleInfo kMoeSharedExpertOverlapInvalid = {
    .code = "MB709",
    .name = "moe-shared-expert-overlap-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "shared experts need a positive size, and their overlap needs the alltoall or flex dispatcher",
    .doc = R"md(Shared experts (DeepSeek, Qwen-MoE, Kimi) are dense MLPs every token passes through, of size
`moe_shared_expert_intermediate_size`. `moe_shared_expert_overlap` runs them concurrently with the
token dispatch, which only the `alltoall` and `flex` dispatchers support. Megatron-Core's
`TransformerConfig.__post_init__` raises, when the model config is finalized:

* `ValueError` when `moe_shared_expert_intermediate_size` is set to 0 or less;
* `ValueError("moe_shared_expert_overlap only works with alltoall or flex token dispatcher.")`
  when the overlap is on with another dispatcher — `allgather`, the Megatron default.

Megatron-LM and Megatron Bridge behave the same; the default dispatcher (`allgather`) applies to
Megatron-LM launches and full config dumps, a recipe's own dispatcher comes from mblint's
catalog.)md",
    .bad = {"override.yaml",
     "model:\n  moe_shared_expert_intermediate_size: 2048\n  moe_shared_expert_overlap: true\n"
     "  moe_token_dispatcher_type: allgather\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "model:\n  moe_shared_expert_intermediate_size: 2048\n  moe_shared_expert_overlap: true\n"
     "  moe_token_dispatcher_type: alltoall\n"},
    .check = check,
    .checks = "MC G12",
};

}  // namespace mblint
