// add_bias_linear in an MoE model: the experts support a bias only without
// expert tensor parallelism, the shared experts never, and TE's grouped MLP
// not together with the fused bias-dropout-add.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeLinearBiasUnsupported;

namespace {

using namespace moe;

void check_expert_tensor_parallel(const RuleContext& context, const Field& bias, std::vector<Diagnostic>& out) {
  const Quantity& etp = context.derived.expert_tensor_parallel;
  if (!etp.known() || *etp == 1) return;
  Field etp_field = from_quantity(etp);
  // An unset ETP follows TP (Megatron-LM, Megatron-Core): point at TP then.
  Field tp_field = from_quantity(context.derived.tensor_parallel);
  bool follows_tp = !located(etp_field) && context.derived.tensor_parallel.known() &&
                    *context.derived.tensor_parallel == *etp;
  Diagnostic diag = diagnostic_at(
      kMoeLinearBiasUnsupported,
      fmt::format("add_bias_linear is true with expert_tensor_parallel_size {}: Megatron-Core asserts \"Bias in Moe is "
                  "only supported when ETP==1\" when the model config is finalized",
                  *etp),
      {&bias, &etp_field});
  if (follows_tp && located(tp_field) && !located(bias)) {
    diag.where = span_for(tp_field);
    add_field_notes(diag, {&tp_field}, &tp_field);
  }
  report(out, std::move(diag),
         "set add_bias_linear to false (Megatron-LM: --disable-bias-linear), or expert_tensor_parallel_size 1",
         {set_field_fix(bias, "false"), set_value_fix(etp, 1)});
}

void check_shared_experts(const Job& job, const Field& bias, std::vector<Diagnostic>& out) {
  Field shared = read_field(job, "model.moe_shared_expert_intermediate_size");
  std::optional<int64_t> size = shared.integer();
  if (!size || *size <= 0) return;
  report(out,
         diagnostic_at(
             kMoeLinearBiasUnsupported,
             fmt::format(
                 "add_bias_linear is true with shared experts (moe_shared_expert_intermediate_size {}): the shared "
                 "experts assert \"bias is not supported in the shared experts\" when the model is built",
                 *size),
             {&bias, &shared}),
         "set add_bias_linear to false (Megatron-LM: --disable-bias-linear)", {set_field_fix(bias, "false")});
}

void check_grouped_mlp_fusion(const Job& job, const Field& bias, std::vector<Diagnostic>& out) {
  Field fusion = read_field(job, "model.bias_dropout_fusion");
  Field grouped = read_field(job, "model.moe_grouped_gemm");
  Field impl = read_field(job, "model.transformer_impl");
  if (fusion.boolean() != true || grouped.boolean() != true) return;
  std::optional<std::string> implementation = impl.text();
  if (!implementation || *implementation == "local") return;  // TEGroupedMLP only with Transformer Engine
  Diagnostic diag = diagnostic_at(
      kMoeLinearBiasUnsupported,
      "add_bias_linear is true with moe_grouped_gemm and bias_dropout_fusion: TEGroupedMLP asserts "
      "\"bias_dropout_fusion is not supported in TEGroupedMLP when add_bias_linear=True\" when the model is built",
      {&bias, &fusion, &grouped});
  add_field_notes(diag, {&impl}, nullptr);
  report(out, std::move(diag),
         "set bias_dropout_fusion to false (GPT-OSS's provider does), or add_bias_linear to false",
         {set_field_fix(fusion, "false"), set_field_fix(bias, "false")});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_moe(context.derived)) return;
  Field bias = read_field(context.job, "model.add_bias_linear");
  if (bias.boolean() != true) return;
  check_expert_tensor_parallel(context, bias, out);
  check_shared_experts(context.job, bias, out);
  check_grouped_mlp_fusion(context.job, bias, out);
}

}  // namespace

extern const RuleInfo kMoeLinearBiasUnsupported = {
    .code = "MB705",
    .name = "moe-linear-bias-unsupported",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "linear-layer bias in an MoE model needs ETP = 1, no shared experts, and no bias-dropout fusion in TE's grouped MLP",
    .doc = R"md(`add_bias_linear` adds a bias to every linear layer, experts included. Megatron-Core supports
that in an MoE model only partly, and each case stops the job:

* with `expert_tensor_parallel_size` other than 1, `TransformerConfig.__post_init__` asserts
  "Bias in Moe is only supported when ETP==1" (when the model config is finalized);
* with shared experts (`moe_shared_expert_intermediate_size` set), `SharedExpertMLP` asserts "bias
  is not supported in the shared experts, please set '--disable-bias-linear' instead" when the
  model is built;
* with `moe_grouped_gemm` under Transformer Engine and `bias_dropout_fusion`, `TEGroupedMLP`
  asserts "bias_dropout_fusion is not supported in TEGroupedMLP when add_bias_linear=True".

The default differs by program: Megatron-LM's `add_bias_linear` is **true** unless
`--disable-bias-linear` is given, so an MoE launch with ETP > 1 (ETP defaults to TP there) or
shared experts fails without that flag. Megatron Bridge's MoE providers set `add_bias_linear = False`
(Qwen3, DeepSeek, GLM, Kimi) except GPT-OSS, which sets it true together with
`bias_dropout_fusion = False` and runs ETP 1. mblint reads the value the job writes (or the
dataclass default of a full dump, or Megatron-LM's default); a recipe's provider value is not in its
catalog, so a recipe-based job that does not write `add_bias_linear` is not checked.)md",
    .bad = {"override.yaml",
     "model:\n  add_bias_linear: true\n  expert_model_parallel_size: 2\n  expert_tensor_parallel_size: 2\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  add_bias_linear: true\n  expert_model_parallel_size: 2\n  expert_tensor_parallel_size: 1\n"},
    .check = check,
    .checks = "MC G6, MC G7",
};

}  // namespace mblint
