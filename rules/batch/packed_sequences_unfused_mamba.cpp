// Megatron-Core's Mamba mixer takes packed sequences only on its memory-
// efficient path: with use_mamba_mem_eff_path off it asserts on the first
// forward step that receives packed_seq_params, which Megatron Bridge passes
// whenever the dataset packs sequences and Megatron-LM for --sft.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kPackedSequencesUnfusedMamba;

namespace {

// The release whose Mamba layer first hands packed_seq_params to the mixer,
// which asserts on its unfused path (megatron/core/ssm/mamba_mixer.py
// forward); earlier releases drop them before the mixer.
constexpr Version kAssertSince{0, 16, 0};

// Whether the job's model is known to have Mamba layers: its hybrid pattern
// has an 'M'.
bool has_mamba_layers(const Job& job) {
  std::optional<HybridPatternSetting> pattern = hybrid_layer_pattern(job);
  return pattern && pattern->text.find('M') != std::string::npos;
}

// The switch that makes the job train on packed sequences; nullopt when none
// is known to be on. Megatron Bridge: offline packing (whose specs Bridge
// requires with a positive size) or in-batch packing, as
// gpt_step._uses_packed_sequence_metadata reads them. Megatron-LM: --sft,
// whose batches pretrain_mamba.py / pretrain_hybrid.py always read packed.
std::optional<Quantity> packing_switch(const Job& job) {
  std::initializer_list<const char*> bridge = {"dataset.enable_offline_packing", "dataset.enable_in_batch_packing"};
  std::initializer_list<const char*> megatron_lm = {"dataset.sft"};
  for (const char* path : job.dialect == Dialect::MegatronLM ? megatron_lm : bridge) {
    Quantity on = as_quantity(read_flag(job, path));
    if (on.known() && *on == 1) return on;
  }
  return std::nullopt;
}

std::string help_for(const Job& job, const Quantity& packing) {
  if (job.dialect == Dialect::MegatronLM) {
    return "drop --disable-mamba-mem-eff-path (the fused path takes packed sequences)";
  }
  return fmt::format(
      "set model.use_mamba_mem_eff_path to true (the fused path takes packed sequences), or turn {} off{}",
      packing.name,
      packing.path == "dataset.enable_offline_packing" ? " and set dataset.offline_packing_specs to null" : "");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  bool dialect = job.dialect == Dialect::Bridge || job.dialect == Dialect::MegatronLM;
  if (!dialect || job.versions.megatron_core < kAssertSince) return;
  Setting path = read_flag(job, "model.use_mamba_mem_eff_path");
  if (!path.value || *path.value) return;
  if (!has_mamba_layers(job)) return;
  std::optional<Quantity> packing = packing_switch(job);
  if (!packing) return;
  Quantity unfused = as_quantity(path);
  Diagnostic diag = finding(
      kPackedSequencesUnfusedMamba,
      fmt::format("{} is true with use_mamba_mem_eff_path false: {} passes packed_seq_params to the model, and "
                  "Megatron-Core {}'s Mamba mixer asserts \"Training with packed sequences is not supported in the "
                  "non-memory-efficient code path.\" on the first training step",
                  packing->name, job.dialect == Dialect::MegatronLM ? "Megatron-LM" : "Megatron Bridge",
                  to_string(job.versions.megatron_core)),
      {&unfused, &*packing});
  // Both may be the recipe's, at one place: say where the path comes from too.
  if (unfused.where.layer == Layer::Recipe) diag.notes.insert(diag.notes.begin(), note_for(unfused));
  std::vector<Fix> fixes;
  if (job.dialect == Dialect::Bridge) fixes.push_back(set_setting_fix(path, true, FixSafety::Unsafe));
  report(out, std::move(diag), help_for(job, *packing), std::move(fixes));
}

}  // namespace

extern const RuleInfo kPackedSequencesUnfusedMamba = {
    .code = "MB617",
    .name = "packed-sequences-unfused-mamba",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "packed sequences on a Mamba model need the memory-efficient Mamba path (use_mamba_mem_eff_path)",
    .doc = R"md(Megatron-Core's Mamba mixer has two training paths. The memory-efficient one
(`use_mamba_mem_eff_path`, the default) runs the fused kernel and takes packed sequences (their
`seq_idx`); the other (`use_mamba_mem_eff_path: false`) runs conv1d and the chunked scan apart
and does not: `MambaMixer.forward` asserts "Training with packed sequences is not supported in the
non-memory-efficient code path." when it receives `packed_seq_params`
(`megatron/core/ssm/mamba_mixer.py:510-516` at 2a75ac12c54b, the commit Megatron Bridge
067f987df03b pins; the same assert in core_v0.16.0 to core_v0.19.0). Before core_v0.16.0 the Mamba
layer did not pass `packed_seq_params` to the mixer and there is no assert; mblint stays silent
for `--megatron-core-version` below 0.16 (Megatron Bridge 0.2.x pinned such a Megatron-Core: pass
its version with `--bridge-version 0.2`).

Megatron Bridge's `gpt_step` passes `packed_seq_params` whenever the batch carries packed-sequence
metadata (`training/gpt_step.py:578-603` at 067f987df03b), which the dataset provides with offline
packing (`dataset.enable_offline_packing`, whose `offline_packing_specs` Bridge requires with a
positive `packed_sequence_size`) or in-batch packing (`dataset.enable_in_batch_packing`)
(`_uses_packed_sequence_metadata`, `gpt_step.py:246-254`). The hybrid model hands them through
the stack to every Mamba layer (`megatron/core/models/hybrid/hybrid_model.py:528`,
`hybrid_block.py:383-391`, `megatron/core/ssm/mamba_layer.py:154-156`), so the job stops on its
first step.

NVIDIA's NemotronH 4B SFT and PEFT recipes do this: their provider sets `use_mamba_mem_eff_path=False`
(`recipes/nemotronh/h100/nemotronh.py:620`, `:1162`) and `_sft_common` / `_peft_common` turn
offline packing on (`recipes/common.py:165`, `:264`). The fix is the memory-efficient path
(`model.use_mamba_mem_eff_path: true`), or packing off (`dataset.enable_offline_packing: false`
with `dataset.offline_packing_specs: null`, which Bridge requires together).

A Megatron-LM launch meets the same assert with `--disable-mamba-mem-eff-path` and `--sft`:
`pretrain_mamba.py` (core_v0.16.0, core_v0.17.0: "SFT always uses packed sequence") and
`pretrain_hybrid.py` (core_v0.18.0 on; `pretrain_hybrid.py:118-119,320-353` at 2a75ac12c54b) read
SFT batches with `cu_seqlens` and pass `packed_seq_params`; the fix there is to drop
`--disable-mamba-mem-eff-path`. From core_v0.19.0 `--dataloader-inter-document-masking` makes
packed batches too; mblint does not read that flag.

The rule reads models whose hybrid layer pattern (the job's, or the catalog's record of the
recipe's model) has Mamba layers. When the path, the packing or the pattern is not known it stays
silent. Bridge releases before 0.6 named offline packing `dataset.packed_sequence_specs`, which
mblint's schema (Bridge 067f987df03b) does not read.)md",
    .bad = {"override.yaml", "model:\n  use_mamba_mem_eff_path: false\n",
            "override.yaml --recipe nemotronh_8b_sft_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  use_mamba_mem_eff_path: true\n"},
    .check = check,
};

}  // namespace mblint
