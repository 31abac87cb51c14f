// DeepSeek V4's compressed attention splits a sequence over context-parallel
// ranks only in contiguous blocks of packed (THD) sequences; Megatron-Core
// refuses the default zigzag split when the config is built.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kDsv4ContextParallel;

namespace {

// The partition mode when it is known not to be "contiguous": as written, or
// TransformerConfig's default "zigzag" (transformer_config.py:312 at
// d48bd6be0a85) when nobody sets it: a catalog recipe (none of them does), a
// Megatron-LM command line (--cp-partition-mode defaults to the field), or a
// full dump.
std::optional<TextSetting> not_contiguous(const Job& job) {
  TextSetting mode = config_text(job, "model.cp_partition_mode");
  if (mode.value) return *mode.value == "contiguous" ? std::nullopt : std::optional<TextSetting>(mode);
  if (mode.present) return std::nullopt;  // null or not text: not judged
  bool nobody_sets = job.recipe || job.config_complete || job.dialect == Dialect::MegatronLM;
  if (!nobody_sets) return std::nullopt;
  mode.value = "zigzag";
  mode.defaulted = true;
  return mode;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& cp = context.derived.context_parallel;
  if (!splits(cp)) return;
  Dsv4Attention dsv4 = dsv4_attention(context.job);
  if (!dsv4.on) return;
  std::optional<TextSetting> mode = not_contiguous(context.job);
  if (!mode) return;
  Diagnostic diag = finding(
      kDsv4ContextParallel,
      fmt::format("{} with cp_partition_mode {}{}: DeepSeek V4's hybrid attention (experimental_attention_variant "
                  "dsv4_hybrid) splits sequences over context-parallel ranks only in contiguous blocks; "
                  "Megatron-Core raises \"DSv4 Hybrid with context parallelism requires "
                  "cp_partition_mode='contiguous'.\"",
                  named(cp), *mode->value, mode->defaulted ? " (the default)" : ""),
      {&cp});
  Span written = primary_span(mode->where);
  if (written.valid()) diag.notes.push_back(Note{fmt::format("cp_partition_mode {} is set here", *mode->value), written});
  Span variant = primary_span(dsv4.where);
  if (variant.valid()) diag.notes.push_back(Note{"DeepSeek V4's hybrid attention comes from here", variant});
  report(out, std::move(diag),
         "set context_parallel_size 1, as the DeepSeek V4 recipes do; context parallelism needs cp_partition_mode "
         "contiguous and packed (THD) sequences",
         {set_value_fix(cp, 1)});
}

}  // namespace

extern const RuleInfo kDsv4ContextParallel = {
    .code = "MB414",
    .name = "dsv4-context-parallel",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "DeepSeek V4's hybrid attention (dsv4_hybrid) needs cp_partition_mode contiguous for CP > 1",
    .doc = R"md(DeepSeek V4's hybrid attention (Megatron-Core's experimental attention variant `dsv4_hybrid`,
built by Megatron Bridge's `DeepSeekV4Bridge` and its `deepseek_v4_*` recipes, 067f987df03b)
compresses each sequence in blocks of 4 or 128 tokens and attends over a sliding window, so a
context-parallel rank must hold one contiguous piece of every sequence. At NVIDIA/Megatron-LM dev
d48bd6be0a85:

* `TransformerConfig.__post_init__` raises "DSv4 Hybrid with context parallelism requires
  cp_partition_mode='contiguous'." when CP > 1 and `cp_partition_mode` is `zigzag`, the field's
  default (`megatron/core/transformer/transformer_config.py:1611-1616`, the default at `:312`);
* the contiguous mode in turn needs packed (THD) sequences: the config raises without a
  `sequence_packing_scheduler` (`:1566-1574`), and the attention raises "DSv4 Hybrid with CP
  requires qkv_format='thd'." on unpacked input
  (`experimental_attention_variant/deepseek_v4_hybrid_attention.py:266-271`).

The rule fires when CP > 1 and the partition mode is known not to be `contiguous`: written so, or
left at the default by a catalog recipe (none sets it), a Megatron-LM command line or a full
dump. A YAML file alone, which a recipe may complete, is not judged. Every DeepSeek V4 recipe runs
`context_parallel_size = 1`; the fix sets it. Whether a contiguous split also has packed
sequences is not checked.

**Version.** As `dsv4-tensor-parallel`: the variant exists only on Megatron-LM's `dev` branch; the
older `dsv4` branch (26b830a6) asserts CP 1 outright (`dsv4_hybrid_attention.py:80`).)md",
    .bad = {"override.yaml", "model:\n  context_parallel_size: 2\n",
            "override.yaml --recipe deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config --nodes 16 --gpus-per-node 4"},
    .good = {.content = "model:\n  context_parallel_size: 1\n"},
    .check = check,
};

}  // namespace mblint
