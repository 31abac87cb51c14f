// W % (ETP·EP·PP) must be 0: the expert layers' data-parallel size is
// W / (ETP·EP·PP) (context-parallel ranks fold into it).
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kExpertWorldSizeDivisibility;

namespace {

// Expert-tensor-parallel sizes that fit this world, below the current one.
std::vector<int64_t> fitting_etp(int64_t world, int64_t ep, int64_t pp, int64_t egtp, int64_t etp) {
  std::vector<int64_t> fitting;
  if (world % (ep * pp * egtp) != 0) return fitting;
  for (int64_t e : divisors(world / (ep * pp * egtp))) {
    if (e < etp) fitting.push_back(e);
  }
  if (fitting.size() > 3) fitting.erase(fitting.begin(), fitting.end() - 3);
  return fitting;
}

// Part of the expert grid is unknown (no recipe, `$PP`): a known expert
// parallel size above 1 whose product with the other known sizes does not
// divide the world decides already. A known pipeline size that fails the
// dense grid too is world-size-divisibility's.
void check_partly_known(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& w = d.world_size;
  if (!splits(ep) || !w.known() || *w <= 0) return;
  std::vector<const Quantity*> known{&ep};
  std::vector<std::string> unknown;
  for (const Quantity* q : {&d.expert_tensor_parallel, &d.pipeline_parallel, &d.expert_weight_shard_groups}) {
    if (!q->known()) {
      unknown.push_back(q->name);
      continue;
    }
    if (**q <= 0) return;  // another rule reports a size below 1
    if (**q > 1) known.push_back(q);
  }
  int64_t product = 1;
  std::vector<std::string> names, values;
  for (const Quantity* q : known) {
    product *= **q;
    names.push_back(q->name);
    values.push_back(std::to_string(**q));
  }
  if (*w % product == 0) return;
  if (d.pipeline_parallel.known() && *w % *d.pipeline_parallel != 0) return;
  const Quantity& primary = most_specific({&ep, known.back()});
  std::string world = w.how.empty() ? std::to_string(*w) : fmt::format("{} ({})", *w, w.how);
  Diagnostic diag = make_diagnostic(
      kExpertWorldSizeDivisibility,
      fmt::format("world size {} is not divisible by {} = {}, so not by the whole expert tensor x expert x pipeline "
                  "parallel product whatever {} {} (not known here)",
                  world, fmt::join(names, " x "), fmt::join(values, " x "), fmt::join(unknown, " and "),
                  unknown.size() == 1 ? "is" : "are"),
      span_for(primary));
  for (const Quantity* q : known) add_notes(diag, {q}, &primary);
  add_notes(diag, {&d.nodes, &d.gpus_per_node}, &primary);
  report(out, std::move(diag),
         fmt::format("use a multiple of {} GPUs, or an expert_model_parallel_size that divides {}", product, *w));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& etp = d.expert_tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& egtp = d.expert_weight_shard_groups;
  const Quantity& w = d.world_size;
  if (!ep.known() || !etp.known() || !pp.known() || !egtp.known()) {
    check_partly_known(context, out);
    return;
  }
  if (!w.known()) return;
  if (*ep <= 0 || *etp <= 0 || *pp <= 0 || *egtp <= 0 || *w <= 0) return;
  int64_t grid = *etp * *ep * *pp * *egtp;
  if (*w % grid == 0) return;
  // Without expert parallelism the expert grid is still built (ETP x PP); a
  // world the dense grid does not divide either is world-size-divisibility's.
  bool dense_fails = d.tensor_parallel.known() && d.context_parallel.known() && d.weight_shard_groups.known() &&
                     *w % (*d.tensor_parallel * *pp * *d.context_parallel * *d.weight_shard_groups) != 0;
  if (*ep <= 1 && dense_fails) return;
  std::string world = w.how.empty() ? std::to_string(*w) : fmt::format("{} ({})", *w, w.how);
  int64_t step = d.min_gpus.known() ? *d.min_gpus : grid;
  const Quantity& layout = most_specific({&ep, &etp, &pp});
  const Quantity& primary = layer_rank(layout.where.layer) > layer_rank(Layer::Recipe)
                                ? layout
                                : most_specific({&d.nodes, &d.gpus_per_node, &layout});
  std::string sizes = *egtp > 1 ? fmt::format("expert tensor x expert x pipeline parallel x expert weight shards = {} "
                                              "x {} x {} x {}",
                                              *etp, *ep, *pp, *egtp)
                                : fmt::format("expert tensor x expert x pipeline parallel = {} x {} x {}", *etp, *ep,
                                              *pp);
  Diagnostic diag =
      finding_at(kExpertWorldSizeDivisibility,
                 fmt::format("world size {} is not divisible by {} = {}; this layout needs a multiple of {} GPUs",
                             world, sizes, grid, step),
                 primary, {&ep, &etp, &pp, &d.nodes, &d.gpus_per_node});
  if (d.min_gpus.known()) {
    diag.notes.push_back(Note{fmt::format("minimum GPUs = {} = {} (not the full product of all sizes)",
                                          *d.min_gpus, d.min_gpus.how),
                              {}});
  }
  if (*ep <= 1) {
    // No expert parallelism to lower: the expert tensor-parallel size must fit.
    std::vector<int64_t> fitting = fitting_etp(*w, *ep, *pp, *egtp, *etp);
    diag.help = fitting.empty()
                    ? fmt::format("use {} GPUs (or a multiple), or a smaller expert_tensor_parallel_size", step)
                    : fmt::format("use expert_tensor_parallel_size {} (the expert layers are built on every rank even "
                                  "without expert parallelism), or {} GPUs (or a multiple)",
                                  join_or(fitting), step);
    for (auto it = fitting.rbegin(); it != fitting.rend(); ++it) diag.fixes.push_back(set_value_fix(etp, *it));
    out.push_back(std::move(diag));
    return;
  }
  // Expert-parallel sizes that fit this world.
  std::vector<int64_t> fitting;
  if (*w % (*etp * *pp * *egtp) == 0) {
    for (int64_t e : divisors(*w / (*etp * *pp * *egtp))) {
      if (e > 1 && e < *ep) fitting.push_back(e);
    }
  }
  if (fitting.size() > 3) fitting.erase(fitting.begin(), fitting.end() - 3);
  if (!fitting.empty()) {
    diag.help = fmt::format("use {} GPUs (or a multiple), or expert_model_parallel_size {}", step, join_or(fitting));
    for (auto it = fitting.rbegin(); it != fitting.rend(); ++it) diag.fixes.push_back(set_value_fix(ep, *it));
  } else {
    diag.help = fmt::format("use {} GPUs (or a multiple), or lower expert or pipeline parallelism", step);
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kExpertWorldSizeDivisibility = {
    .code = "MB102",
    .name = "expert-world-size-divisibility",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "the number of GPUs must be a multiple of expert tensor x expert x pipeline parallel",
    .doc = R"md(MoE layers use their own grid: `W = ETP x EP x EDP x PP`, where context-parallel ranks fold
into the expert data-parallel size `EDP`. `parallel_state.initialize_model_parallel` raises
"world_size (W) is not divisible by expert_tensor_model_pipeline_parallel size" when
`W % (ETP x EP x PP) != 0`. NVIDIA's own recipes hit this when launched on fewer GPUs than
their layout needs (DeepSeek-V3 with PP 8 and EP 64 on 64 GPUs).

The expert grid is built whether or not the model uses expert parallelism (`parallel_state.py`,
every release from core_v0.12.0): with `expert_model_parallel_size` 1 an explicit
`expert_tensor_parallel_size` must still fit (EP 1, ETP 4 and TP 2 on 6 GPUs raise although the
dense grid, TP 2 x DP 3, is fine). Megatron-LM's `--expert-tensor-parallel-num-weight-shards`
(Megatron-Core 0.19) multiplies the expert grid by its expert GTP size.

When `expert_tensor_parallel_size` is unset, Megatron Bridge >= 0.6 uses 1 if EP > 1, while
older Bridge releases and Megatron-LM use `tensor_model_parallel_size`; pass
`--bridge-version` to check an older release.

When part of the grid is unknown (no recipe, `$PP`), the known sizes still decide: EP 16 on 8 GPUs
fails whatever the pipeline and expert tensor sizes are.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 1 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 2 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config\n"},
    .check = check,
    .checks = "MC A2, PS 2",
};

}  // namespace mblint
