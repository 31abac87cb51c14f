// Fine-tuning masks the prompt: with context parallelism a rank can hold a
// chunk whose tokens are all masked, and averaging its zero-token loss gives
// NaN. Megatron Bridge requires per-token loss for SFT with CP > 1.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kCpFinetuningNeedsPerTokenLoss;

namespace {

// The dataset is one of the fine-tuning kinds Megatron Bridge checks: a
// dump's class, or the recipe's own dataset for an SFT/PEFT recipe of a
// language model in the catalog.
std::optional<std::string> finetuning_dataset(const Job& job) {
  if (auto cls = dataset_class(job)) {
    for (std::string_view sft : {"GPTSFTDatasetConfig", "FinetuningDatasetConfig", "DirectHFSFTDatasetConfig",
                                 "EnergonDatasetConfig", "MockVLMSFTDatasetConfig"}) {
      if (*cls == sft) return *cls;
    }
    return std::nullopt;
  }
  if (job.config_complete || !job.recipe || !job.recipe->dims) return std::nullopt;
  std::string_view task = job.recipe->task;
  if (task != "sft" && task != "peft") return std::nullopt;
  return fmt::format("the {} recipe's dataset", task == "sft" ? "SFT" : "PEFT");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  // run_recipe.py (and train.sh) set both for fine-tuning with CP > 1.
  if (job.entry == EntryPoint::RunRecipe || job.entry == EntryPoint::TrainSh) return;
  const Quantity& cp = context.derived.context_parallel;
  if (!splits(cp)) return;
  auto dataset = finetuning_dataset(job);
  if (!dataset) return;
  Setting per_token = config_bool(job, "model.calculate_per_token_loss");
  Setting in_collective = config_bool(job, "ddp.average_in_collective");
  // The Qwen3-VL / Qwen3.5-VL providers set it themselves before validate checks it.
  bool loss_wrong = per_token.value && !*per_token.value && !provider_sets_per_token_loss_with_cp(job);
  bool average_wrong = in_collective.value && *in_collective.value;
  if (!loss_wrong && !average_wrong) return;
  const Setting& culprit = loss_wrong ? per_token : in_collective;
  Diagnostic diag = make_diagnostic(
      kCpFinetuningNeedsPerTokenLoss,
      loss_wrong ? fmt::format("fine-tuning ({}) with context_parallel_size {} needs calculate_per_token_loss true: "
                               "Megatron Bridge asserts \"When finetuning with CP>1, calculate_per_token_loss must be "
                               "True\"",
                               *dataset, *cp)
                 : fmt::format("fine-tuning ({}) with context_parallel_size {} needs ddp.average_in_collective false: "
                               "Megatron Bridge asserts \"When finetuning with CP>1, average_in_collective must be "
                               "False\"",
                               *dataset, *cp),
      span_for(culprit).valid() ? span_for(culprit) : span_for(cp));
  add_notes(diag, {&cp}, span_for(culprit).valid() ? nullptr : &cp);
  if (!span_for(culprit).valid()) diag.notes.push_back(note_for(culprit));
  if (loss_wrong && average_wrong) diag.notes.push_back(note_for(in_collective));
  diag.help = "set model.calculate_per_token_loss=true and ddp.average_in_collective=false (run_recipe.py does this "
              "itself for fine-tuning)";
  if (loss_wrong) diag.fixes.push_back(set_setting_fix(per_token, true, FixSafety::Unsafe));
  if (average_wrong) diag.fixes.push_back(set_setting_fix(in_collective, false, FixSafety::Unsafe));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kCpFinetuningNeedsPerTokenLoss = {
    .code = "MB409",
    .name = "cp-finetuning-needs-per-token-loss",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "fine-tuning with CP > 1 needs calculate_per_token_loss and no average_in_collective",
    .doc = R"md(Fine-tuning datasets mask the prompt tokens out of the loss. With context parallelism each rank
holds a chunk of every sequence, and a chunk can contain only masked tokens: averaging the loss
per rank then divides by zero and the loss becomes NaN. Summing per token
(`model.calculate_per_token_loss`) and reducing the sum rather than an average
(`ddp.average_in_collective: false`) avoids it.

Megatron Bridge's `ConfigContainer.validate()` asserts "When finetuning with CP>1,
calculate_per_token_loss must be True" and "... average_in_collective must be False" for the
fine-tuning dataset configs (`GPTSFTDatasetConfig` and its subclasses, `DirectHFSFTDatasetConfig`,
`EnergonDatasetConfig`, `MockVLMSFTDatasetConfig`). `scripts/training/run_recipe.py` (and
`train.sh`) set both automatically when fine-tuning, so launches through them are not affected;
example scripts that take `--config-file` are.

The dataset kind comes from a full dump's `dataset._target_` or from an SFT/PEFT recipe; the
settings must be known to be wrong (written, or a dump's defaults).

The Qwen3-VL and Qwen3.5-VL model providers turn `calculate_per_token_loss` on themselves when
`context_parallel_size > 1` (`finalize` in `models/qwen_vl/qwen3_vl_provider.py` and
`qwen35_vl_provider.py`, from Megatron Bridge v0.5.0), and `ConfigContainer.validate` finalizes the
model before this check, so for them only `average_in_collective` can fail it.)md",
    .bad = {"override.yaml",
     "model:\n  sequence_parallel: true\n  context_parallel_size: 2\n  calculate_per_token_loss: false\n",
     "override.yaml --recipe llama3_8b_sft_config --nodes 1 --gpus-per-node 4"},
    .good = {.content =
     "model:\n  sequence_parallel: true\n  context_parallel_size: 2\n  calculate_per_token_loss: true\nddp:\n  average_in_collective: false\n"},
    .check = check,
    .checks = "BR V4, PS 19",
};

}  // namespace mblint
