// W % (TP·PP·CP·GTP) must be 0: the dense layers' data-parallel size is
// W / (TP·PP·CP·GTP) and must be whole (GTP: Megatron-LM's weight shards).
#include <algorithm>

#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kWorldSizeDivisibility;

namespace {

// Node counts near the current one that give a valid world size.
std::vector<int64_t> valid_node_counts(int64_t step, int64_t gpus_per_node, int64_t nodes) {
  std::vector<int64_t> counts;
  if (gpus_per_node <= 0) return counts;
  int64_t per = lcm64(step, gpus_per_node) / gpus_per_node;  // nodes per valid step
  int64_t below = nodes / per * per;
  if (below > 0) counts.push_back(below);
  counts.push_back(below + per);
  return counts;
}

// "tensor parallel x pipeline parallel = 4 x 4"
std::string product_label(const std::vector<const Quantity*>& factors) {
  std::vector<std::string> names;
  std::vector<std::string> values;
  for (const Quantity* q : factors) {
    names.push_back(q->name == "tensor_model_parallel_size"     ? "tensor parallel"
                    : q->name == "pipeline_model_parallel_size" ? "pipeline parallel"
                    : q->name == "context_parallel_size"        ? "context parallel"
                                                                : "weight shards per TP rank (GTP)");
    values.push_back(std::to_string(**q));
  }
  if (factors.size() == 1) return names.front();  // "tensor parallel = 16"
  return fmt::format("{} = {}", fmt::join(names, " x "), fmt::join(values, " x "));
}

// Part of the layout is unknown (no recipe, `$CP`): the known sizes already
// decide when their product does not divide the world size.
void check_partly_known(const RuleContext& context, const std::vector<const Quantity*>& known,
                        const std::vector<const Quantity*>& unknown, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& w = d.world_size;
  int64_t product = 1;
  for (const Quantity* q : known) product *= **q;
  if (*w % product == 0) return;
  std::vector<std::string> unknown_names;
  for (const Quantity* q : unknown) unknown_names.push_back(q->name);
  const Quantity& primary = most_specific({known.front(), known.size() > 1 ? known[1] : known.front(),
                                           known.size() > 2 ? known[2] : known.front()});
  std::string world = w.how.empty() ? std::to_string(*w) : fmt::format("{} ({})", *w, w.how);
  Diagnostic diag = make_diagnostic(
      kWorldSizeDivisibility,
      fmt::format("world size {} is not divisible by {} = {}, so not by the whole tensor x pipeline x context "
                  "parallel product whatever {} {} (not known here)",
                  world, product_label(known), product, fmt::join(unknown_names, " and "),
                  unknown_names.size() == 1 ? "is" : "are"),
      span_for(primary));
  for (const Quantity* q : known) add_notes(diag, {q}, &primary);
  add_notes(diag, {&d.nodes, &d.gpus_per_node}, &primary);
  report(out, std::move(diag),
         fmt::format("change the parallel sizes so that their product divides {}, or use a multiple of {} GPUs", *w,
                     product));
}

// Values of the size the user wrote that make the product divide the world
// size (and, for TP, that the model's heads accept): the closest below
// first, then above. Fixes that break another check are dropped when the
// fixes are re-checked.
std::vector<int64_t> layout_alternatives(const RuleContext& context, const Quantity& q, int64_t others, int64_t world) {
  if (others <= 0 || world % others != 0) return {};
  std::vector<int64_t> fits = divisors(world / others);
  if (q.name == "tensor_model_parallel_size") {
    std::vector<int64_t> valid = valid_tensor_parallel_sizes(context, world);
    valid.insert(valid.begin(), 1);
    std::erase_if(fits, [&](int64_t v) { return std::find(valid.begin(), valid.end(), v) == valid.end(); });
  }
  std::vector<int64_t> out = closest_below(fits, *q, 2);
  std::reverse(out.begin(), out.end());
  for (int64_t v : fits) {
    if (v > *q) {
      out.push_back(v);
      break;
    }
  }
  return out;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& cp = d.context_parallel;
  const Quantity& gtp = d.weight_shard_groups;
  const Quantity& w = d.world_size;
  if (!w.known() || *w <= 0) return;
  std::vector<const Quantity*> known;
  std::vector<const Quantity*> unknown;
  for (const Quantity* q : {&tp, &pp, &cp, &gtp}) {
    if (q == &gtp && gtp.known() && *gtp == 1) continue;  // no weight shards
    if (q->known() && **q <= 0) return;  // another rule reports a size below 1
    (q->known() ? known : unknown).push_back(q);
  }
  if (known.empty()) return;
  if (!unknown.empty()) {
    check_partly_known(context, known, unknown, out);
    return;
  }
  int64_t model = *tp * *pp * *cp * *gtp;
  if (*w % model == 0) return;
  bool sharded = *gtp > 1;
  // The smallest world that also hosts the expert grid, when it is known.
  int64_t step = d.min_gpus.known() ? *d.min_gpus : model;
  // Point at the layout the user wrote; at the allocation only when the
  // layout is all recipe defaults.
  const Quantity& layout = sharded ? most_specific({&tp, &pp, &cp, &gtp}) : most_specific({&tp, &pp, &cp});
  bool layout_written = layer_rank(layout.where.layer) > layer_rank(Layer::Recipe);
  const Quantity& primary = layout_written ? layout : most_specific({&d.nodes, &d.gpus_per_node, &layout});
  std::string world = w.how.empty() ? std::to_string(*w) : fmt::format("{} ({})", *w, w.how);
  std::string sizes = sharded ? fmt::format("tensor x pipeline x context parallel x weight shards per TP rank (GTP) = "
                                            "{} x {} x {} x {}",
                                            *tp, *pp, *cp, *gtp)
                              : fmt::format("tensor x pipeline x context parallel = {} x {} x {}", *tp, *pp, *cp);
  Diagnostic diag = make_diagnostic(
      kWorldSizeDivisibility,
      fmt::format("world size {} is not divisible by {} = {}; valid GPU counts are multiples of {} ({}, {}, {}, ...)",
                  world, sizes, model, step, step, 2 * step, 3 * step),
      span_for(primary));
  if (sharded) {
    add_notes(diag, {&tp, &pp, &cp, &gtp, &d.nodes, &d.gpus_per_node}, &primary);
  } else {
    add_notes(diag, {&tp, &pp, &cp, &d.nodes, &d.gpus_per_node}, &primary);
  }
  if (d.min_gpus.known() && *d.min_gpus != model) {
    diag.notes.push_back(Note{fmt::format("the expert grid needs a multiple of {} too: minimum GPUs = {} = {}",
                                          *d.min_gpus, *d.min_gpus, d.min_gpus.how),
                              {}});
  }
  // Changing the configuration comes before asking for other hardware.
  if (layout_written && &layout != &gtp) {
    for (int64_t v : layout_alternatives(context, layout, model / *layout, *w)) {
      diag.fixes.push_back(set_value_fix(layout, v));
    }
  }
  if (d.nodes.known() && d.gpus_per_node.known()) {
    diag.help = fmt::format("change the parallel sizes so that their product divides {}, or run on a multiple of "
                            "{} GPUs",
                            *w, step);
    for (int64_t count : valid_node_counts(step, *d.gpus_per_node, *d.nodes)) {
      diag.fixes.push_back(set_value_fix(d.nodes, count));
    }
  } else {
    diag.help = fmt::format("use a multiple of {} GPUs, or change the parallel sizes so that their product "
                            "divides {}",
                            step, *w);
  }
  diag.help_from_fixes = true;
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kWorldSizeDivisibility = {
    .code = "MB101",
    .name = "world-size-divisibility",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "the number of GPUs must be a multiple of tensor x pipeline x context parallel",
    .doc = R"md(Megatron lays ranks out as a grid: `W = TP x PP x CP x DP`. When the world size `W` (nodes x
GPUs per node, from `#SBATCH`, `srun`, `torchrun` or `train.sh`) is not a multiple of
`TP x PP x CP`, the data-parallel size is fractional and start-up fails: Megatron Bridge's
`get_data_parallel_size` asserts "world size (W) is not divisible by total_model_size", and
`parallel_state.initialize_model_parallel` raises the same for Megatron-LM.

Megatron-LM's `--tensor-parallel-num-weight-shards` (Megatron-Core 0.19; generalized tensor
parallelism, GTP = shards / TP) adds ranks of their own to the model-parallel group: core_v0.19.0
`megatron/training/arguments.py` asserts "world size (W) is not divisible by total_model_size" with
`total_model_size = TP x PP x CP x GTP`, and `parallel_state.initialize_model_parallel` builds the
same grid (Megatron Bridge does not pass GTP to it). The data-parallel size is then
`W / (TP x PP x CP x GTP)` (the model replicas), while each GTP rank still takes its own micro-batch,
so the batch checks divide by `MBS x DP x GTP`.

The message lists the valid GPU counts: multiples of `PP x lcm(TP x CP, EP x ETP)`, the
smallest world that hosts both the dense and the expert grid (not the full product
`TP x PP x CP x EP x ETP`, which over-allocates).)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 3 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe llama3_70b_pretrain_32gpu_h100_bf16_config\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 4 --nproc-per-node 8 "
     "scripts/training/run_recipe.py --recipe llama3_70b_pretrain_32gpu_h100_bf16_config\n"},
    .check = check,
    .checks = "MC A1, BR V1, PS 1, PS 3",
};

}  // namespace mblint
