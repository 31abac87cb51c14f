// GPTDatasetConfig / MockGPTDatasetConfig finalize(): fields that must be
// set, and a mock dataset that must not name data.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kDatasetSettings;

namespace {

// The dataset class, when the config says: the dump's (or the file's)
// _target_, else a language-model pretraining recipe (GPTDatasetConfig).
std::string dataset_class(const Job& job) {
  if (const ConfigValue* target = find_path(job.config, "dataset._target_");
      target && target->kind == ValueKind::String) {
    size_t dot = target->text.rfind('.');
    return dot == std::string::npos ? target->text : target->text.substr(dot + 1);
  }
  if (job.recipe && job.recipe->dims && std::string_view(job.recipe->task) == "pretrain") return "GPTDatasetConfig";
  return "";
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  std::string cls = dataset_class(job);
  bool gpt = cls == "GPTDatasetConfig" || cls == "MockGPTDatasetConfig" || cls == "GPTFIMDatasetConfig";
  if (!gpt) return;
  for (std::string_view field : {"reset_position_ids", "reset_attention_mask", "eod_mask_loss"}) {
    Resolved r = resolve(job, fmt::format("dataset.{}", field));
    if (!r.known() || !r.value->is_null()) continue;
    if (!job.config_complete && !written_by_user(r.where())) continue;
    report(out,
           finding(kDatasetSettings,
                   fmt::format("dataset.{} is null: GPTDatasetConfig.finalize() asserts \"{} must be defined.\"", field,
                               field),
                   {&r}),
           fmt::format("set dataset.{} to true or false", field));
  }
  if (job.config_complete) {
    Resolved seq = resolve(job, "dataset.seq_length");
    Resolved sequence = resolve(job, "dataset.sequence_length");
    if (seq.known() && seq.value->is_null() && (!sequence.known() || sequence.value->is_null())) {
      report(
          out,
          finding(
              kDatasetSettings,
              "dataset.seq_length is null: GPTDatasetConfig raises \"Either `seq_length` or `sequence_length` must be "
              "provided.\"",
              {&seq}),
          "set dataset.seq_length (equal to model.seq_length)");
    }
  }
  if (cls != "MockGPTDatasetConfig") return;
  for (std::string_view field : {"blend", "blend_per_split"}) {
    Resolved r = resolve(job, fmt::format("dataset.{}", field));
    if (!is_on(r)) continue;
    report(out,
           finding(kDatasetSettings,
                   fmt::format("a mock dataset (MockGPTDatasetConfig) with dataset.{}: its finalize() raises \"got an "
                               "unexpected keyword argument '{}'\"",
                               field, field),
                   {&r}),
           fmt::format("remove dataset.{}, or use GPTDatasetConfig to train on real data", field));
  }
}

}  // namespace

extern const RuleInfo kDatasetSettings = {
    .code = "MB978",
    .name = "dataset-settings",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "GPT dataset fields finalize() requires (reset flags, seq_length), or a mock dataset given data",
    .doc = R"md(Megatron Bridge's `GPTDatasetConfig` defers Megatron-Core's checks to `finalize()`, run at
start-up. It asserts "reset_position_ids must be defined." (likewise `reset_attention_mask` and
`eod_mask_loss`: Megatron-Core's defaults are `None`, the recipes set them to false), and its
constructor raises "Either `seq_length` or `sequence_length` must be provided." when a dump has
neither. `MockGPTDatasetConfig` (synthetic data) refuses real data: its `finalize()` raises
`TypeError("got an unexpected keyword argument 'blend'")` when `blend` or `blend_per_split` is set.

The dataset class comes from `dataset._target_` (dumps, or a file that names it), or is
`GPTDatasetConfig` for a language-model pretraining recipe. SFT, VLM and other dataset providers
are not checked by this rule.)md",
    .bad = {"override.yaml", "dataset:\n  reset_position_ids: null\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "dataset:\n  reset_position_ids: false\n"},
    .check = check,
    .checks = "BR dataset",
};

}  // namespace mblint
