// DeepSeek V4's hybrid attention has its own recompute plan (mla_up_proj,
// mhc) and offloads through core_attn/attn_proj: the generic core-attention
// checkpoint and the qkv_linear offload hooks are refused when it is built.
#include "rules/support/parallel_support.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kDsv4AttentionRecomputeOffload;

namespace {

void reject(const RuleContext& context, const Dsv4Attention& dsv4, std::string message, const NameList& list,
            std::string help, std::vector<Diagnostic>& out) {
  Diagnostic diag = make_diagnostic(kDsv4AttentionRecomputeOffload, std::move(message),
                                    first_span(context.job, {primary_span(list.where)}));
  if (list.defaulted) diag.notes.push_back(note_for(list));
  Span variant = primary_span(dsv4.where);
  if (variant.valid()) diag.notes.push_back(Note{"DeepSeek V4's hybrid attention comes from here", variant});
  report(out, std::move(diag), std::move(help));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Dsv4Attention dsv4 = dsv4_attention(job);
  if (!dsv4.on) return;
  // attention.py:391-394: checkpoint_core_attention is selective recompute
  // with "core_attn" (Megatron-Core's default module list).
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (granularity.is("selective")) {
    NameList modules = recompute_modules(job);
    if (modules.contains("core_attn")) {
      reject(context, dsv4,
             fmt::format("recompute_modules {}has 'core_attn': DeepSeek V4's hybrid attention asserts "
                         "\"Checkpoint core attention is not supported in DSv4 Hybrid Attention.\"",
                         modules.defaulted ? "(the default) " : ""),
             modules,
             "recompute DeepSeek V4's own modules instead, as its recipes do: recompute_modules: [moe_act, mhc, "
             "mla_up_proj]",
             out);
    }
  }
  // attention.py:396-399: offload_qkv_linear is fine-grained offloading
  // with "qkv_linear".
  Setting offloading = read_flag(job, "model.fine_grained_activation_offloading");
  if (offloading.value.value_or(false)) {
    NameList offloaded = read_names(job, "model.offload_modules");
    if (offloaded.contains("qkv_linear")) {
      reject(context, dsv4,
             "offload_modules has 'qkv_linear': DeepSeek V4's hybrid attention asserts \"Offload qkv linear is not "
             "supported in DSv4 Hybrid Attention.\"",
             offloaded, "drop 'qkv_linear' from offload_modules (core_attn and attn_proj are supported)", out);
    }
  }
}

}  // namespace

extern const RuleInfo kDsv4AttentionRecomputeOffload = {
    .code = "MB823",
    .name = "dsv4-attention-recompute-offload",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "DeepSeek V4's hybrid attention refuses core_attn recompute and qkv_linear offloading",
    .doc = R"md(DeepSeek V4's hybrid attention (Megatron-Core's experimental attention variant `dsv4_hybrid`,
built by Megatron Bridge's `DeepSeekV4Bridge` and its `deepseek_v4_*` recipes, 067f987df03b)
asserts, when it is built, that two generic attention options are off
(`megatron/core/transformer/experimental_attention_variant/deepseek_v4_hybrid_attention.py:94-99`,
NVIDIA/Megatron-LM dev d48bd6be0a85):

* "Checkpoint core attention is not supported in DSv4 Hybrid Attention.": the base `Attention`
  checkpoints core attention under selective recompute with `core_attn` in `recompute_modules`
  (`megatron/core/transformer/attention.py:391-394`), and `core_attn` is Megatron-Core's default
  module list, so `recompute_granularity: selective` with no modules fails too;
* "Offload qkv linear is not supported in DSv4 Hybrid Attention.": fine-grained activation
  offloading with `qkv_linear` in `offload_modules` (`attention.py:396-399`).

The recipes recompute `moe_act`, `mhc` and (GB200) `mla_up_proj`, and offload nothing
(`src/megatron/bridge/recipes/deepseek/{h100,gb200}/deepseek_v4.py`).

**Version.** As `dsv4-tensor-parallel`: the variant exists only on Megatron-LM's `dev` branch.)md",
    .bad = {"override.yaml", "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn]\n",
            "override.yaml --recipe deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config --nodes 16 --gpus-per-node 4"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  recompute_modules: [moe_act, mhc]\n"},
    .check = check,
};

}  // namespace mblint
