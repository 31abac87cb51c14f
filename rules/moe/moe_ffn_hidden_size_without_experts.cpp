// moe_ffn_hidden_size sizes the experts' MLP; on a model without experts
// Megatron-Core 0.13-0.17 asserts, and 0.18+ rejects it unless moe_layer_freq
// says some layers are dense (then it is dropped with a warning).
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeFfnHiddenSizeWithoutExperts;

namespace {

using namespace moe;

bool without_experts(const Job& job, const Field& experts) {
  if (experts.is_null()) return true;
  // validate_args turns `--num-experts 0` into None before the model config sees it.
  return runs_validate_args(job) && experts.integer() == 0;
}

// moe_layer_freq; a recipe of a dense model never sets it, so its dataclass
// default (1) applies there.
Field layer_freq(const Job& job) {
  Field freq = read_field(job, "model.moe_layer_freq");
  if (freq.present || !job.recipe || !job.recipe->dims || job.recipe->dims->num_moe_experts != 0) return freq;
  freq.value = make_int(1);
  freq.value.where.layer = Layer::SchemaDefault;
  freq.present = true;
  freq.defaulted = true;
  freq.default_from = fmt::format("the default: recipe {} builds a dense model", job.recipe_name);
  return freq;
}

// Megatron-Core's "mixed model" test: a list with a dense (0) entry, or an
// int frequency above 1 (layer i is MoE iff i % N == 0).
std::optional<bool> marks_dense_layers(const Field& freq) {
  if (!freq.known()) return std::nullopt;
  if (auto every = freq.integer(); every && freq.value.kind == ValueKind::Int) return *every > 1;
  if (freq.value.is_list()) {
    for (const ConfigValue& item : freq.value.items) {
      if (item.is_unknown()) return std::nullopt;
      if (as_int(&item) == 0) return true;
    }
    return false;
  }
  return std::nullopt;
}

// Megatron-Core 0.13 added the check (an assert); 0.18 made it a ValueError
// with the mixed-model exception.
constexpr Version kCoreChecksFrom{0, 13, 0};
constexpr Version kCoreMixedExceptionFrom{0, 18, 0};

// Megatron-Core 0.12: nothing checks it and nothing reads it.
Diagnostic never_read(const Field& ffn, const Field& experts, const std::string& none, const Version& core) {
  Diagnostic diag = diagnostic_at(
      kMoeFfnHiddenSizeWithoutExperts,
      fmt::format("moe_ffn_hidden_size {} is set but num_moe_experts is {}: Megatron-Core {} does not check it and "
                  "never reads it (a dense model)",
                  *ffn.integer(), none, to_string(core)),
      {&ffn, &experts});
  diag.severity = Severity::Warning;
  diag.help = "remove moe_ffn_hidden_size, or set num_moe_experts if the model should have experts";
  diag.fixes.push_back(set_field_fix(ffn, "null", FixSafety::Safe));
  return diag;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field experts = read_field(job, "model.num_moe_experts");
  Field ffn = read_field(job, "model.moe_ffn_hidden_size");
  if (!without_experts(job, experts) || !ffn.integer()) return;
  Field freq = layer_freq(job);
  std::string none = experts.is_null() ? experts.display() : "0, which validate_args turns into None";
  const Version& core = job.versions.megatron_core;
  if (core < kCoreChecksFrom) {
    out.push_back(never_read(ffn, experts, none, core));
    return;
  }
  std::string failure;
  if (core < kCoreMixedExceptionFrom) {
    // An assert, whatever moe_layer_freq says.
    failure = fmt::format("Megatron-Core {} asserts \"moe_ffn_hidden_size must be None when num_experts is not set.\" "
                          "when the model config is finalized",
                          to_string(core));
  } else {
    std::optional<bool> mixed = marks_dense_layers(freq);
    if (!mixed) return;
    if (*mixed) {
      Diagnostic diag = diagnostic_at(
          kMoeFfnHiddenSizeWithoutExperts,
          fmt::format("moe_ffn_hidden_size {} is set but num_moe_experts is {}: Megatron-Core ignores it "
                      "(moe_layer_freq marks dense layers) and warns",
                      *ffn.integer(), none),
          {&ffn, &experts, &freq});
      diag.severity = Severity::Warning;
      report(out, std::move(diag),
             "remove moe_ffn_hidden_size, or set num_moe_experts if the model should have experts",
             {set_field_fix(ffn, "null", FixSafety::Safe)});
      return;
    }
    failure = "Megatron-Core raises ValueError when the model config is finalized";
  }
  Diagnostic diag = diagnostic_at(
      kMoeFfnHiddenSizeWithoutExperts,
      fmt::format("moe_ffn_hidden_size {} is set but num_moe_experts is {}: {}", *ffn.integer(), none, failure),
      {&ffn, &experts});
  if (core >= kCoreMixedExceptionFrom) add_field_notes(diag, {&freq}, nullptr);  // why it is not the exception
  report(out, std::move(diag), "remove moe_ffn_hidden_size (a dense model), or set num_moe_experts",
         {set_field_fix(ffn, "null")});
}

}  // namespace

extern const RuleInfo kMoeFfnHiddenSizeWithoutExperts = {
    .code = "MB704",
    .name = "moe-ffn-hidden-size-without-experts",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "moe_ffn_hidden_size is set on a model without experts",
    .doc = R"md(`moe_ffn_hidden_size` is the hidden size of each expert's MLP. When `num_moe_experts` is
null (a dense model) Megatron-Core's `TransformerConfig.__post_init__` raises
`ValueError("moe_ffn_hidden_size is set but num_moe_experts is None. Please set num_moe_experts or
remove moe_ffn_hidden_size.")` — the job stops when the model config is finalized. Usually an
override meant for an MoE recipe was applied to a dense one, or `num_moe_experts` was cleared.

Per release (`megatron/core/transformer/transformer_config.py`):

* core_v0.13.0 to core_v0.17.0: an assert, "moe_ffn_hidden_size must be None when num_experts is not
  set.", whatever `moe_layer_freq` says (an **error**).
* core_v0.18.0 and newer: the `ValueError` above, except for a model whose `moe_layer_freq` marks
  dense layers (a list with a 0, or an integer above 1): Megatron-Core then only warns and drops
  `moe_ffn_hidden_size` (a **warning**; removing it is a safe fix).
* core_v0.12.0: no check; the value is never read on a dense model (a warning).

Megatron-LM's `--num-experts 0` counts as no experts. A recipe of a dense model never sets
`moe_layer_freq`, so its default (1, every layer MoE) is used for such jobs; elsewhere an unknown
`moe_layer_freq` keeps the rule silent from 0.18 on. Pass `--megatron-core-version` for an older
release.)md",
    .bad = {"override.yaml",
     "model:\n  moe_ffn_hidden_size: 1536\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {"override.yaml",
     "model:\n  moe_ffn_hidden_size: 1536\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .check = check,
    .checks = "MC G5",
};

}  // namespace mblint
