// Group-limited (device- or node-limited) routing: experts split into
// moe_router_num_groups equal groups, each token picks moe_router_group_topk
// groups and its top-k experts inside them.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeGroupLimitedRoutingInvalid;

namespace {

using namespace moe;

struct Routing {
  Field group_topk;
  Field num_groups;
  Field limited_devices;
  Field topk;
  Field experts;
};

void report(std::vector<Diagnostic>& out, std::string message, std::initializer_list<const Field*> fields,
            std::string help, std::vector<Fix> fixes) {
  report(out, diagnostic_at(kMoeGroupLimitedRoutingInvalid, std::move(message), fields), std::move(help),
         std::move(fixes));
}

void check_groups(const Routing& r, int64_t group_topk, std::vector<Diagnostic>& out) {
  std::optional<int64_t> groups = r.num_groups.integer();
  if (!groups) return;
  int64_t experts = *r.experts.integer();
  if (experts % *groups != 0) {
    report(out,
           fmt::format("num_moe_experts {} is not divisible by moe_router_num_groups {}: Megatron-Core asserts when the "
                       "model config is finalized",
                       experts, *groups),
           {&r.num_groups, &r.experts}, "use a moe_router_num_groups that divides num_moe_experts (often EP or the "
           "number of nodes the experts span)", {});
  }
  if (group_topk > *groups) {
    report(out,
           fmt::format("moe_router_group_topk {} is larger than moe_router_num_groups {}: Megatron-Core asserts when the "
                       "model config is finalized",
                       group_topk, *groups),
           {&r.group_topk, &r.num_groups}, fmt::format("use moe_router_group_topk of at most {}", *groups),
           {set_field_fix(r.group_topk, std::to_string(*groups))});
  }
  std::optional<int64_t> topk = r.topk.integer();
  if (topk && *topk > 0 && *topk < group_topk) {
    Diagnostic diag = diagnostic_at(
        kMoeGroupLimitedRoutingInvalid,
        fmt::format("moe_router_topk {} is smaller than moe_router_group_topk {}: groups are scored by their top "
                    "{} // {} = 0 experts, so the groups a token may use are chosen arbitrarily",
                    *topk, group_topk, *topk, group_topk),
        {&r.topk, &r.group_topk});
    diag.severity = Severity::Warning;
    report(out, std::move(diag),
           fmt::format("use moe_router_group_topk of at most {} (DeepSeek-V3: top-8 experts in 4 of 8 groups)", *topk),
           {set_field_fix(r.group_topk, std::to_string(*topk))});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (!is_moe(d)) return;
  Routing r{read_field(job, "model.moe_router_group_topk"), read_field(job, "model.moe_router_num_groups"),
            read_field(job, "model.moe_router_topk_limited_devices"), read_field(job, "model.moe_router_topk"),
            from_quantity(d.num_moe_experts)};
  // Only a count (or null) is judged; another type is the config rules' business.
  std::optional<bool> grouped = r.group_topk.is_null() ? std::optional<bool>(false)
                                : r.group_topk.integer() ? std::optional<bool>(*r.group_topk.integer() != 0)
                                                         : std::nullopt;
  if (grouped == true) {
    if (r.limited_devices.integer().value_or(0) != 0) {
      report(out,
             "moe_router_topk_limited_devices is set together with moe_router_group_topk: Megatron-Core raises "
             "ValueError (the deprecated option is replaced by moe_router_group_topk and moe_router_num_groups)",
             {&r.limited_devices, &r.group_topk}, "remove moe_router_topk_limited_devices",
             {set_field_fix(r.limited_devices, "null")});
    }
    if (r.num_groups.is_null() || r.num_groups.integer() == 0) {
      report(out,
             fmt::format("moe_router_group_topk {} is set without moe_router_num_groups: Megatron-Core raises "
                         "ValueError (\"When using group limited routing, moe_router_num_groups must be specified.\")",
                         r.group_topk.display()),
             {&r.group_topk, &r.num_groups}, "set moe_router_num_groups (the number of expert groups), or remove "
             "moe_router_group_topk", {});
      return;
    }
    if (auto group_topk = r.group_topk.integer()) check_groups(r, *group_topk, out);
    return;
  }
  // The deprecated option maps to group_topk = limited_devices, num_groups = EP.
  std::optional<int64_t> limited = r.limited_devices.integer();
  const Quantity& ep = d.expert_parallel;
  if (grouped == false && limited && *limited > 0 && ep.known() && *limited > *ep) {
    Field ep_field = from_quantity(ep);
    report(out,
           fmt::format("moe_router_topk_limited_devices {} is larger than expert_model_parallel_size {}: it becomes "
                       "moe_router_group_topk over EP groups, and Megatron-Core asserts group_topk <= num_groups",
                       *limited, *ep),
           {&r.limited_devices, &ep_field},
           fmt::format("use moe_router_group_topk {} with moe_router_num_groups {} instead of the deprecated option",
                       std::min(*limited, *ep), *ep),
           {});
  }
}

}  // namespace

extern const RuleInfo kMoeGroupLimitedRoutingInvalid = {
    .code = "MB707",
    .name = "moe-group-limited-routing-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "group-limited routing needs moe_router_num_groups, dividing the experts, with group_topk <= num_groups",
    .doc = R"md(Group-limited routing (DeepSeek's device- and node-limited routing) splits the experts into
`moe_router_num_groups` equal groups; each token first picks `moe_router_group_topk` groups, scored by
the sum of their top `topk // group_topk` experts, then its `moe_router_topk` experts inside them.
Megatron-Core's `TransformerConfig.__post_init__` checks, when the model config is finalized:

* `moe_router_group_topk` without `moe_router_num_groups`: `ValueError("When using group limited
  routing, moe_router_num_groups must be specified.")`;
* `num_moe_experts % moe_router_num_groups != 0` and `moe_router_group_topk > moe_router_num_groups`:
  assertions;
* the deprecated `moe_router_topk_limited_devices` together with `moe_router_group_topk`: ValueError.
  Alone it becomes `group_topk = limited_devices` over `num_groups = expert_model_parallel_size`, so
  a value above EP fails the same assertion.

One case only degrades the run (a warning): with `moe_router_topk < moe_router_group_topk` the
groups are scored by `topk // group_topk = 0` experts, all scores are zero and the groups a token
may use are picked arbitrarily. Megatron-LM and Megatron Bridge behave the same.)md",
    .bad = {"override.yaml",
     "model:\n  moe_router_group_topk: 4\n  moe_router_num_groups: 6\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_router_group_topk: 4\n  moe_router_num_groups: 8\n"},
    .check = check,
    .checks = "MC G10",
};

}  // namespace mblint
