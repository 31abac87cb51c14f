// Attention heads are split across the tensor-parallel group.
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kHeadsDivisibleByTp;

namespace {

// Of the sizes the heads allow, those the GPUs hold too (the world size a
// multiple of TP x PP x CP), so that the suggestion does not trade this error
// for world-size-divisibility; all of them when none does or the sizes are
// not known.
std::vector<int64_t> fitting_the_gpus(const Derived& d, const std::vector<int64_t>& sizes, bool& fitted) {
  fitted = false;
  if (!d.world_size.known() || !d.pipeline_parallel.known() || !d.context_parallel.known()) return sizes;
  std::vector<int64_t> out;
  for (int64_t t : sizes) {
    if (*d.world_size % (t * *d.pipeline_parallel * *d.context_parallel) == 0) out.push_back(t);
  }
  fitted = !out.empty();
  return fitted ? out : sizes;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& heads = d.num_attention_heads;
  if (!splits_unevenly(heads, tp)) return;
  Diagnostic diag =
      finding(kHeadsDivisibleByTp,
              fmt::format("num_attention_heads {} is not divisible by tensor_model_parallel_size {}", *heads, *tp),
              {&tp, &heads});
  int64_t limit = d.nvlink_domain.known() ? *d.nvlink_domain : 8;
  bool fitted = false;
  std::vector<int64_t> valid = fitting_the_gpus(d, valid_tensor_parallel_sizes(context, limit), fitted);
  std::vector<int64_t> choices = closest_below(valid, *tp, 3);
  if (choices.empty()) choices = closest_below(valid, limit + 1, 3);
  diag.help = choices.empty() ? "use tensor_model_parallel_size 1"
                              : fmt::format("use tensor_model_parallel_size {} (divisors of {}{})", join_or(choices),
                                            *heads,
                                            fitted ? fmt::format(" that fit {} GPUs at PP {} x CP {}", *d.world_size,
                                                                 *d.pipeline_parallel, *d.context_parallel)
                                                   : std::string());
  if (!choices.empty()) diag.fixes.push_back(set_value_fix(tp, choices.back()));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kHeadsDivisibleByTp = {
    .code = "MB201",
    .name = "heads-divisible-by-tp",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "tensor parallelism must divide the number of attention heads",
    .doc = R"md(Tensor parallelism gives each rank `num_attention_heads / TP` whole heads. Megatron-Core's
`TransformerConfig.__post_init__` raises "num_attention_heads (a) must be a multiple of
tensor_model_parallel_size (t)" while the model config is finalized.

The sizes it suggests divide the heads (and the query groups), stay within the NVLink domain and,
where the allocation is known, fit the GPUs (the world size a multiple of TP x PP x CP), so that
the suggestion does not trade this error for `world-size-divisibility`; its fix is re-checked
like every fix.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 3\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 3"},
    .good = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 4\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .check = check,
    .checks = "MC B1, PS 12",
};

}  // namespace mblint
