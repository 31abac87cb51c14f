// Megatron Bridge's experimental Megatron-FSDP v2 supports plain BF16
// data-parallel training only; everything else is refused at start-up.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kMegatronFsdpV2Unsupported;

namespace {

struct Violation {
  std::string what;
  Resolved value;
};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || job.versions.megatron_core < Version{0, 20, 0}) return;
  Resolved version = resolve(job, "ddp.megatron_fsdp_version");
  if (!version.known() || version.value->kind != ValueKind::Int || version.value->integer != 2) return;
  if (!is_on(resolve(job, "ddp.use_megatron_fsdp")) && !is_on(resolve(job, "dist.use_megatron_fsdp"))) return;
  std::vector<Violation> found;
  auto when = [&](std::string_view path, auto bad, std::string what) {
    Resolved r = resolve(job, path);
    if (r.known() && bad(*r.value)) found.push_back({std::move(what), std::move(r)});
  };
  auto on = [](const ConfigValue& v) { return truthy(v).value_or(false); };
  auto not_one = [](const ConfigValue& v) { return v.kind == ValueKind::Int && v.integer != 1; };
  auto not_null = [](const ConfigValue& v) { return !v.is_null(); };
  for (std::string_view path : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                                "model.context_parallel_size", "model.expert_model_parallel_size"}) {
    Resolved r = resolve(job, path);
    if (r.known() && not_one(*r.value)) {
      found.push_back({fmt::format("{}={}", path.substr(6), r.value->integer), std::move(r)});
    }
  }
  when("model.num_moe_experts", not_null, "MoE models");
  when("model.virtual_pipeline_model_parallel_size", not_null, "multiple model chunks");
  when("checkpoint.save", not_null, "checkpoint save");
  when("checkpoint.load", not_null, "checkpoint load");
  when("checkpoint.pretrained_checkpoint", not_null, "checkpoint loading");
  when("optimizer.loss_scale", not_null, "loss scaling");
  when("optimizer.clip_grad", [](const ConfigValue& v) { return as_number(&v).value_or(0) > 0; },
       "gradient clipping (clip_grad > 0)");
  when("optimizer.use_precision_aware_optimizer", on, "the precision-aware optimizer");
  when("optimizer.optimizer_cpu_offload", on, "optimizer CPU offload");
  when("optimizer.use_layer_wise_distributed_optimizer", on, "the layer-wise distributed optimizer");
  when("optimizer.optimizer_cuda_graph", on, "optimizer CUDA graphs");
  when("model.calculate_per_token_loss", on, "per-token loss normalization");
  when("dist.use_tp_pp_dp_mapping", on, "use_tp_pp_dp_mapping");
  when("rng.data_parallel_random_init", on, "data_parallel_random_init");
  when("ddp.num_distributed_optimizer_instances", not_one, "HSDP (num_distributed_optimizer_instances > 1)");
  when("ddp.outer_dp_sharding_strategy",
       [](const ConfigValue& v) { return v.kind == ValueKind::String && v.text != "no_shard"; },
       "outer DP sharding");
  when("model.cuda_graph_impl", [](const ConfigValue& v) { return v.kind == ValueKind::String && v.text != "none"; },
       "CUDA graphs");
  if (auto fp8 = mixed_precision_value(job, "fp8"); fp8 && truthy(*fp8).value_or(false)) {
    Resolved r;
    r.path = "mixed_precision.fp8";
    r.value = *fp8;
    found.push_back({"FP8", std::move(r)});
  } else {
    when("model.fp8", on, "FP8");
  }
  if (found.empty()) return;
  std::string list;
  for (const Violation& v : found) list += (list.empty() ? "" : ", ") + v.what;
  Diagnostic diag = make_diagnostic(kMegatronFsdpV2Unsupported,
                                    fmt::format("Megatron-FSDP v2 (ddp.megatron_fsdp_version 2) supports BF16 "
                                                "data-parallel training only; this job uses: {}",
                                                list),
                                    span_for(version));
  for (const Violation& v : found) diag.notes.push_back(note_for(v.value));
  report(out, std::move(diag), "set ddp.megatron_fsdp_version to 1, or drop what v2 does not support");
}

}  // namespace

extern const RuleInfo kMegatronFsdpV2Unsupported = {
    .code = "MB965",
    .name = "megatron-fsdp-v2-unsupported",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "Megatron-FSDP v2 with model parallelism, MoE, checkpoints, FP8 or another unsupported setting",
    .doc = R"md(`ddp.megatron_fsdp_version: 2` selects Megatron Bridge's experimental Megatron-FSDP v2, which
owns its sharded parameter and gradient storage. `_validate_and_apply_megatron_fsdp_v2_configs`
(`training/config.py`) raises `ValueError` at start-up for anything but plain BF16 data-parallel
training: "MFSDP V2 currently supports DP-only training; unsupported settings:
tensor_model_parallel_size=2", "MFSDP V2 does not currently support MoE models.", "... checkpoint save
and load are not yet supported.", "... does not currently support gradient clipping." (and loss
scaling, the precision-aware optimizer, optimizer CPU offload and CUDA graphs, the layer-wise
distributed optimizer, per-token loss, HSDP, outer DP sharding, `use_tp_pp_dp_mapping`,
`data_parallel_random_init`, FP8/FP4, CUDA graphs). mblint lists every one it can see; Bridge stops
at the first. The BF16 requirement itself (`model.bf16`, `params_dtype`) is left to the precision
rules.

Versions: v2 exists only with a Megatron-Core newer than 0.19 (Bridge imports it when present);
with 0.19 and older the v1 path runs, so the rule applies with `--megatron-core-version 0.20` or
later. Note that `optimizer.clip_grad` defaults to 1.0, so v2 needs `clip_grad: 0`.)md",
    .bad = {"override.yaml", "ddp:\n  use_megatron_fsdp: true\n  megatron_fsdp_version: 2\nmodel:\n  tensor_model_parallel_size: 2\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2 "
     "--megatron-core-version 0.20"},
    .good = {.content =
     "ddp:\n  use_megatron_fsdp: true\n  megatron_fsdp_version: 1\nmodel:\n  tensor_model_parallel_size: 2\n"},
    .check = check,
    .checks = "BR V20",
};

}  // namespace mblint
