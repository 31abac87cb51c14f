// Inside one NVLink domain tensor parallelism (up to 8) is usually faster
// than pipeline stages, which add a bubble. Advice, not a failure.
#include <algorithm>

#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kPreferTpOverPpInNvlinkDomain;

namespace {

// The largest k dividing PP with TP·k a valid tensor-parallel size no larger
// than `limit`; 1 when there is none.
int64_t tp_factor(const RuleContext& context, int64_t tp, int64_t pp, int64_t limit) {
  std::vector<int64_t> valid = valid_tensor_parallel_sizes(context, limit);
  int64_t best = 1;
  for (int64_t k : divisors(pp)) {
    if (k <= 1 || tp * k > limit) continue;
    if (std::find(valid.begin(), valid.end(), tp * k) != valid.end()) best = k;
  }
  return best;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& w = d.world_size;
  const Quantity& domain = d.nvlink_domain;
  if (!tp.known() || !pp.known() || !w.known() || !domain.known()) return;
  if (*pp <= 1 || *tp <= 0 || *w <= 0 || *w > *domain) return;
  if (!d.num_moe_experts.known() || *d.num_moe_experts != 0) return;  // MoE sizes TP by active parameters
  if (chosen_by_recipe({&tp.where, &pp.where})) return;                 // NVIDIA's tuned choice
  int64_t limit = std::min<int64_t>({8, *domain, *w});
  if (*tp >= limit) return;
  int64_t k = tp_factor(context, *tp, *pp, limit);
  if (k <= 1) return;
  const Quantity& primary = most_specific({&pp, &tp});
  Diagnostic diag = make_diagnostic(
      kPreferTpOverPpInNvlinkDomain,
      fmt::format("all {} GPUs share one NVLink domain, yet the model is split into {} pipeline stages with "
                  "tensor_model_parallel_size {}: tensor parallelism up to {} is usually faster there than pipeline "
                  "stages, which add a bubble",
                  *w, *pp, *tp, limit),
      span_for(primary));
  add_notes(diag, {&pp, &tp, &domain}, &primary);
  diag.help = fmt::format("try tensor_model_parallel_size {} with pipeline_model_parallel_size {}", *tp * k, *pp / k);
  // One fix that moves the factor from PP to TP: changing either alone
  // breaks TP x PP x CP dividing the world size.
  Fix move = set_value_fix(tp, *tp * k);
  Fix pipeline = set_value_fix(pp, *pp / k);
  move.description = fmt::format("set tensor_model_parallel_size to {} and pipeline_model_parallel_size to {}",
                                 *tp * k, *pp / k);
  if (move.edits.empty() || pipeline.edits.empty()) {
    move.edits.clear();
  } else {
    move.edits.insert(move.edits.end(), pipeline.edits.begin(), pipeline.edits.end());
  }
  diag.fixes.push_back(std::move(move));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kPreferTpOverPpInNvlinkDomain = {
    .code = "MB209",
    .name = "prefer-tp-over-pp-in-nvlink-domain",
    .group = RuleGroup::Tensor,
    .severity = Severity::Note,
    .summary = "inside one NVLink domain, raise tensor parallelism before adding pipeline stages",
    .doc = R"md(Advice from NVIDIA's parallelism guidance (the `parallelism-strategies` skill): on a single
NVLink node, use tensor parallelism up to 8 before pipeline parallelism. Tensor-parallel
all-reduces stay on NVLink, while pipeline stages add a bubble, in which the pipeline idles for
`(PP - 1) / (VPP x microbatches + PP - 1)` of the step (see `pipeline-bubble`), and uneven stage
memory.

The note appears for a dense model whose whole job fits one NVLink domain (the GPU type's
domain, at most one node on HGX systems, or one node when no GPU type is known) and that uses PP > 1 with TP below 8, when a
larger TP that the attention heads and key/value groups accept can replace some pipeline
stages. MoE models are left alone (their TP is sized by the active parameters), and so is a
recipe's own TP and PP. It is a starting point; measure before and after.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 4\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 8\n  pipeline_model_parallel_size: 1\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .check = check,
    .checks = "PS 16",
};

}  // namespace mblint
