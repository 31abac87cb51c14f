// W % (ETP·EP·PP) must be 0: the expert layers' data-parallel size is
// W / (ETP·EP·PP) (context-parallel ranks fold into it).
#include "rules/rule_support.h"

namespace mblint {

extern const RuleInfo kExpertWorldSizeDivisibility;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& etp = d.expert_tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& w = d.world_size;
  if (!ep.known() || !etp.known() || !pp.known() || !w.known()) return;
  if (*ep <= 1 || *etp <= 0 || *pp <= 0 || *w <= 0) return;
  int64_t grid = *etp * *ep * *pp;
  if (*w % grid == 0) return;
  std::string world = w.how.empty() ? std::to_string(*w) : fmt::format("{} ({})", *w, w.how);
  int64_t step = d.min_gpus.known() ? *d.min_gpus : grid;
  const Quantity& layout = most_specific({&ep, &etp, &pp});
  const Quantity& primary = layer_rank(layout.where.layer) > layer_rank(Layer::Recipe)
                                ? layout
                                : most_specific({&d.nodes, &d.gpus_per_node, &layout});
  Diagnostic diag = make_diagnostic(
      kExpertWorldSizeDivisibility,
      fmt::format("world size {} is not divisible by expert tensor x expert x pipeline parallel = {} x {} x {} = {}; "
                  "this layout needs a multiple of {} GPUs",
                  world, *etp, *ep, *pp, grid, step),
      span_for(primary));
  add_notes(diag, {&ep, &etp, &pp, &d.nodes, &d.gpus_per_node}, &primary);
  if (d.min_gpus.known()) {
    diag.notes.push_back(Note{fmt::format("minimum GPUs = {} = {} (not the full product of all sizes)",
                                          *d.min_gpus, d.min_gpus.how),
                              {}});
  }
  // Expert-parallel sizes that fit this world.
  std::vector<int64_t> fitting;
  if (*w % (*etp * *pp) == 0) {
    for (int64_t e : divisors(*w / (*etp * *pp))) {
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
    "MB102",
    "expert-world-size-divisibility",
    Severity::Error,
    "the number of GPUs must be a multiple of expert tensor x expert x pipeline parallel",
    R"md(MoE layers use their own grid: `W = ETP x EP x EDP x PP`, where context-parallel ranks fold
into the expert data-parallel size `EDP`. `parallel_state.initialize_model_parallel` raises
"world_size (W) is not divisible by expert_tensor_model_pipeline_parallel size" when
`W % (ETP x EP x PP) != 0`. NVIDIA's own recipes hit this when launched on fewer GPUs than
their layout needs (DeepSeek-V3 with PP 8 and EP 64 on 64 GPUs).

When `expert_tensor_parallel_size` is unset, Megatron Bridge >= 0.6 uses 1 if EP > 1, while
older Bridge releases and Megatron-LM use `tensor_model_parallel_size`; pass
`--bridge-version` to check an older release.)md",
    {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 1 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config\n",
     "launch.sh"},
    {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 2 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config\n",
     "launch.sh"},
    check,
    "MC A2, PS 2",
};

}  // namespace mblint
