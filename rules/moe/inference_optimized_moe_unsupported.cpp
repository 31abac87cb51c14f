// transformer_impl: inference_optimized builds decode-oriented MoE layers
// that support a narrow set of options.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kInferenceOptimizedMoeUnsupported;

namespace {

using namespace moe;

void report(std::vector<Diagnostic>& out, const Field& impl, const Field& option, std::string what,
            std::string upstream, std::string help, std::string fix_value) {
  report(
      out,
      diagnostic_at(
          kInferenceOptimizedMoeUnsupported,
          fmt::format(
              "transformer_impl inference_optimized with {}: Megatron-Core raises ValueError (\"{}\") when the model "
              "config is finalized",
              what, upstream),
          {&option, &impl}),
      std::move(help), {set_field_fix(option, std::move(fix_value)), set_field_fix(impl, "transformer_engine")});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  Field impl = read_field(job, "model.transformer_impl");
  if (impl.text() != "inference_optimized" || !is_moe(d)) return;
  if (splits(d.expert_tensor_parallel)) {
    Field etp = from_quantity(d.expert_tensor_parallel);
    report(out, impl, etp, fmt::format("expert_tensor_parallel_size {}", *d.expert_tensor_parallel),
           "Inference-optimized MoE layers does not support expert tensor parallelism.",
           "use expert_tensor_parallel_size 1", "1");
  }
  Field factor = read_field(job, "model.moe_expert_capacity_factor");
  if (factor.known() && !factor.is_null()) {
    report(out, impl, factor, fmt::format("moe_expert_capacity_factor {}", factor.display()),
           "Inference-optimized MoE layers only support dropless MoE",
           "remove moe_expert_capacity_factor (dropless MoE)", "null");
  }
  Field padding = read_field(job, "model.moe_router_padding_for_quantization");
  if (padding.boolean() == true) {
    report(out, impl, padding, "moe_router_padding_for_quantization",
           "Inference-optimized MoE layers do not support padded routing map for quantization.",
           "set moe_router_padding_for_quantization to false", "false");
  }
  Field dtype = read_field(job, "model.moe_router_dtype");
  if (dtype.known() && dtype.text() != "fp32") {
    report(out, impl, dtype, fmt::format("moe_router_dtype {}", dtype.is_null() ? "unset" : dtype.display()),
           "--transformer-impl='inference_optimized' requires --moe-router-dtype=fp32",
           "set moe_router_dtype to fp32", "fp32");
  }
}

}  // namespace

extern const RuleInfo kInferenceOptimizedMoeUnsupported = {
    .code = "MB720",
    .name = "inference-optimized-moe-unsupported",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "inference-optimized MoE layers need ETP 1, no capacity factor, no router padding, and fp32 routing",
    .doc = R"md(`transformer_impl: inference_optimized` builds MoE layers tuned for decoding. Megatron-Core's
`TransformerConfig.__post_init__` rejects, for an MoE model, when the model config is finalized:

* `expert_tensor_parallel_size` above 1 ("Inference-optimized MoE layers does not support expert
  tensor parallelism.");
* a `moe_expert_capacity_factor` ("Inference-optimized MoE layers only support dropless MoE");
* `moe_router_padding_for_quantization` ("... do not support padded routing map for quantization.");
* a `moe_router_dtype` other than `fp32`, unset included ("--transformer-impl='inference_optimized'
  requires --moe-router-dtype=fp32 to avoid costly dtype conversions during decode.").

The grouped-GEMM backend choices that follow (FlashInfer, vLLM, MXFP8) are inference options outside
training configs and are not checked.)md",
    .bad = {"override.yaml",
     "model:\n  transformer_impl: inference_optimized\n  moe_router_dtype: fp32\n  moe_expert_capacity_factor: 1.0\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content =
     "model:\n  transformer_impl: inference_optimized\n  moe_router_dtype: fp32\n  moe_expert_capacity_factor: null\n"},
    .check = check,
    .checks = "MC G27",
};

}  // namespace mblint
