// DeepSeek V4's hybrid attention runs on one tensor-parallel rank: its
// single 512-wide MQA head, grouped output projection and compressors are
// not split, and Megatron-Core refuses TP > 1 outright.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kDsv4TensorParallel;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& tp = context.derived.tensor_parallel;
  if (!splits(tp)) return;
  Dsv4Attention dsv4 = dsv4_attention(context.job);
  if (!dsv4.on) return;
  Diagnostic diag = finding(
      kDsv4TensorParallel,
      fmt::format("{}: DeepSeek V4's hybrid attention (experimental_attention_variant dsv4_hybrid) runs at tensor "
                  "parallel size 1 only; Megatron-Core asserts \"DSv4 Hybrid Attention only supports TP size 1.\"",
                  named(tp)),
      {&tp});
  Span variant = primary_span(dsv4.where);
  if (variant.valid()) diag.notes.push_back(Note{"DeepSeek V4's hybrid attention comes from here", variant});
  report(out, std::move(diag),
         "set tensor_model_parallel_size 1 (the DeepSeek V4 recipes split the model with expert and pipeline "
         "parallelism instead)",
         {set_value_fix(tp, 1)});
}

}  // namespace

extern const RuleInfo kDsv4TensorParallel = {
    .code = "MB211",
    .name = "dsv4-tensor-parallel",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "DeepSeek V4's hybrid attention (dsv4_hybrid) supports tensor parallel size 1 only",
    .doc = R"md(DeepSeek-V4-Flash and -Pro (Megatron Bridge's `DeepSeekV4Bridge` and its `deepseek_v4_*`
recipes, 067f987df03b) build Megatron-Core's experimental attention variant `dsv4_hybrid`, whose
attention is not split over tensor-parallel ranks. Megatron-Core refuses TP > 1 twice:
`TransformerConfig.__post_init__` asserts "DSv4 Hybrid Attention only supports TP size 1."
(`megatron/core/transformer/transformer_config.py:1760-1762`), and so does the attention module
when it is built (`megatron/core/transformer/experimental_attention_variant/deepseek_v4_hybrid_attention.py:90-92`),
both at NVIDIA/Megatron-LM dev d48bd6be0a85. Every DeepSeek V4 recipe sets
`tensor_model_parallel_size = 1` and `sequence_parallel = False`
(`src/megatron/bridge/recipes/deepseek/{h100,gb200,gb300}/deepseek_v4.py`).

**Version.** The variant exists only on Megatron-LM's `dev` branch (no Megatron-Core release,
nor `main`, carries `deepseek_v4_hybrid_attention.py`; the older `dsv4` branch, 26b830a6, is a
TP 1 prototype that asserts the same in `dsv4_hybrid_attention.py:79`); the rule applies to a job whose variant is
`dsv4_hybrid`, as written or, when unwritten, because the catalog records the recipe's model as
DeepSeek V4. A job with no such variant is not checked.

The fix sets TP 1; `mblint plan` never proposes TP > 1 for these models.)md",
    .bad = {"override.yaml", "model:\n  tensor_model_parallel_size: 2\n",
            "override.yaml --recipe deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config --nodes 16 --gpus-per-node 4"},
    .good = {.content = "model:\n  tensor_model_parallel_size: 1\n"},
    .check = check,
};

}  // namespace mblint
