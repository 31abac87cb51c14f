// Generalized tensor parallelism (GTP, Megatron-Core 0.19): each weight is
// split into tensor_parallel_num_weight_shards = TP x GTP shards, so the
// count must be a multiple of TP; GTP > 1 needs a single optimizer instance.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kTpWeightShardsInvalid;

namespace {

// The first problem with one shards field; false when it is fine.
bool check_field(const Quantity& shards, const Quantity& tp,
                 std::vector<Diagnostic>& out) {
  if (!shards.known() || !tp.known() || *tp <= 0) return false;
  bool below = *shards < *tp;
  if (!below && *shards % *tp == 0) return false;
  Diagnostic diag = make_diagnostic(
      kTpWeightShardsInvalid,
      below ? fmt::format("{} {} must be >= {} {}", shards.name, *shards, tp.name, *tp)
            : fmt::format("{} {} must be divisible by {} {} (it is {} x the GTP size)", shards.name, *shards,
                          tp.name, *tp, tp.name),
      span_for(most_specific({&shards, &tp})));
  add_notes(diag, {&shards, &tp}, &most_specific({&shards, &tp}));
  int64_t valid = std::max(*tp, nearest_multiple(*shards, *tp));
  report(out, std::move(diag),
         fmt::format("use {} {} (a multiple of {}), or null for no weight sharding beyond tensor parallelism",
                     shards.name, valid, *tp),
         {set_value_fix(shards, valid)});
  return true;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (context.job.versions.megatron_core < Version{0, 19, 0}) return;
  const Derived& d = context.derived;
  Quantity shards = config_int(context.job, "model.tensor_parallel_num_weight_shards");
  Quantity expert_shards = config_int(context.job, "model.expert_tensor_parallel_num_weight_shards");
  bool broken = check_field(shards, d.tensor_parallel, out);
  broken |= check_field(expert_shards, d.expert_tensor_parallel, out);
  if (broken) return;
  // GTP = shards / TP; a partial distributed optimizer is not supported with it.
  Quantity instances = config_int(context.job, "ddp.num_distributed_optimizer_instances");
  if (!splits(instances)) return;
  for (auto [field, tp] : {std::pair{&shards, &d.tensor_parallel}, std::pair{&expert_shards,
                                                                               &d.expert_tensor_parallel}}) {
    if (!field->known() || !tp->known() || *field->value / *tp->value <= 1) continue;
    int64_t gtp = *field->value / *tp->value;
    const Quantity& primary = most_specific({field, &instances});
    Diagnostic diag =
        finding_at(kTpWeightShardsInvalid,
                   fmt::format("{} {} with {} {} means a GTP size of {}, which Megatron-Core does not support with "
                               "num_distributed_optimizer_instances {}",
                               field->name, *field->value, tp->name, *tp->value, gtp, *instances),
                   primary, {field, tp, &instances});
    report(out, std::move(diag),
           fmt::format("set num_distributed_optimizer_instances to 1, or {} to null (or {})", field->name, *tp->value),
           {set_value_fix(instances, 1), set_value_fix(*field, *tp->value)});
    return;
  }
}

}  // namespace

extern const RuleInfo kTpWeightShardsInvalid = {
    .code = "MB105",
    .name = "tp-weight-shards-invalid",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "tensor_parallel_num_weight_shards must be a multiple of TP, and GTP needs one optimizer instance",
    .doc = R"md(Megatron-Core 0.19 added generalized tensor parallelism with weight rematerialization (GTP):
`model.tensor_parallel_num_weight_shards` (Megatron-LM `--tensor-parallel-num-weight-shards`) is
the total number of shards of each weight, `TP x GTP`, and GTP consumes its own ranks. The expert
variant `expert_tensor_parallel_num_weight_shards` is the same against
`expert_tensor_parallel_size`.

`ModelParallelConfig.__post_init__` raises "tensor_parallel_num_weight_shards (n) must be >=
tensor_model_parallel_size (t)" and "... must be divisible by tensor_model_parallel_size (t)" while
the model config is finalized; `initialize_model_parallel` then asserts "GTP_remat with
num_distributed_optimizer_instances > 1 is not yet supported." when GTP or expert GTP is above 1
and the distributed optimizer is split into instances.

Checked for Megatron-Core >= 0.19 only (`--megatron-core-version`); older releases have no such
field.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  tensor_parallel_num_weight_shards: 6\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  tensor_parallel_num_weight_shards: 8\n"},
    .check = check,
    .checks = "MC A10, MC A11",
};

}  // namespace mblint
