// Megatron Bridge's Megatron-FSDP (v1) set-up rejects a few DDP and
// process-group options besides the checkpoint format.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kMegatronFsdpOptions;

namespace {

// Megatron-FSDP on, as Bridge decides it (dist or ddp), with its value.
std::optional<Resolved> megatron_fsdp(const Job& job) {
  for (std::string_view path : {"ddp.use_megatron_fsdp", "dist.use_megatron_fsdp"}) {
    Resolved r = resolve(job, path);
    if (is_on(r)) return r;
  }
  return std::nullopt;
}

// The v2 path replaces these checks: ddp.megatron_fsdp_version 2 on a
// Megatron-Core that has it (after 0.19).
bool v2_path(const Job& job) {
  Resolved version = resolve(job, "ddp.megatron_fsdp_version");
  return version.known() && version.value->kind == ValueKind::Int && version.value->integer == 2 &&
         job.versions.megatron_core >= Version{0, 20, 0};
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  auto fsdp = megatron_fsdp(job);
  if (!fsdp || v2_path(job)) return;
  Resolved manual = resolve(job, "ddp.fsdp_manual_registration");
  Resolved nccl_ub = resolve(job, "ddp.nccl_ub");
  if (is_on(manual) && is_off(nccl_ub)) {
    report(out,
           finding(kMegatronFsdpOptions,
                   "ddp.fsdp_manual_registration without ddp.nccl_ub: Megatron Bridge's Megatron-FSDP set-up asserts "
                   "\"DDP.fsdp_manual_registration requires DDP.nccl_ub!\"",
                   {&manual, &nccl_ub, &*fsdp}),
           "set ddp.nccl_ub to true, or fsdp_manual_registration to false");
  }
  Resolved mapping = resolve(job, "dist.use_tp_pp_dp_mapping");
  if (is_on(mapping)) {
    report(
        out,
        finding(kMegatronFsdpOptions,
                "dist.use_tp_pp_dp_mapping with Megatron-FSDP: Megatron Bridge asserts \"use_tp_pp_dp_mapping is not "
                "supported with Megatron FSDP\"",
                {&mapping, &*fsdp}),
        "set dist.use_tp_pp_dp_mapping to false");
  }
  Resolved strategy = resolve(job, "ddp.data_parallel_sharding_strategy");
  Resolved hash = resolve(job, "train.check_weight_hash_across_dp_replicas_interval");
  if (strategy.known() && strategy.value->kind == ValueKind::String && strategy.value->text == "optim_grads_params" &&
      hash.known() && !hash.value->is_null()) {
    report(
        out,
        finding(kMegatronFsdpOptions,
                "train.check_weight_hash_across_dp_replicas_interval with Megatron-FSDP's optim_grads_params sharding: "
                "Megatron Bridge asserts it \"is not supported with the Megatron-FSDP optim_grads_params sharding "
                "strategy\"",
                {&hash, &strategy, &*fsdp}),
        "set train.check_weight_hash_across_dp_replicas_interval to null");
  }
}

}  // namespace

extern const RuleInfo kMegatronFsdpOptions = {
    .code = "MB964",
    .name = "megatron-fsdp-options",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "options Megatron Bridge's Megatron-FSDP set-up rejects (manual registration, TP-PP-DP mapping, weight hashes)",
    .doc = R"md(When Megatron-FSDP is on (`dist.use_megatron_fsdp` or `ddp.use_megatron_fsdp`), Megatron
Bridge's `_validate_and_apply_megatron_fsdp_v1_configs` (`training/config.py`) turns on the
distributed optimizer and then asserts, at start-up:

* `ddp.fsdp_manual_registration` only with NCCL user buffers: "DDP.fsdp_manual_registration
  requires DDP.nccl_ub!";
* no `dist.use_tp_pp_dp_mapping`: "use_tp_pp_dp_mapping is not supported with Megatron FSDP"
  (Megatron-FSDP needs the default rank order);
* with the `optim_grads_params` sharding strategy, no
  `train.check_weight_hash_across_dp_replicas_interval` (the replicas are shards, there is no
  replica to compare).

The checkpoint format (`fsdp_dtensor`) is reported by `megatron-fsdp-restrictions` and
`CUDA_DEVICE_MAX_CONNECTIONS=1` by `cuda-device-max-connections`. The experimental v2 path
(`ddp.megatron_fsdp_version: 2`, Megatron-Core after 0.19) has its own rule.)md",
    .bad = {"override.yaml", "ddp:\n  use_megatron_fsdp: true\n  fsdp_manual_registration: true\n  nccl_ub: false\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "ddp:\n  use_megatron_fsdp: true\n  fsdp_manual_registration: true\n  nccl_ub: true\n"},
    .check = check,
    .checks = "BR V19, PS 75",
};

}  // namespace mblint
