// train.num_epochs counts passes over a finite fine-tuning dataset; Megatron
// Bridge refuses it for other datasets and other dataloaders.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kNumEpochsUnsupported;

namespace {

constexpr std::string_view kSftDataset = "GPTSFTDatasetConfig";

// The dataset config's class, when known: a dump's _target_, or a
// pretraining recipe's GPTDatasetConfig.
std::optional<std::string> dataset_class(const Job& job, Provenance& where) {
  TextSetting target = config_text(job, "dataset._target_");
  if (target.value) {
    where = target.where;
    size_t dot = target.value->rfind('.');
    return dot == std::string::npos ? *target.value : target.value->substr(dot + 1);
  }
  if (job.recipe && job.recipe->task && std::string_view(job.recipe->task) == "pretrain") {
    where = job.recipe_where;
    where.layer = Layer::Recipe;
    where.origin = fmt::format("recipe {} trains on GPTDatasetConfig (pretraining data)", job.recipe_name);
    return std::string("GPTDatasetConfig");
  }
  return std::nullopt;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  Field epochs = read_field(job, "train.num_epochs");
  if (!epochs.set()) return;
  Provenance dataset_where;
  std::optional<std::string> dataset = dataset_class(job, dataset_where);
  if (dataset && *dataset != kSftDataset) {
    Quantity q = quantity_at("dataset._target_", std::nullopt, dataset_where);
    q.display = *dataset;
    Diagnostic diag = make_diagnostic(kNumEpochsUnsupported,
                                      fmt::format("num_epochs needs a finite fine-tuning dataset (GPTSFTDatasetConfig), "
                                                  "but the dataset is a {}: Megatron Bridge rejects it",
                                                  *dataset),
                                      span_for(epochs.quantity));
    add_notes(diag, {&q}, &epochs.quantity);
    report(out, std::move(diag), "give the training length as train_iters or train_samples for this dataset",
           {set_null_fix(epochs.quantity)});
    return;
  }
  TextSetting loader = config_text(job, "dataset.dataloader_type");
  const ConfigValue* loader_node = config_node(job, "dataset.dataloader_type");
  if (!loader_node || loader_node->is_unknown()) return;  // the dataset's own default ("batch" for SFT)
  std::string value = loader.value.value_or("None");
  if (value == "batch") return;
  Quantity q = quantity_at(loader.path, std::nullopt, loader.where);
  q.display = value;
  report(out,
         finding(kNumEpochsUnsupported,
                 fmt::format("num_epochs works only with dataloader_type \"batch\", not {}",
                             loader.value ? "\"" + value + "\"" : value),
                 {&epochs.quantity, &q}),
         "set dataset.dataloader_type to batch, or give the training length as train_iters");
}

}  // namespace

extern const RuleInfo kNumEpochsUnsupported = {
    .code = "MB614",
    .name = "num-epochs-unsupported",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "num_epochs needs a finite fine-tuning dataset and the batch dataloader",
    .doc = R"md(`train.num_epochs` makes Megatron Bridge compute `train_iters` from the size of the training
dataset. Only a finite `GPTSFTDatasetConfig` has a known size: other dataset providers build as
many samples as they are asked for. `ConfigContainer.validate()` raises at start-up "num_epochs
is only supported for finite GPTSFTDatasetConfig datasets ..." and, for another dataloader,
"num_epochs is currently supported only with dataloader_type=\"batch\"". Pretraining recipes use
`GPTDatasetConfig`, so an epoch count on them fails.)md",
    .bad = {"override.yaml", "train:\n  train_iters: null\n  num_epochs: 2\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  train_iters: 1000\n"},
    .check = check,
    .checks = "BR V14",
};

}  // namespace mblint
