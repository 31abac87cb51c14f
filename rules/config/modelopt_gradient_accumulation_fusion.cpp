// Quantized (ModelOpt) models cannot fuse gradient accumulation into the
// weight-gradient GEMM.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kModeloptGradientAccumulationFusion;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved restore = resolve(job, "model.restore_modelopt_state");
  if (!is_on(restore)) return;
  Resolved fusion = resolve(job, "model.gradient_accumulation_fusion");
  if (!is_on(fusion)) return;
  report(out,
         finding(kModeloptGradientAccumulationFusion,
                 "model.restore_modelopt_state with gradient_accumulation_fusion: Megatron Bridge asserts "
                 "\"Gradient accumulation fusion is not supported with ModelOpt/Quantized models\"",
                 {&fusion, &restore}),
         "set model.gradient_accumulation_fusion to false");
}

}  // namespace

extern const RuleInfo kModeloptGradientAccumulationFusion = {
    .code = "MB974",
    .name = "modelopt-gradient-accumulation-fusion",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a ModelOpt (quantized) model with gradient_accumulation_fusion on",
    .doc = R"md(Restoring a ModelOpt quantization or sparsity state (`model.restore_modelopt_state`, used by the
quantization-aware training examples) replaces the linear layers with quantized ones whose weight
gradients cannot be accumulated by the fused wgrad GEMM. Megatron Bridge's
`ConfigContainer.validate()` asserts "Gradient accumulation fusion is not supported with
ModelOpt/Quantized models. Please set model.gradient_accumulation_fusion=False". The fusion's
default depends on the installed APEX/TE (`can_enable_gradient_accumulation_fusion`), so mblint
decides only when the value is written; the quantized Llama example sets it to False.)md",
    .bad = {"override.yaml", "model:\n  restore_modelopt_state: true\n  gradient_accumulation_fusion: true\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "model:\n  restore_modelopt_state: true\n  gradient_accumulation_fusion: false\n"},
    .check = check,
    .checks = "BR V31",
};

}  // namespace mblint
