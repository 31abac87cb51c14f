// Grouped-query attention shares each key/value head among
// num_attention_heads / num_query_groups query heads: the groups must divide
// the heads.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHeadsDivisibleByQueryGroups;

namespace {

// Group counts that divide the heads and fit TP, closest to `groups` first.
std::vector<int64_t> group_choices(const RuleContext& context, int64_t heads, int64_t groups) {
  const Derived& d = context.derived;
  bool divisor_allowed = context.job.versions.megatron_core >= Version{0, 16, 0};
  std::vector<int64_t> fitting;
  for (int64_t g : divisors(heads)) {
    if (splits(d.tensor_parallel)) {
      int64_t tp = *d.tensor_parallel;
      if (g % tp != 0 && !(divisor_allowed && tp % g == 0)) continue;
    }
    fitting.push_back(g);
  }
  return closest_around(fitting, groups);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& heads = d.num_attention_heads;
  const Quantity& groups = d.num_query_groups;
  if (!splits_unevenly(heads, groups)) return;
  if (multi_latent_attention(context.job)) return;  // no query groups
  const Quantity& tp = d.tensor_parallel;
  bool fewer_than_tp = tp.known() && *groups < *tp;
  Diagnostic diag = finding(
      kHeadsDivisibleByQueryGroups,
      fmt::format("num_attention_heads {} is not divisible by num_query_groups {}: each key/value group must serve "
                  "a whole number of query heads ({})",
                  *heads, *groups,
                  fewer_than_tp ? fmt::format("Megatron-Core's attention asserts it because num_query_groups < "
                                              "tensor_model_parallel_size {}",
                                              *tp)
                                : std::string("TransformerEngine rejects it when the attention is built")),
      {&groups, &heads});
  if (fewer_than_tp) add_notes(diag, {&tp}, nullptr);
  std::vector<int64_t> choices = group_choices(context, *heads, *groups);
  std::string help = choices.empty()
                         ? fmt::format("use a num_query_groups that divides {}", *heads)
                         : fmt::format("use num_query_groups {} (divisors of {})", join_or(choices), *heads);
  report(out, std::move(diag), std::move(help), set_value_fixes(groups, choices));
}

}  // namespace

extern const RuleInfo kHeadsDivisibleByQueryGroups = {
    .code = "MB204",
    .name = "heads-divisible-by-query-groups",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "num_query_groups must divide num_attention_heads",
    .doc = R"md(With grouped-query attention every key/value head is shared by
`num_attention_heads / num_query_groups` query heads, so the groups must divide the heads. The
model config itself does not check it; the model build does:

* when `num_query_groups < tensor_model_parallel_size` (key/value heads replicated across the
  tensor-parallel ranks, Megatron-Core >= 0.16), `Attention.__init__` divides the heads by the
  groups and asserts "a is not divisible by g";
* otherwise TransformerEngine's attention (`num_gqa_groups`) rejects the shape.

Either way the job fails while the model is built, after the queue. Multi-latent attention has
no query groups and is not checked. A `num_query_groups` of null means one group per head.)md",
    .bad = {"override.yaml",
     "model:\n  num_query_groups: 5\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  num_query_groups: 4\n"},
    .check = check,
    .checks = "MC B3, MC B4",
};

}  // namespace mblint
