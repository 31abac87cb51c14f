// Partial distributed optimizer: the optimizer state is sharded within
// num_distributed_optimizer_instances equal slices of the DP x CP group (dense
// parameters) and of the expert data-parallel group (expert parameters).
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kDistributedOptimizerInstancesDivisibility;

namespace {

// Instance counts > 1 that divide both DP x CP and (when known) the expert
// data-parallel size, ascending.
std::vector<int64_t> fitting_instances(const Derived& d) {
  if (!d.data_parallel.known() || !d.context_parallel.known()) return {};
  int64_t common = *d.data_parallel * *d.context_parallel;
  if (d.expert_data_parallel.known()) common = gcd64(common, *d.expert_data_parallel);
  std::vector<int64_t> out;
  for (int64_t v : divisors(common)) {
    if (v > 1) out.push_back(v);
  }
  return out;
}

// `group` is the derived size that does not split; `involved` the settings
// behind it.
void report(const RuleContext& context, const Quantity& instances, std::string message, const Quantity& group,
            std::initializer_list<const Quantity*> involved, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  Diagnostic diag = make_diagnostic(kDistributedOptimizerInstancesDivisibility, std::move(message),
                                    span_for(instances).valid() ? span_for(instances)
                                                                : span_for(most_specific(involved)));
  add_notes(diag, {&instances}, span_for(instances).valid() ? &instances : nullptr);
  diag.notes.push_back(derived_note(group));
  add_notes(diag, involved, nullptr);
  std::vector<int64_t> choices = closest_below(fitting_instances(d), *instances, 2);
  diag.help = choices.empty() ? "use num_distributed_optimizer_instances 1, or a world size whose data-parallel "
                                "groups it divides"
                              : fmt::format("use num_distributed_optimizer_instances {} (dividing every "
                                            "data-parallel group), or 1",
                                            join_or(choices));
  for (auto it = choices.rbegin(); it != choices.rend(); ++it) diag.fixes.push_back(set_value_fix(instances, *it));
  diag.fixes.push_back(set_value_fix(instances, 1));
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  Quantity instances = config_int(context.job, "ddp.num_distributed_optimizer_instances");
  if (!splits(instances)) return;
  const Quantity& dp = d.data_parallel;
  const Quantity& cp = d.context_parallel;
  const Quantity& edp = d.expert_data_parallel;
  if (dp.known() && cp.known() && *cp > 0 && (*dp * *cp) % *instances != 0) {
    std::string group = *cp > 1 ? fmt::format("data-parallel x context-parallel size {} x {} = {}", *dp, *cp,
                                              *dp * *cp)
                                : fmt::format("data-parallel size {}", *dp);
    report(context, instances,
           fmt::format("{} is not divisible by num_distributed_optimizer_instances {}: the dense optimizer "
                       "state cannot be split into equal instances",
                       group, *instances),
           dp, {&cp}, out);
    return;
  }
  if (edp.known() && *edp % *instances != 0) {
    report(context, instances,
           fmt::format("expert data-parallel size {} is not divisible by num_distributed_optimizer_instances {}: "
                       "the expert optimizer state cannot be split into equal instances",
                       *edp, *instances),
           edp, {&d.expert_parallel, &d.expert_tensor_parallel}, out);
  }
}

}  // namespace

extern const RuleInfo kDistributedOptimizerInstancesDivisibility = {
    .code = "MB104",
    .name = "distributed-optimizer-instances-divisibility",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "num_distributed_optimizer_instances must divide DP x CP and the expert data-parallel size",
    .doc = R"md(`ddp.num_distributed_optimizer_instances` (Megatron-LM `--num-distributed-optimizer-instances`)
splits the data-parallel ranks into that many replicas of the distributed optimizer, each
sharding the optimizer state over its slice. Dense gradients are reduced over the DP x CP group
(`DP = W / (TP x PP x CP)`), expert gradients over the expert data-parallel group
(`EDP = W / (ETP x EP x PP)`, context-parallel ranks included); both must split evenly.

Megatron-Core's `initialize_model_parallel` asserts at start-up: "Data parallel size should be
divisible by partial DistOpt shard factor" for `DP x CP`, and "Expert data parallel size should
be divisible by partial DistOpt shard factor" for `EDP`. Megatron Bridge's decentralized
process-group path (`dist.use_decentralized_pg`) asserts the same for the expert group.

The message names the first group that does not split; the help lists instance counts that
divide both.)md",
    .bad = {"override.yaml",
     "ddp:\n  num_distributed_optimizer_instances: 3\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "ddp:\n  num_distributed_optimizer_instances: 2\n"},
    .check = check,
    .checks = "MC A5, MC A6, PS 8",
};

}  // namespace mblint
