// moe_router_load_balancing_type against the aux-loss coefficients and the
// router options each balancing method supports.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeLoadBalancingInvalid;

namespace {

using namespace moe;

void check_list_lengths(const Job& job, const Field& balancing, const Field& coeff, std::vector<Diagnostic>& out) {
  if (!balancing.known() || !balancing.value.is_list() || !coeff.known()) return;
  if (!coeff.value.is_list() && !coeff.number()) return;  // another type: the config rules' business
  size_t types = balancing.value.items.size();
  // validate_args unwraps one-element lists of both before the model config sees them.
  if (runs_validate_args(job) && types == 1) return;
  if (coeff.value.is_list() && coeff.value.items.size() == types) return;
  std::string got = coeff.value.is_list() ? fmt::format("a list of {}", coeff.value.items.size())
                                          : fmt::format("{}", coeff.display());
  report(out,
         diagnostic_at(
             kMoeLoadBalancingInvalid,
             fmt::format(
                 "moe_router_load_balancing_type is a list of {} but moe_aux_loss_coeff is {}: Megatron-Core asserts "
                 "\"moe_aux_loss_coeff must be a list of the same length as moe_router_load_balancing_type\"",
                 types, got),
             {&coeff, &balancing}),
         types == 1 ? "write the load-balancing type as a plain string, or moe_aux_loss_coeff as a one-element list"
                    : fmt::format("give moe_aux_loss_coeff {} values, one per load-balancing type", types));
}

void check_sinkhorn(const Field& balancing, const Field& coeff, std::vector<Diagnostic>& out) {
  std::optional<double> value = coeff.number();
  if (balancing.text() != "sinkhorn" || !value || *value == 0.0) return;
  report(out,
         diagnostic_at(
             kMoeLoadBalancingInvalid,
             fmt::format(
                 "sinkhorn load balancing with moe_aux_loss_coeff {}: the router asserts \"Sinkhorn routing does not "
                 "support aux loss.\" at the first step",
                 coeff.display()),
             {&coeff, &balancing}),
         "set moe_aux_loss_coeff to 0 (sinkhorn balances the load itself), or use aux_loss balancing",
         {set_field_fix(coeff, "0.0")});
}

void check_quantile(const Job& job, const Field& balancing, std::vector<Diagnostic>& out) {
  if (balancing.text() != "quantile_balancing") return;
  Field fusion = read_field(job, "model.moe_router_fusion");
  if (fusion.boolean() == true) {
    report(out,
           diagnostic_at(kMoeLoadBalancingInvalid,
                         "quantile_balancing with moe_router_fusion: the router asserts \"Quantile balancing routing "
                         "does not support "
                         "moe_router_fusion.\" at the first step",
                         {&fusion, &balancing}),
           "set moe_router_fusion to false", {set_field_fix(fusion, "false")});
  }
  for (const char* path : {"model.moe_router_num_groups", "model.moe_router_group_topk"}) {
    Field group = read_field(job, path);
    if (!group.known() || group.is_null()) continue;
    report(out,
           diagnostic_at(
               kMoeLoadBalancingInvalid,
               fmt::format(
                   "quantile_balancing with {} {}: the router asserts \"Quantile balancing routing does not support "
                   "group-limited routing.\" at the first step",
                   group.name, group.display()),
               {&group, &balancing}),
           "remove moe_router_num_groups and moe_router_group_topk, or use another load balancing",
           {set_field_fix(group, "null")});
    return;
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_moe(context.derived)) return;
  const Job& job = context.job;
  Field balancing = read_field(job, "model.moe_router_load_balancing_type");
  Field coeff = read_field(job, "model.moe_aux_loss_coeff");
  check_list_lengths(job, balancing, coeff, out);
  check_sinkhorn(balancing, coeff, out);
  check_quantile(job, balancing, out);
}

}  // namespace

extern const RuleInfo kMoeLoadBalancingInvalid = {
    .code = "MB711",
    .name = "moe-load-balancing-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "load-balancing type does not fit its aux-loss coefficients or router options",
    .doc = R"md(`moe_router_load_balancing_type` picks how the router keeps experts evenly loaded; it is a
string or a list of types, each weighted by the matching entry of `moe_aux_loss_coeff`. Megatron-Core
stops the job when:

* the type is a **list** and `moe_aux_loss_coeff` is not a list of the same length:
  `TransformerConfig.__post_init__` asserts "moe_aux_loss_coeff must be a list of the same length as
  moe_router_load_balancing_type" (Megatron-LM's `validate_args` first unwraps one-element lists, so
  there a single type with a single coefficient is fine; Megatron Bridge does not);
* the type is `sinkhorn` and `moe_aux_loss_coeff` is not 0: the router asserts "Sinkhorn routing does
  not support aux loss." at the first step;
* the type is `quantile_balancing` with `moe_router_fusion`, or with group-limited routing
  (`moe_router_num_groups` / `moe_router_group_topk`): the router asserts at the first step.

Quantile balancing also needs `tokens x topk` divisible by the number of experts per step; that
depends on how many tokens reach the router and is not checked.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_load_balancing_type: [aux_loss, seq_aux_loss]\n  moe_aux_loss_coeff: 0.001\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "model:\n  moe_router_load_balancing_type: [aux_loss, seq_aux_loss]\n  moe_aux_loss_coeff: [0.001, 0.0001]\n"},
    .check = check,
    .checks = "MC G14",
};

}  // namespace mblint
