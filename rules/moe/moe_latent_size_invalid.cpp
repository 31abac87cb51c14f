// moe_latent_size projects tokens to a smaller width before dispatch and
// the experts; it must be positive, and Megatron-LM requires experts for it.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeLatentSizeInvalid;

namespace {

using namespace moe;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Field latent = read_field(job, "model.moe_latent_size");
  std::optional<int64_t> size = latent.integer();
  if (!size) return;
  Field experts = from_quantity(d.num_moe_experts);
  bool dense = d.num_moe_experts.known() && *d.num_moe_experts <= 0;
  if (*size <= 0 && (is_moe(d) || runs_validate_args(job))) {
    report(out,
           diagnostic_at(
               kMoeLatentSizeInvalid,
               fmt::format(
                   "moe_latent_size is {}: {}", *size,
                   runs_validate_args(job)
                       ? "validate_args asserts \"MoE latent projection dimension has to be greater than zero.\""
                       : "the experts are built with that width while the MoE layer skips the latent projection, so "
                         "the model fails when it is built or at the first step"),
               {&latent}),
           "use null (no latent projection) or a positive width smaller than hidden_size",
           {set_field_fix(latent, "null")});
    return;
  }
  if (*size > 0 && dense && runs_validate_args(job)) {
    report(out,
           diagnostic_at(
               kMoeLatentSizeInvalid,
               fmt::format(
                   "moe_latent_size {} on a model without experts: validate_args asserts \"MoE latent projections are "
                   "applicable only for MoE models.\"",
                   *size),
               {&latent, &experts}),
           "remove --moe-latent-size, or add --num-experts", {set_field_fix(latent, "null")});
  }
}

}  // namespace

extern const RuleInfo kMoeLatentSizeInvalid = {
    .code = "MB718",
    .name = "moe-latent-size-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "moe_latent_size must be positive, and (Megatron-LM) needs an MoE model",
    .doc = R"md(`moe_latent_size` (latent MoE, Nemotron-3 Super/Ultra) projects each token down to a
smaller width before the token dispatch and the experts, and back up after them.

Megatron-LM's `validate_args` asserts "MoE latent projection dimension has to be greater than zero."
for a value of 0 or less, and "MoE latent projections are applicable only for MoE models." without
`--num-experts`. Megatron Bridge does not run those checks: a latent size on a dense model is
ignored, but on an MoE model a value of 0 or less builds the experts with that input width while the
MoE layer skips the projection (it tests the value for truth), so the model fails to build or to run
its first step.)md",
    .bad = {"override.yaml",
     "model:\n  moe_latent_size: 0\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_latent_size: 1024\n"},
    .check = check,
    .checks = "MC G24",
};

}  // namespace mblint
