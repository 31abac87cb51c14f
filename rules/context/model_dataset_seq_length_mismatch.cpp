// The model and the dataset each carry a sequence length; Megatron Bridge
// requires them to agree.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kModelDatasetSeqLengthMismatch;

namespace {

// The dataset is one of the configs Megatron Bridge compares: a dump's class,
// or a catalog recipe's own dataset for a language model.
bool compared_dataset(const Job& job) {
  if (auto cls = dataset_class(job)) {
    for (std::string_view known : {"GPTDatasetConfig", "GPTFIMDatasetConfig", "MockGPTDatasetConfig",
                                   "GPTSFTDatasetConfig", "FinetuningDatasetConfig", "DirectHFSFTDatasetConfig",
                                   "EnergonDatasetConfig", "MockVLMSFTDatasetConfig"}) {
      if (*cls == known) return true;
    }
    return false;
  }
  return job.recipe && job.recipe->dims;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  Quantity model = config_int(job, "model.seq_length");
  Quantity dataset = config_int(job, "dataset.seq_length");
  if (!model.known() || !dataset.known() || *model == *dataset) return;
  if (!find_path(job.config, "model.seq_length") || !find_path(job.config, "dataset.seq_length")) return;
  if (!compared_dataset(job)) return;
  model.name = "model.seq_length";
  dataset.name = "dataset.seq_length";
  const Quantity& primary = most_specific({&model, &dataset});
  const Quantity& other = &primary == &model ? dataset : model;
  Diagnostic diag = finding_at(
      kModelDatasetSeqLengthMismatch,
      fmt::format("model.seq_length {} and dataset.seq_length {} differ: Megatron Bridge asserts \"Please ensure "
                  "sequence length configuration in model config and dataset config match.\"",
                  *model, *dataset),
      primary, {&model, &dataset});
  report(out, std::move(diag),
         fmt::format("set {} to {} as well (under run_recipe.py, dataset.seq_length alone is enough: it is "
                     "copied into the model)",
                     other.name, *primary),
         {set_value_fix(other, *primary), set_value_fix(primary, *other)});
}

}  // namespace

extern const RuleInfo kModelDatasetSeqLengthMismatch = {
    .code = "MB410",
    .name = "model-dataset-seq-length-mismatch",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "model.seq_length and dataset.seq_length must be equal",
    .doc = R"md(A Megatron Bridge config holds the sequence length twice: `model.seq_length` (what the model,
its position embeddings and context parallelism are built for) and `dataset.seq_length` (how long
the samples are). `ConfigContainer.validate()` asserts they match for the GPT, SFT, direct-HF,
Energon and mock-VLM dataset configs ("Please ensure sequence length configuration in model
config and dataset config match."). The job fails at start-up.

`scripts/training/run_recipe.py` and `train.sh` copy `dataset.seq_length` into the model first
(`--seq_length`/`-sl` sets the dataset), so they never hit it; example and in-house scripts that
take `--config-file` and overrides do, typically when an override changes only one of the two.
Megatron-LM has a single `--seq-length`.)md",
    .bad = {"override.yaml",
     "model:\n  seq_length: 4096\ndataset:\n  seq_length: 8192\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  seq_length: 4096\ndataset:\n  seq_length: 4096\n"},
    .check = check,
    .checks = "BR V2",
};

}  // namespace mblint
